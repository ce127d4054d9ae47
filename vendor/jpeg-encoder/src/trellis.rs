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
/// final, optimised table; a long one, as it is rare there).
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

/// The rate model of trellis quantisation per AC table (`Component::ac_huffman_table`):
/// λ · (code length + magnitude bits) of every AC symbol, λ being that of the components
/// coded with the table; off (`block` gives `None`) unless made with `on`.
pub(crate) struct Trellis {
    on: bool,
    costs: [Costs; 2],
}

impl Trellis {
    /// λ per AC table, and the rate model from `tables`' code lengths.
    pub(crate) fn new(on: bool, lambda: [i64; 2], tables: [&HuffmanTable; 2]) -> Trellis {
        let none = || Costs { symbol: [0; 256], spread: 0 };
        let mut trellis = Trellis { on, costs: [none(), none()] };
        if on {
            for (t, table) in tables.iter().enumerate() {
                trellis.costs[t].set(lambda[t], &ac_code_bits(table));
            }
        }
        trellis
    }

    /// The rate model of a block coded with AC table `t`, if trellis quantisation is on.
    #[inline(always)]
    pub(crate) fn block(&self, t: u8) -> Option<&Costs> {
        self.on.then(|| &self.costs[usize::from(t & 1)])
    }
}

/// λ · (code length + magnitude bits) of each AC symbol of a table, and the spread of those
/// of the symbols with a magnitude (sizes 1 to 10).
pub(crate) struct Costs {
    symbol: [i32; 256],
    spread: i64,
}

impl Costs {
    fn set(&mut self, lambda: i64, bits: &[u8; 256]) {
        let (mut least, mut most) = (i32::MAX, 0);
        for (symbol, cost) in self.symbol.iter_mut().enumerate() {
            *cost = (lambda * i64::from(bits[symbol] + (symbol & 15) as u8)) as i32;
            if (1..=10).contains(&(symbol & 15)) {
                (least, most) = (least.min(*cost), most.max(*cost));
            }
        }
        self.spread = i64::from(most - least);
    }
}

/// The block `coefficients` (FDCT output in natural order, scaled by 8 as the quantisation
/// table is) quantised with `table`: DC as usual, AC by rate–distortion optimisation in
/// zig-zag order (the layout `Operations::encode_block` returns). Distortion is the squared
/// error of each coefficient (scaled by 64, as λ is), rate cost `costs` per symbol (λ · its
/// code length and magnitude bits, `Trellis`). Candidates per position are the rounded value,
/// the value one step toward zero where that takes a bit off its size (elsewhere it cannot
/// win: more distortion at the same rate), and zero; a coefficient that rounds to zero stays
/// zero. For speed, the positions that can end a zero run are kept in compact arrays, each
/// with the least cost of the block up to it minus the zeroing distortion up to it, so the
/// inner loop is a look-up and two adds per earlier position; and an earlier position whose
/// such cost exceeds a later one's by more than the spread of the symbol costs is dropped
/// from the inner loop for good (a run from it is no shorter, so its ZRLs no fewer, and its
/// symbol at most the spread cheaper: it can never be the best predecessor again), which
/// leaves the same choices.
#[inline(never)]
pub(crate) fn quantize(coefficients: &AlignedBlock, table: &QuantizationTable, costs: &Costs) -> AlignedBlock {
    let (spread, costs) = (costs.spread, &costs.symbol);
    let mut out = AlignedBlock::default();
    out.data[0] = table.quantize(coefficients.data[0], 0);

    // Positions that round to a non-zero value, in order, position 0 (the DC coefficient,
    // before every run) first: the position, its least cost (block up to it, it the last
    // non-zero coefficient) minus the distortion of zeroing 1..=it, the value it takes, and
    // the index of the previous non-zero coefficient on that path.
    let mut position = [0u8; 64];
    let mut base = [0i64; 64];
    let mut value = [0i16; 64];
    let mut previous = [0u8; 64];
    let mut n = 1;
    // the entries still worth trying as predecessors
    let mut live = [0u8; 64];
    let mut live_n = 1;
    let zrl = i64::from(costs[0xF0]);

    // The positions that round to non-zero, in zig-zag order, each with the distortion of
    // zeroing the positions before it, collected in a branch-free pass: a branch per
    // position on whether it is zero is mispredicted often.
    let mut rounded = [0i16; 64]; // in zig-zag order
    let mut nonzero = [0u8; 64];
    let mut zeroed_before = [0i64; 64];
    let mut count = 0;
    let mut zeroed = 0i64;
    for i in 1..64 {
        let z = usize::from(ZIGZAG[i]) & 63;
        let x = i64::from(coefficients.data[z]);
        let r = table.quantize(coefficients.data[z], z);
        rounded[i] = r;
        nonzero[count & 63] = i as u8;
        zeroed_before[count & 63] = zeroed;
        zeroed += x * x;
        count += usize::from(r != 0);
    }

    for m in 0..count.min(63) {
        let i = usize::from(nonzero[m]);
        let z = usize::from(ZIGZAG[i & 63]) & 63;
        let x = i64::from(coefficients.data[z]).abs();
        let before = zeroed_before[m]; // zeroing 1..i-1
        let zeroed = before + x * x; // zeroing 1..i
        let rounded = rounded[i & 63];
        let a = rounded.unsigned_abs();
        let step = i64::from(table.step(z));
        let size = 16 - a.leading_zeros();
        let error = |a: u16| (x - i64::from(a) * step).pow(2);
        // the value below, where it is a size smaller: its extra distortion
        let lower = a >= 2 && a.is_power_of_two();
        let extra = if lower { error(a - 1) - error(a) } else { i64::MAX / 4 };
        let (mut best, mut best_k, mut best_lower) = (i64::MAX, 0, false);
        for &k in live.iter().take(live_n) {
            let k = usize::from(k) & 63;
            let run = i - 1 - usize::from(position[k]);
            let start = base[k] + zrl * (run >> 4) as i64;
            let symbol = (run & 15) << 4 | size as usize;
            let c = start + i64::from(costs[symbol & 255]);
            if c < best {
                (best, best_k, best_lower) = (c, k, false);
            }
            if lower {
                let c = start + i64::from(costs[(symbol - 1) & 255]) + extra;
                if c < best {
                    (best, best_k, best_lower) = (c, k, true);
                }
            }
        }
        let k = n & 63;
        position[k] = i as u8;
        base[k] = best + before + error(a) - zeroed;
        let a = a - u16::from(best_lower);
        value[k] = if rounded < 0 { -(a as i16) } else { a as i16 };
        previous[k] = best_k as u8;
        n += 1;
        let bound = base[k] + spread;
        let mut kept = 0;
        for j in 0..live_n.min(63) {
            let e = live[j];
            if base[usize::from(e) & 63] <= bound {
                live[kept] = e;
                kept += 1;
            }
        }
        live[kept & 63] = k as u8;
        live_n = kept + 1;
    }

    // The block ends after the last non-zero coefficient: EOB unless that is position 63.
    let eob = i64::from(costs[0]);
    let (mut end, mut best) = (0, eob); // all AC zero (the total minus `zeroed`)
    for k in 1..n.min(64) {
        let total = base[k] + if position[k] < 63 { eob } else { 0 };
        if total < best {
            (best, end) = (total, k);
        }
    }
    while end > 0 {
        out.data[usize::from(position[end]) & 63] = value[end];
        end = usize::from(previous[end]) & 63;
    }
    out
}
