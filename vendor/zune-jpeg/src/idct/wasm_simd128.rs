/*
 * Copyright (c) 2023.
 *
 * This software is free software;
 *
 * You can redistribute it or modify it under terms of the MIT, Apache License or Zlib license
 */

//! WebAssembly `simd128` IDCT (zarr-jpeg patch).
//!
//! A translation of the NEON kernel (`neon.rs`), itself a translation of the scalar code:
//! the same integer operations in the same order, with wrapping 32-bit lanes, so the
//! output is bit-identical to `scalar::idct_int` / `scalar::idct4x4` for every input
//! (including hostile coefficients that overflow: wasm `i32x4` add/sub/mul wrap exactly
//! like `wrapping_*`, shifts are arithmetic, and the final saturating narrow + clamp to
//! 0..=255 equals the scalar `i32::clamp`).
//!
//! Compiled only into modules built with `-C target-feature=+simd128`.

#![cfg(all(target_arch = "wasm32", target_feature = "simd128"))]

use core::arch::wasm32::*;

const SCALE_BITS: i32 = 512 + 65536 + (128 << 17);

/// One row of eight `i32` coefficients: columns 0..4 and 4..8.
#[derive(Clone, Copy)]
struct Row(v128, v128);

/// Transposes the 4×4 block held in `a, b, c, d` (one row each).
#[inline(always)]
fn transpose4(a: v128, b: v128, c: v128, d: v128) -> [v128; 4] {
    let t0 = i32x4_shuffle::<0, 4, 1, 5>(a, b);
    let t1 = i32x4_shuffle::<2, 6, 3, 7>(a, b);
    let t2 = i32x4_shuffle::<0, 4, 1, 5>(c, d);
    let t3 = i32x4_shuffle::<2, 6, 3, 7>(c, d);
    [
        i64x2_shuffle::<0, 2>(t0, t2),
        i64x2_shuffle::<1, 3>(t0, t2),
        i64x2_shuffle::<0, 2>(t1, t3),
        i64x2_shuffle::<1, 3>(t1, t3),
    ]
}

#[inline(always)]
fn transpose8(r: &mut [Row; 8]) {
    let lo_lo = transpose4(r[0].0, r[1].0, r[2].0, r[3].0);
    let lo_hi = transpose4(r[4].0, r[5].0, r[6].0, r[7].0);
    let hi_lo = transpose4(r[0].1, r[1].1, r[2].1, r[3].1);
    let hi_hi = transpose4(r[4].1, r[5].1, r[6].1, r[7].1);
    for j in 0..4 {
        r[j] = Row(lo_lo[j], lo_hi[j]);
        r[j + 4] = Row(hi_lo[j], hi_hi[j]);
    }
}

/// One 1-D pass over eight rows of four columns (the scalar code's column loop, four
/// columns at once). Eight-wide rows are done as two four-wide halves so that the live
/// vectors fit the 16 registers of x86-64 engines instead of spilling.
#[inline(always)]
fn pass4(r: [v128; 8], bias: i32, shift: u32) -> [v128; 8] {
    let [row0, row1, row2, row3, row4, row5, row6, row7] = r;
    let c = |k: i32| i32x4_splat(k);
    // even part
    let p1 = i32x4_mul(i32x4_add(row2, row6), c(2217));
    let t2 = i32x4_add(p1, i32x4_mul(row6, c(-7567)));
    let t3 = i32x4_add(p1, i32x4_mul(row2, c(3135)));

    let t0 = i32x4_shl(i32x4_add(row0, row4), 12);
    let t1 = i32x4_shl(i32x4_sub(row0, row4), 12);

    let x0 = i32x4_add(i32x4_add(t0, t3), c(bias));
    let x3 = i32x4_add(i32x4_sub(t0, t3), c(bias));
    let x1 = i32x4_add(i32x4_add(t1, t2), c(bias));
    let x2 = i32x4_add(i32x4_sub(t1, t2), c(bias));

    // odd part
    let p3 = i32x4_add(row7, row3);
    let p4 = i32x4_add(row5, row1);
    let p1 = i32x4_add(row7, row1);
    let p2 = i32x4_add(row5, row3);
    let p5 = i32x4_mul(i32x4_add(p3, p4), c(4816));

    let t0 = i32x4_mul(row7, c(1223));
    let t1 = i32x4_mul(row5, c(8410));
    let t2 = i32x4_mul(row3, c(12586));
    let t3 = i32x4_mul(row1, c(6149));

    let p1 = i32x4_add(p5, i32x4_mul(p1, c(-3685)));
    let p2 = i32x4_add(p5, i32x4_mul(p2, c(-10497)));
    let p3 = i32x4_mul(p3, c(-8034));
    let p4 = i32x4_mul(p4, c(-1597));

    let t3 = i32x4_add(t3, i32x4_add(p1, p4));
    let t2 = i32x4_add(t2, i32x4_add(p2, p3));
    let t1 = i32x4_add(t1, i32x4_add(p2, p4));
    let t0 = i32x4_add(t0, i32x4_add(p1, p3));

    [
        i32x4_shr(i32x4_add(x0, t3), shift),
        i32x4_shr(i32x4_add(x1, t2), shift),
        i32x4_shr(i32x4_add(x2, t1), shift),
        i32x4_shr(i32x4_add(x3, t0), shift),
        i32x4_shr(i32x4_sub(x3, t0), shift),
        i32x4_shr(i32x4_sub(x2, t1), shift),
        i32x4_shr(i32x4_sub(x1, t2), shift),
        i32x4_shr(i32x4_sub(x0, t3), shift),
    ]
}

/// One 1-D pass over the eight rows, as two halves of four columns.
#[inline(always)]
fn pass(r: &mut [Row; 8], bias: i32, shift: u32) {
    let lo = pass4([r[0].0, r[1].0, r[2].0, r[3].0, r[4].0, r[5].0, r[6].0, r[7].0], bias, shift);
    let hi = pass4([r[0].1, r[1].1, r[2].1, r[3].1, r[4].1, r[5].1, r[6].1, r[7].1], bias, shift);
    for i in 0..8 {
        r[i] = Row(lo[i], hi[i]);
    }
}

/// An output block checked once: all eight rows, `out[i * stride..][..8]` for `i` in `0..8`,
/// lie in `out`, so its stores need no further check.
struct Block<'a> {
    out: &'a mut [i16],
    stride: usize,
}

impl<'a> Block<'a> {
    #[inline(always)]
    fn new(out: &'a mut [i16], stride: usize) -> Option<Block<'a>> {
        let end = stride.checked_mul(7)?.checked_add(8)?;
        (end <= out.len()).then_some(Block { out, stride })
    }

    /// Stores eight samples as row `i % 8` of the block.
    #[inline(always)]
    fn store(&mut self, i: usize, v: v128) {
        let pos = (i % 8) * self.stride;
        // SAFETY: `pos + 8 <= 7 * stride + 8 <= out.len()` (checked in `new`); v128 stores
        // need no alignment.
        unsafe { v128_store(self.out.as_mut_ptr().add(pos).cast::<v128>(), v) }
    }
}

/// The block that `kernel` writes at stride 8 into a scratch block, copied row by row into
/// `out` at `stride`, dropping the rows that do not fit (as the scalar code does, writing
/// them to a scratch array).
///
/// The kernels check once per block (`Block::new`), before computing anything, and send the
/// blocks that do not fit here. A check per row was slower than it looks: V8 11 (Node 20) "splits" the pure
/// arithmetic feeding each conditional store into that store's branch, so it ran the IDCT
/// six times over (Node decoded at half of Chromium's speed; `--no-turbo-splitting` gave it
/// back).
#[cold]
#[inline(never)]
fn short_output(
    kernel: fn(&mut [i32; 64], &mut [i16], usize),
    in_vector: &mut [i32; 64],
    out: &mut [i16],
    stride: usize,
) {
    let mut block = [0i16; 64];
    kernel(in_vector, &mut block, 8);
    for (i, row) in block.chunks_exact(8).enumerate() {
        let pos = stride.wrapping_mul(i);
        if let Some(dst) = out.get_mut(pos..pos.wrapping_add(8)) {
            dst.copy_from_slice(row);
        }
    }
}

#[inline(always)]
fn load(in_vector: &[i32; 64], at: usize) -> v128 {
    debug_assert!(at + 4 <= 64);
    // SAFETY: every caller passes `at` ≤ 60, so 4 i32 = 16 bytes are in bounds.
    unsafe { v128_load(in_vector.as_ptr().add(at).cast::<v128>()) }
}

/// A block whose 63 AC coefficients are zero: every sample is the DC term's (the scalar
/// code's `idct_int_1x1`).
#[inline(always)]
fn flat_block(dc: i32, out: &mut Block<'_>) {
    let dc = dc.wrapping_add(4).wrapping_add(1024) >> 3;
    let v = i16x8_splat(dc.clamp(0, 255) as i16);
    for i in 0..8 {
        out.store(i, v);
    }
}

/// Full 8×8 IDCT, bit-identical to `scalar::idct_int`. Leaves `in_vector` unchanged
/// (the caller clears it before the next block), so it also upholds the contract of the
/// 4×4 IDCT: an input whose coefficients outside the top-left 4×4 are zero gives exactly
/// `scalar::idct4x4`'s output (that function is the same arithmetic with the zero terms
/// dropped) and the zeros stay zero.
pub fn idct_wasm_simd(in_vector: &mut [i32; 64], out_vector: &mut [i16], stride: usize) {
    let Some(mut out) = Block::new(out_vector, stride) else {
        return short_output(idct_wasm_simd, in_vector, out_vector, stride);
    };
    let mut r = [Row(i32x4_splat(0), i32x4_splat(0)); 8];
    for (i, row) in r.iter_mut().enumerate() {
        *row = Row(load(in_vector, i * 8), load(in_vector, i * 8 + 4));
    }

    // All 63 AC coefficients zero: the block is flat (the scalar code's idct_int_1x1).
    let ac_row0 = v128_and(r[0].0, i32x4(0, -1, -1, -1));
    let mut or = v128_or(ac_row0, r[0].1);
    for row in &r[1..] {
        or = v128_or(or, v128_or(row.0, row.1));
    }
    if !v128_any_true(or) {
        return flat_block(in_vector[0], &mut out);
    }

    pass(&mut r, 512, 10);
    transpose8(&mut r);
    pass(&mut r, SCALE_BITS, 17);
    transpose8(&mut r);

    let zero = i16x8_splat(0);
    let max = i16x8_splat(255);
    for (i, row) in r.iter().enumerate() {
        let v = i16x8_narrow_i32x4(row.0, row.1);
        let v = i16x8_min(i16x8_max(v, zero), max);
        out.store(i, v);
    }
}

/// The largest coefficient magnitude the `i16` path takes: with every input within
/// ±`I16_PATH_LIMIT`, each first-pass output, `(Σ wₖ·cₖ + 512) >> 10` with the weights of
/// `WEIGHTS` (whose absolute values sum to at most 30,610 per output), lies within
/// ±32,762, so it is exact in an `i16` lane for the second pass. 1,097 would not be.
const I16_PATH_LIMIT: i16 = 1096;
const _: () = {
    let bound = (max_weight_sum() * I16_PATH_LIMIT as i32 + 512) >> 10;
    assert!(bound <= i16::MAX as i32 && -bound - 1 >= i16::MIN as i32);
};

/// Full 8×8 IDCT, bit-identical to `scalar::idct_int` and `idct_wasm_simd`, with the
/// same contract (`in_vector` is left unchanged), faster: blocks whose coefficients all
/// lie within ±`I16_PATH_LIMIT` (every block of a valid 8-bit stream but extreme ones)
/// are transformed in 16-bit lanes (`idct_i16`), the rest, which only hostile or unusual
/// streams produce, by `idct_wasm_simd`. About 0.9 KB gzip more code than that kernel
/// alone, so zarr-jpeg calls it only in its decode-only modules (`src/baseline/idct.rs`).
pub fn idct_i16_wasm_simd(in_vector: &mut [i32; 64], out_vector: &mut [i16], stride: usize) {
    let Some(mut out) = Block::new(out_vector, stride) else {
        return short_output(idct_i16_wasm_simd, in_vector, out_vector, stride);
    };
    // Saturating narrows: a lane is zero exactly when its coefficient is, and within the
    // limit exactly when its coefficient is.
    let mut rows = [i16x8_splat(0); 8];
    for (i, row) in rows.iter_mut().enumerate() {
        *row = i16x8_narrow_i32x4(load(in_vector, i * 8), load(in_vector, i * 8 + 4));
    }

    // All 63 AC coefficients zero: the block is flat (the scalar code's idct_int_1x1).
    let mut or = v128_and(rows[0], i16x8(0, -1, -1, -1, -1, -1, -1, -1));
    for row in &rows[1..] {
        or = v128_or(or, *row);
    }
    if !v128_any_true(or) {
        return flat_block(in_vector[0], &mut out);
    }

    let mut largest = i16x8_abs(rows[0]);
    for row in &rows[1..] {
        largest = u16x8_max(largest, i16x8_abs(*row));
    }
    if v128_any_true(u16x8_gt(largest, i16x8_splat(I16_PATH_LIMIT))) {
        return idct_wasm_simd(in_vector, out.out, out.stride);
    }
    idct_i16(rows, &mut out);
}

/// Lanes 0..4 of `a` and `b`, interleaved: `a0 b0 a1 b1 a2 b2 a3 b3`.
#[inline(always)]
fn zip_lo16(a: v128, b: v128) -> v128 {
    i16x8_shuffle::<0, 8, 1, 9, 2, 10, 3, 11>(a, b)
}

/// Lanes 4..8 of `a` and `b`, interleaved.
#[inline(always)]
fn zip_hi16(a: v128, b: v128) -> v128 {
    i16x8_shuffle::<4, 12, 5, 13, 6, 14, 7, 15>(a, b)
}

/// `scalar::idct_int`'s 1-D pass as sums of products, each output `x ± t` with the even
/// sum `x` from inputs 0, 2, 4, 6 and the odd sum `t` from 1, 3, 5, 7: as weight pairs for
/// `i32x4_dot_i16x8` on interleaved inputs `(in0, in4)`, `(in2, in6)`, `(in1, in5)`,
/// `(in3, in7)`. Even: `4096·(in0 ± in4)`, then on `(in2, in6)` the `t3` and `t2` of the
/// scalar code. Odd, on `(in1, in5)` and `(in3, in7)` in turn: its `t3`, `t2`, `t1`, `t0`
/// (its products of `p1`…`p5` multiplied out).
const WEIGHTS: [(i16, i16); 12] = [
    (4096, 4096),
    (4096, -4096),
    (5352, 2217),
    (2217, -5350),
    (5683, 3219),
    (4816, 1131),
    (4816, -5681),
    (-1129, -3218),
    (3219, 1132),
    (-5681, 4816),
    (1131, 4816),
    (-3218, -5680),
];

/// The largest sum of absolute weights of one output of `half_pass`.
const fn max_weight_sum() -> i32 {
    const fn abs(pair: (i16, i16)) -> i32 {
        (pair.0 as i32).abs() + (pair.1 as i32).abs()
    }
    let mut max = 0;
    let mut even = 0;
    while even < 2 {
        let x = abs(WEIGHTS[even]) + abs(WEIGHTS[2 + even]);
        let mut odd = 0;
        while odd < 4 {
            let sum = x + abs(WEIGHTS[4 + 2 * odd]) + abs(WEIGHTS[5 + 2 * odd]);
            if sum > max {
                max = sum;
            }
            odd += 1;
        }
        even += 1;
    }
    max
}

/// One 1-D pass of `scalar::idct_int` on four lanes, from its eight inputs paired as
/// `(in0, in4), (in1, in5), (in2, in6), (in3, in7)` in each 32-bit lane: each output is
/// `(Σ wₖ·inₖ + BIAS) >> SHIFT` (`WEIGHTS`), the scalar code's sums of products multiplied
/// out. In wrapping 32-bit arithmetic the two are the same sum, so the outputs are the
/// same bits; the products are exact because inputs and weights fit in `i16`
/// (`i32x4_dot_i16x8`). Returns the outputs saturated to `i16` in pairs:
/// `[out0 | out1]`, `[out2 | out3]`, `[out4 | out5]`, `[out6 | out7]`, so that one half's
/// results take four registers while the other half is computed.
#[inline(always)]
fn half_pass<const BIAS: i32, const SHIFT: u32>(
    p04: v128,
    p15: v128,
    p26: v128,
    p37: v128,
) -> [v128; 4] {
    let w = |k: usize| {
        let (a, b) = WEIGHTS[k];
        i16x8(a, b, a, b, a, b, a, b)
    };
    let dot = i32x4_dot_i16x8;
    // even part: t0 ± t3, t1 ± t2
    let e0 = i32x4_add(dot(p04, w(0)), i32x4_splat(BIAS));
    let e1 = i32x4_add(dot(p04, w(1)), i32x4_splat(BIAS));
    let t3 = dot(p26, w(2));
    let t2 = dot(p26, w(3));
    let x0 = i32x4_add(e0, t3);
    let x3 = i32x4_sub(e0, t3);
    let x1 = i32x4_add(e1, t2);
    let x2 = i32x4_sub(e1, t2);
    // odd part: the four sums over in1, in3, in5, in7
    let t3 = i32x4_add(dot(p15, w(4)), dot(p37, w(5)));
    let t2 = i32x4_add(dot(p15, w(6)), dot(p37, w(7)));
    let t1 = i32x4_add(dot(p15, w(8)), dot(p37, w(9)));
    let t0 = i32x4_add(dot(p15, w(10)), dot(p37, w(11)));
    let out = |a: v128, b: v128| i16x8_narrow_i32x4(i32x4_shr(a, SHIFT), i32x4_shr(b, SHIFT));
    [
        out(i32x4_add(x0, t3), i32x4_add(x1, t2)),
        out(i32x4_add(x2, t1), i32x4_add(x3, t0)),
        out(i32x4_sub(x3, t0), i32x4_sub(x2, t1)),
        out(i32x4_sub(x1, t2), i32x4_sub(x0, t3)),
    ]
}

/// The 8×8 IDCT of a block whose coefficients (`rows`, one row each) lie within
/// ±`I16_PATH_LIMIT`, in 16-bit lanes: bit-identical to the 32-bit passes on such blocks
/// (`half_pass`), with half the lanes' worth of work and no 32-bit multiplies.
#[inline(always)]
fn idct_i16(rows: [v128; 8], out: &mut Block<'_>) {
    // First pass, down the columns (rows k and k+4 paired), for columns 0..4 and 4..8.
    // Exact in 16 bits: within ±32,762 (`I16_PATH_LIMIT`). `q[h][j]` holds rows 2j and
    // 2j+1 of the result, four columns each.
    let lo = [0, 1, 2, 3].map(|k| zip_lo16(rows[k], rows[k + 4]));
    let hi = [0, 1, 2, 3].map(|k| zip_hi16(rows[k], rows[k + 4]));
    let q = [
        half_pass::<512, 10>(lo[0], lo[1], lo[2], lo[3]),
        half_pass::<512, 10>(hi[0], hi[1], hi[2], hi[3]),
    ];
    // Row y with its columns paired (u, u+4) in each 32-bit lane, then those lanes
    // gathered across rows 0..4 and 4..8: the second pass's paired inputs.
    let a = [0, 1, 2, 3].map(|j| [zip_lo16(q[0][j], q[1][j]), zip_hi16(q[0][j], q[1][j])]);
    let top = transpose4(a[0][0], a[0][1], a[1][0], a[1][1]);
    let bottom = transpose4(a[2][0], a[2][1], a[3][0], a[3][1]);
    // Second pass, along the rows. `r[h][j]` holds columns 2j and 2j+1 of rows 4h..4h+4.
    let r = [
        half_pass::<SCALE_BITS, 17>(top[0], top[1], top[2], top[3]),
        half_pass::<SCALE_BITS, 17>(bottom[0], bottom[1], bottom[2], bottom[3]),
    ];
    let zero = i16x8_splat(0);
    let max = i16x8_splat(255);
    for (h, r) in r.iter().enumerate() {
        let v = r.map(|v| i16x8_min(i16x8_max(v, zero), max));
        // Back to rows: columns (0, 2), (1, 3), (4, 6), (5, 7) interleaved, then 0..4 and 4..8.
        let z0 = zip_lo16(v[0], v[1]);
        let z1 = zip_hi16(v[0], v[1]);
        let z2 = zip_lo16(v[2], v[3]);
        let z3 = zip_hi16(v[2], v[3]);
        let w0 = zip_lo16(z0, z1); // rows 0, 1 of the four, columns 0..4
        let w1 = zip_hi16(z0, z1); // rows 2, 3
        let w2 = zip_lo16(z2, z3); // rows 0, 1, columns 4..8
        let w3 = zip_hi16(z2, z3);
        out.store(4 * h, i64x2_shuffle::<0, 2>(w0, w2));
        out.store(4 * h + 1, i64x2_shuffle::<1, 3>(w0, w2));
        out.store(4 * h + 2, i64x2_shuffle::<0, 2>(w1, w3));
        out.store(4 * h + 3, i64x2_shuffle::<1, 3>(w1, w3));
    }
}

/// 4×4 IDCT (only the top-left 4×4 coefficients may be non-zero; they are left as they
/// are and the rest stays zero, the contract of `choose_idct_4x4_func`). Bit-identical
/// to `scalar::idct4x4`: the first pass runs on the four non-zero columns only (one
/// vector per row), the second on all eight rows with the four non-zero inputs.
pub fn idct4x4_wasm_simd(in_vector: &mut [i32; 64], out_vector: &mut [i16], stride: usize) {
    let Some(mut out) = Block::new(out_vector, stride) else {
        return short_output(idct4x4_wasm_simd, in_vector, out_vector, stride);
    };
    // Rows 0..4, columns 0..4.
    let i0 = load(in_vector, 0);
    let i1 = load(in_vector, 8);
    let i2 = load(in_vector, 16);
    let i3 = load(in_vector, 24);

    // Vertical pass (scalar idct4x4, first loop), four columns at once.
    let c = |k: i32| i32x4_splat(k);
    let a0 = i32x4_add(i32x4_shl(i0, 12), c(512));
    let p1 = i32x4_mul(i2, c(2217));
    let p3 = i32x4_mul(i2, c(5352));
    let x0 = i32x4_add(a0, p3);
    let x1 = i32x4_add(a0, p1);
    let x2 = i32x4_sub(a0, p1);
    let x3 = i32x4_sub(a0, p3);
    // odd part: i4 = row 3, i3 = row 1
    let p5 = i32x4_mul(i32x4_add(i3, i1), c(4816));
    let q1 = i32x4_add(p5, i32x4_mul(i1, c(-3685)));
    let q2 = i32x4_add(p5, i32x4_mul(i3, c(-10497)));
    let t3 = i32x4_add(p5, i32x4_mul(i1, c(867)));
    let t2 = i32x4_add(p5, i32x4_mul(i3, c(-5945)));
    let t1 = i32x4_add(q2, i32x4_mul(i1, c(-1597)));
    let t0 = i32x4_add(q1, i32x4_mul(i3, c(-8034)));
    let v = [
        i32x4_shr(i32x4_add(x0, t3), 10),
        i32x4_shr(i32x4_add(x1, t2), 10),
        i32x4_shr(i32x4_add(x2, t1), 10),
        i32x4_shr(i32x4_add(x3, t0), 10),
        i32x4_shr(i32x4_sub(x3, t0), 10),
        i32x4_shr(i32x4_sub(x2, t1), 10),
        i32x4_shr(i32x4_sub(x1, t2), 10),
        i32x4_shr(i32x4_sub(x0, t3), 10),
    ];

    // Columns of the 8×4 intermediate as vectors over rows 0..4 and 4..8.
    let lo = transpose4(v[0], v[1], v[2], v[3]);
    let hi = transpose4(v[4], v[5], v[6], v[7]);

    // Horizontal pass (scalar idct4x4, second loop), rows 0..4 and 4..8 at once.
    let horizontal = |col: &[v128; 4]| -> [v128; 8] {
        let [h0, h1, h2, h3] = *col;
        let t0 = i32x4_add(i32x4_shl(h0, 12), c(SCALE_BITS));
        let t2 = i32x4_mul(h2, c(2217));
        let t3 = i32x4_mul(h2, c(5352));
        let x0 = i32x4_add(t0, t3);
        let x3 = i32x4_sub(t0, t3);
        let x1 = i32x4_add(t0, t2);
        let x2 = i32x4_sub(t0, t2);
        let p5 = i32x4_mul(i32x4_add(h3, h1), c(4816));
        let p1 = i32x4_add(p5, i32x4_mul(h1, c(-3685)));
        let p2 = i32x4_add(p5, i32x4_mul(h3, c(-10497)));
        let t3 = i32x4_add(p5, i32x4_mul(h1, c(867)));
        let t2 = i32x4_add(p5, i32x4_mul(h3, c(-5945)));
        let t1 = i32x4_add(p2, i32x4_mul(h1, c(-1597)));
        let t0 = i32x4_add(p1, i32x4_mul(h3, c(-8034)));
        [
            i32x4_shr(i32x4_add(x0, t3), 17),
            i32x4_shr(i32x4_add(x1, t2), 17),
            i32x4_shr(i32x4_add(x2, t1), 17),
            i32x4_shr(i32x4_add(x3, t0), 17),
            i32x4_shr(i32x4_sub(x3, t0), 17),
            i32x4_shr(i32x4_sub(x2, t1), 17),
            i32x4_shr(i32x4_sub(x1, t2), 17),
            i32x4_shr(i32x4_sub(x0, t3), 17),
        ]
    };
    // o_lo[k] lane r = output (row r, column k) for rows 0..4; o_hi for rows 4..8.
    let o_lo = horizontal(&lo);
    let o_hi = horizontal(&hi);

    // Back to rows: row r = columns 0..4 then 4..8.
    let a = transpose4(o_lo[0], o_lo[1], o_lo[2], o_lo[3]);
    let b = transpose4(o_lo[4], o_lo[5], o_lo[6], o_lo[7]);
    let cc = transpose4(o_hi[0], o_hi[1], o_hi[2], o_hi[3]);
    let d = transpose4(o_hi[4], o_hi[5], o_hi[6], o_hi[7]);

    let zero = i16x8_splat(0);
    let max = i16x8_splat(255);
    for r in 0..8 {
        let (left, right) = if r < 4 { (a[r], b[r]) } else { (cc[r - 4], d[r - 4]) };
        let v = i16x8_narrow_i32x4(left, right);
        let v = i16x8_min(i16x8_max(v, zero), max);
        out.store(r, v);
    }
}
