//! [zarr-jpeg patch] Rate–distortion-optimised ("trellis") quantisation of a block's AC
//! coefficients, after mozjpeg's `quantize_trellis` (jcdctmgr.c) with flat distortion
//! weights (its `-tune-psnr`): per block, the quantised values minimising
//! distortion + λ · rate, found by dynamic programming over the position of the previous
//! non-zero coefficient (zero runs with ZRL, and EOB). Integer arithmetic only, so every
//! build (scalar, wasm `simd128`, native) chooses the same values.

use crate::encoder::AlignedBlock;
use crate::huffman::HuffmanTable;
use crate::quantization::QuantizationTable;
use crate::writer::ZIGZAG;

/// Code length assumed for a symbol the rate table gives no code (it could get one in the
/// final, optimised table; a long one, as it is rare so far).
const NO_CODE_BITS: u8 = 16;

/// Bit lengths of an AC table's codes, by symbol (`run << 4 | size`, EOB 0x00, ZRL 0xF0).
#[inline(never)]
pub(crate) fn ac_code_bits(table: &HuffmanTable) -> [u8; 256] {
    let mut bits = [NO_CODE_BITS; 256];
    let values = table.values();
    let mut k = 0;
    for (i, &count) in table.length().iter().enumerate() {
        for _ in 0..count {
            if let Some(&symbol) = values.get(k) {
                bits[usize::from(symbol)] = i as u8 + 1;
            }
            k += 1;
        }
    }
    bits
}

/// The AC code lengths an optimised table would give the symbol counts `freq` (every
/// symbol a baseline AC table can hold counted once more, so that each has a code).
pub(crate) fn ac_code_bits_of_counts(freq: &[u32]) -> [u8; 256] {
    let mut counts = [0u32; 257];
    for (symbol, count) in counts.iter_mut().enumerate().take(256) {
        let size = symbol & 15;
        if symbol == 0 || symbol == 0xF0 || (1..=10).contains(&size) {
            *count = freq.get(symbol).copied().unwrap_or(0).saturating_add(1);
        }
    }
    counts[256] = 1;
    ac_code_bits(&HuffmanTable::new_optimized(counts))
}

/// The block `coefficients` (FDCT output in natural order, scaled by 8 as the quantisation
/// table is) quantised with `table`: DC as usual, AC by rate–distortion optimisation in
/// zig-zag order (the layout `Operations::encode_block` returns). Distortion is the squared
/// error of each coefficient (scaled by 64, as `lambda` is), rate the AC code lengths `bits`
/// plus the magnitude bits. Candidates per position are the rounded value, the value one
/// step toward zero where that takes a bit off its size (elsewhere it cannot win: more
/// distortion at the same rate), and zero; a coefficient that rounds to zero stays zero.
pub(crate) fn quantize(
    coefficients: &AlignedBlock,
    table: &QuantizationTable,
    bits: &[u8; 256],
    lambda: i64,
) -> AlignedBlock {
    let mut out = AlignedBlock::default();
    out.data[0] = table.quantize(coefficients.data[0], 0);

    // zeroed[i]: distortion of zeroing positions 1..=i.
    let mut zeroed = [0i64; 64];
    // For each position that rounds to a non-zero value: the least cost of the block up to
    // it with it the last non-zero coefficient, the value it takes, the previous such one.
    let mut cost = [0i64; 64];
    let mut value = [0i16; 64];
    let mut previous = [0u8; 64];
    let mut candidates = [0u8; 64];
    let mut n = 1; // candidates[0] = 0: the DC coefficient, before every run (n ≤ 63)
    let zrl = lambda * i64::from(bits[0xF0]);
    for i in 1..64 {
        let z = usize::from(ZIGZAG[i]) & 63;
        let x = i64::from(coefficients.data[z]).abs();
        let step = i64::from(table.step(z));
        zeroed[i] = zeroed[i - 1] + x * x;
        let rounded = table.quantize(coefficients.data[z], z);
        let a = rounded.unsigned_abs();
        if a == 0 {
            continue;
        }
        let size = 16 - a.leading_zeros();
        let error = |a: u16| (x - i64::from(a) * step).pow(2);
        // (magnitude, size, distortion) of the rounded value and of the one below it
        let first = (a, size, error(a));
        let second = if a >= 2 && a.is_power_of_two() {
            (a - 1, size - 1, error(a - 1))
        } else {
            first
        };
        let mut best = (i64::MAX, 0u16, 0u8);
        for &j in candidates.iter().take(n) {
            let j = usize::from(j) & 63;
            let run = i - j - 1;
            let base = cost[j] + zeroed[i - 1] - zeroed[j] + zrl * (run >> 4) as i64;
            for (a, size, distortion) in [first, second] {
                let symbol = (run & 15) << 4 | size as usize;
                let rate = i64::from(bits[symbol & 255]) + i64::from(size);
                let total = base + distortion + lambda * rate;
                if total < best.0 {
                    best = (total, a, j as u8);
                }
            }
        }
        cost[i] = best.0;
        value[i] = if rounded < 0 { -(best.1 as i16) } else { best.1 as i16 };
        previous[i] = best.2;
        candidates[n & 63] = i as u8;
        n += 1;
    }

    // The block ends after the last non-zero coefficient: EOB unless that is position 63.
    let eob = lambda * i64::from(bits[0]);
    let mut end = 0;
    let mut best = zeroed[63] + eob;
    for &i in candidates.iter().take(n).skip(1) {
        let i = usize::from(i) & 63;
        let total = cost[i] + zeroed[63] - zeroed[i] + if i < 63 { eob } else { 0 };
        if total < best {
            best = total;
            end = i;
        }
    }
    while end > 0 {
        out.data[end] = value[end];
        end = usize::from(previous[end]) & 63;
    }
    out
}
