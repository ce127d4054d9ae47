/*
 * Copyright (c) 2023.
 *
 * This software is free software;
 *
 * You can redistribute it or modify it under terms of the MIT, Apache License or Zlib license
 */

//! WebAssembly `simd128` YCbCr → RGB / RGBA (zarr-jpeg patch).
//!
//! Bit-identical to `scalar::ycbcr_to_rgb(a)_inner_16_scalar::<false>` for every `i16`
//! input: the chroma offset is a wrapping `i16` subtraction as in the scalar code, the
//! sums of products are formed exactly in 32-bit lanes (`i32x4_dot_i16x8`), and the
//! saturating narrows i32 → i16 → u8 clamp to 0..=255 exactly like `i32::clamp`.
//!
//! Compiled only into modules built with `-C target-feature=+simd128`.

#![cfg(all(target_arch = "wasm32", target_feature = "simd128"))]

use core::arch::wasm32::*;

use crate::color_convert::scalar::{
    CB_CF, CR_CF, C_G_CB_COEF_2, C_G_CR_COEF_1, YUV_PREC, YUV_RND, Y_CF
};

#[inline(always)]
fn load16(a: &[i16; 16]) -> (v128, v128) {
    // SAFETY: 16 i16 = two 16-byte loads, in bounds; no alignment needed.
    unsafe {
        (
            v128_load(a.as_ptr().cast::<v128>()),
            v128_load(a.as_ptr().add(8).cast::<v128>())
        )
    }
}

/// `(a_lo_16 | b_hi_16)` as an i32 lane: the i16 pair (a, b) for `i32x4_dot_i16x8`.
const fn pair(a: i16, b: i16) -> i32 {
    (a as u16 as i32) | ((b as i32) << 16)
}

/// The conversion's constants, made once per row and hidden from the optimiser
/// (`black_box`): left as `v128.const` at each use, V8 rebuilds every one from immediates
/// (about three x86-64 instructions each, some 70 per 16 pixels); this way they are
/// made once and kept in registers or loaded.
#[derive(Clone, Copy)]
struct Constants {
    c128: v128,
    rnd: v128,
    k_r: v128,
    k_b: v128,
    k_g1: v128,
    k_g2: v128,
    /// `interleave3`'s byte masks.
    interleave: &'static [v128; 9]
}

impl Constants {
    #[inline(always)]
    fn new() -> Self {
        core::hint::black_box(Constants {
            c128: i16x8_splat(128),
            rnd: i32x4_splat(i32::from(YUV_RND)),
            k_r: i32x4_splat(pair(Y_CF, CR_CF)),
            k_b: i32x4_splat(pair(Y_CF, CB_CF)),
            // g = (y * Y_CF + cr * C1) + (y * 0 + cb * C2)
            k_g1: i32x4_splat(pair(Y_CF, C_G_CR_COEF_1)),
            k_g2: i32x4_splat(pair(0, C_G_CB_COEF_2)),
            interleave: &INTERLEAVE3
        })
    }
}

/// Eight pixels: returns (r, g, b) as i16x8 (clamped to 0..=255 later by the caller's
/// narrow to u8).
///
/// Every term is an `i32x4_dot_i16x8` (one `pmaddwd` on x86-64) of interleaved i16 pairs
/// with coefficient pairs: `y * Y_CF + cr * CR_CF` and so on are exact in i32 (no product
/// is -32768 * -32768, and every sum stays below 2^31 in magnitude for any i16 input), so
/// this is the scalar arithmetic term for term.
#[inline(always)]
fn convert8(k: &Constants, y: v128, cb: v128, cr: v128) -> (v128, v128, v128) {
    let cb = i16x8_sub(cb, k.c128);
    let cr = i16x8_sub(cr, k.c128);

    let y_cr_lo = i16x8_shuffle::<0, 8, 1, 9, 2, 10, 3, 11>(y, cr);
    let y_cr_hi = i16x8_shuffle::<4, 12, 5, 13, 6, 14, 7, 15>(y, cr);
    let y_cb_lo = i16x8_shuffle::<0, 8, 1, 9, 2, 10, 3, 11>(y, cb);
    let y_cb_hi = i16x8_shuffle::<4, 12, 5, 13, 6, 14, 7, 15>(y, cb);

    let shift = YUV_PREC as u32;
    let term = |a: v128| i32x4_shr(i32x4_add(a, k.rnd), shift);
    let r_lo = term(i32x4_dot_i16x8(y_cr_lo, k.k_r));
    let r_hi = term(i32x4_dot_i16x8(y_cr_hi, k.k_r));
    let b_lo = term(i32x4_dot_i16x8(y_cb_lo, k.k_b));
    let b_hi = term(i32x4_dot_i16x8(y_cb_hi, k.k_b));
    let g_lo = term(
        i32x4_add(i32x4_dot_i16x8(y_cr_lo, k.k_g1), i32x4_dot_i16x8(y_cb_lo, k.k_g2))
    );
    let g_hi = term(
        i32x4_add(i32x4_dot_i16x8(y_cr_hi, k.k_g1), i32x4_dot_i16x8(y_cb_hi, k.k_g2))
    );

    (
        i16x8_narrow_i32x4(r_lo, r_hi),
        i16x8_narrow_i32x4(g_lo, g_hi),
        i16x8_narrow_i32x4(b_lo, b_hi)
    )
}

/// Sixteen pixels as three u8x16 planes (r, g, b), clamped to 0..=255.
#[inline(always)]
fn convert16(k: &Constants, y: &[i16; 16], cb: &[i16; 16], cr: &[i16; 16]) -> (v128, v128, v128) {
    let (y0, y1) = load16(y);
    let (cb0, cb1) = load16(cb);
    let (cr0, cr1) = load16(cr);
    let (r0, g0, b0) = convert8(k, y0, cb0, cr0);
    let (r1, g1, b1) = convert8(k, y1, cb1, cr1);
    (to_u8(r0, r1), to_u8(g0, g1), to_u8(b0, b1))
}

/// `u8x16_narrow_i16x8(a, b)`, written so that LLVM keeps both narrows as single
/// instructions: the explicit clamp (which the narrow's saturation makes a no-op) stops it
/// from merging this narrow with the i32 → i16 one before it into clamps of every i32 lane
/// by rebuilt constants and byte shuffles.
#[inline(always)]
fn to_u8(a: v128, b: v128) -> v128 {
    let clamp = |v: v128| i16x8_min(i16x8_max(v, i16x8_splat(0)), i16x8_splat(255));
    u8x16_narrow_i16x8(clamp(a), clamp(b))
}

/// Byte masks of `interleave3`: for output vector o and channel c, lane p takes byte
/// (16o + p) / 3 of channel c's vector when (16o + p) % 3 == c, else 0x80 (zero).
static INTERLEAVE3: [v128; 9] = {
    let mut masks = [[0x80u8; 16]; 9];
    let mut o = 0;
    while o < 3 {
        let mut p = 0;
        while p < 16 {
            let q = 16 * o + p;
            masks[3 * o + q % 3][p] = (q / 3) as u8;
            p += 1;
        }
        o += 1;
    }
    let mut out = [u8x16(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0); 9];
    let mut i = 0;
    while i < 9 {
        let m = masks[i];
        out[i] = u8x16(
            m[0], m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8], m[9], m[10], m[11], m[12],
            m[13], m[14], m[15]
        );
        i += 1;
    }
    out
};

/// Interleaves three u8x16 planes into 48 bytes r0 g0 b0 r1 g1 b1 ...: each output vector
/// is three swizzles (one per plane, other lanes zeroed) OR-ed, with masks the engine
/// loads (as constant two-vector shuffles it would rebuild two masks from immediates for
/// each).
#[inline(always)]
fn interleave3(masks: &[v128; 9], r: v128, g: v128, b: v128) -> [v128; 3] {
    let out = |o: usize| {
        v128_or(
            v128_or(i8x16_swizzle(r, masks[3 * o]), i8x16_swizzle(g, masks[3 * o + 1])),
            i8x16_swizzle(b, masks[3 * o + 2])
        )
    };
    [out(0), out(1), out(2)]
}

/// Sixteen pixels converted and interleaved into `out` (r0 g0 b0 r1 ...).
#[inline(always)]
fn rgb16(k: &Constants, y: &[i16; 16], cb: &[i16; 16], cr: &[i16; 16], out: &mut [u8; 48]) {
    let (r, g, b) = convert16(k, y, cb, cr);
    let v = interleave3(k.interleave, r, g, b);
    // SAFETY: `out` is 48 bytes = three 16-byte stores; no alignment needed.
    unsafe {
        let p = out.as_mut_ptr();
        v128_store(p.cast::<v128>(), v[0]);
        v128_store(p.add(16).cast::<v128>(), v[1]);
        v128_store(p.add(32).cast::<v128>(), v[2]);
    }
}

/// `ycbcr_to_rgb_inner_16_scalar::<false>` for wasm simd128: 16 pixels to 48 bytes at
/// `output[*pos..]`, then `*pos += 48`. Same panic condition as the scalar function
/// (output too short), which callers never meet.
pub fn ycbcr_to_rgb_wasm_simd(
    y: &[i16; 16], cb: &[i16; 16], cr: &[i16; 16], output: &mut [u8], pos: &mut usize
) {
    let (_, output_position) = output.split_at_mut(*pos);
    let out: &mut [u8; 48] = output_position
        .get_mut(0..48)
        .expect("Slice to small cannot write")
        .try_into()
        .unwrap();
    rgb16(&Constants::new(), y, cb, cr, out);
    *pos += 48;
}

/// `ycbcr_to_rgba_inner_16_scalar::<false>` for wasm simd128: 16 pixels to 64 bytes
/// (alpha 255) at `output[*pos..]`, then `*pos += 64`.
pub fn ycbcr_to_rgba_wasm_simd(
    y: &[i16; 16], cb: &[i16; 16], cr: &[i16; 16], output: &mut [u8], pos: &mut usize
) {
    let (_, output_position) = output.split_at_mut(*pos);
    let out: &mut [u8; 64] = output_position
        .get_mut(0..64)
        .expect("Slice to small cannot write")
        .try_into()
        .unwrap();
    let k = Constants::new();
    let (r, g, b) = convert16(&k, y, cb, cr);
    let a = u8x16_splat(255);
    let rg_lo = u8x16_shuffle::<0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23>(r, g);
    let rg_hi = u8x16_shuffle::<8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31>(r, g);
    let ba_lo = u8x16_shuffle::<0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23>(b, a);
    let ba_hi = u8x16_shuffle::<8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31>(b, a);
    let v = [
        i16x8_shuffle::<0, 8, 1, 9, 2, 10, 3, 11>(rg_lo, ba_lo),
        i16x8_shuffle::<4, 12, 5, 13, 6, 14, 7, 15>(rg_lo, ba_lo),
        i16x8_shuffle::<0, 8, 1, 9, 2, 10, 3, 11>(rg_hi, ba_hi),
        i16x8_shuffle::<4, 12, 5, 13, 6, 14, 7, 15>(rg_hi, ba_hi),
    ];
    // SAFETY: `out` is 64 bytes = four 16-byte stores; no alignment needed.
    unsafe {
        let p = out.as_mut_ptr();
        for (i, v) in v.iter().enumerate() {
            v128_store(p.add(16 * i).cast::<v128>(), *v);
        }
    }
    *pos += 64;
}

/// One output row of `color_convert_ycbcr` (worker.rs) for RGB: the 16-pixel kernel above
/// over the row in one loop instead of one indirect call per 16 pixels. Same chunks, same
/// order, same bytes: pixels `16k..16k + 16` for every whole chunk, then `width - 16..width`
/// again, written over what the last chunk wrote, as the caller's scalar loop does. Needs
/// `width >= 16`. (RGBA output keeps the 16-pixel path: zarr-jpeg never asks for it.)
pub fn ycbcr_to_rgb_row_wasm_simd(
    y: &[i16], cb: &[i16], cr: &[i16], output: &mut [u8], width: usize
) {
    assert!(width >= 16 && y.len() >= width && cb.len() >= width && cr.len() >= width);
    assert!(output.len() >= width * 3);
    let k = Constants::new();
    let starts = (0..width / 16).map(|k| 16 * k).chain(core::iter::once(width - 16));
    for s in starts {
        rgb16(
            &k,
            y[s..s + 16].try_into().unwrap(),
            cb[s..s + 16].try_into().unwrap(),
            cr[s..s + 16].try_into().unwrap(),
            (&mut output[s * 3..(s + 16) * 3]).try_into().unwrap()
        );
    }
}
