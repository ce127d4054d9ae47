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

/// Eight pixels: returns (r, g, b) as i16x8 (clamped to 0..=255 later by the caller's
/// narrow to u8).
///
/// Every term is an `i32x4_dot_i16x8` (one `pmaddwd` on x86-64) of interleaved i16 pairs
/// with coefficient pairs: `y * Y_CF + cr * CR_CF` and so on are exact in i32 (no product
/// is -32768 * -32768, and every sum stays below 2^31 in magnitude for any i16 input), so
/// this is the scalar arithmetic term for term.
#[inline(always)]
fn convert8(y: v128, cb: v128, cr: v128) -> (v128, v128, v128) {
    let c128 = i16x8_splat(128);
    let cb = i16x8_sub(cb, c128);
    let cr = i16x8_sub(cr, c128);

    let y_cr_lo = i16x8_shuffle::<0, 8, 1, 9, 2, 10, 3, 11>(y, cr);
    let y_cr_hi = i16x8_shuffle::<4, 12, 5, 13, 6, 14, 7, 15>(y, cr);
    let y_cb_lo = i16x8_shuffle::<0, 8, 1, 9, 2, 10, 3, 11>(y, cb);
    let y_cb_hi = i16x8_shuffle::<4, 12, 5, 13, 6, 14, 7, 15>(y, cb);

    let rnd = i32x4_splat(i32::from(YUV_RND));
    let k_r = i32x4_splat(pair(Y_CF, CR_CF));
    let k_b = i32x4_splat(pair(Y_CF, CB_CF));
    // g = (y * Y_CF + cr * C1) + (y * 0 + cb * C2)
    let k_g1 = i32x4_splat(pair(Y_CF, C_G_CR_COEF_1));
    let k_g2 = i32x4_splat(pair(0, C_G_CB_COEF_2));

    let shift = YUV_PREC as u32;
    let term = |a: v128| i32x4_shr(i32x4_add(a, rnd), shift);
    let r_lo = term(i32x4_dot_i16x8(y_cr_lo, k_r));
    let r_hi = term(i32x4_dot_i16x8(y_cr_hi, k_r));
    let b_lo = term(i32x4_dot_i16x8(y_cb_lo, k_b));
    let b_hi = term(i32x4_dot_i16x8(y_cb_hi, k_b));
    let g_lo = term(
        i32x4_add(i32x4_dot_i16x8(y_cr_lo, k_g1), i32x4_dot_i16x8(y_cb_lo, k_g2))
    );
    let g_hi = term(
        i32x4_add(i32x4_dot_i16x8(y_cr_hi, k_g1), i32x4_dot_i16x8(y_cb_hi, k_g2))
    );

    (
        i16x8_narrow_i32x4(r_lo, r_hi),
        i16x8_narrow_i32x4(g_lo, g_hi),
        i16x8_narrow_i32x4(b_lo, b_hi)
    )
}

/// Sixteen pixels as three u8x16 planes (r, g, b), clamped to 0..=255.
#[inline(always)]
fn convert16(y: &[i16; 16], cb: &[i16; 16], cr: &[i16; 16]) -> (v128, v128, v128) {
    let (y0, y1) = load16(y);
    let (cb0, cb1) = load16(cb);
    let (cr0, cr1) = load16(cr);
    let (r0, g0, b0) = convert8(y0, cb0, cr0);
    let (r1, g1, b1) = convert8(y1, cb1, cr1);
    (
        u8x16_narrow_i16x8(r0, r1),
        u8x16_narrow_i16x8(g0, g1),
        u8x16_narrow_i16x8(b0, b1)
    )
}

/// Interleaves three u8x16 planes into 48 bytes r0 g0 b0 r1 g1 b1 ...
#[inline(always)]
pub(crate) fn interleave3(r: v128, g: v128, b: v128) -> [v128; 3] {
    // Bytes 0..16: pixels 0..5 (+ r5); 16..32: g5 b5, pixels 6..10 (+ r10, g10);
    // 32..48: b10, pixels 11..16. First r and g (b slots get a placeholder), then b.
    let rg0 = i8x16_shuffle::<0, 16, 0, 1, 17, 0, 2, 18, 0, 3, 19, 0, 4, 20, 0, 5>(r, g);
    let o0 = i8x16_shuffle::<0, 1, 16, 3, 4, 17, 6, 7, 18, 9, 10, 19, 12, 13, 20, 15>(rg0, b);
    let rg1 = i8x16_shuffle::<21, 0, 6, 22, 0, 7, 23, 0, 8, 24, 0, 9, 25, 0, 10, 26>(r, g);
    let o1 = i8x16_shuffle::<0, 21, 2, 3, 22, 5, 6, 23, 8, 9, 24, 11, 12, 25, 14, 15>(rg1, b);
    let rg2 = i8x16_shuffle::<0, 11, 27, 0, 12, 28, 0, 13, 29, 0, 14, 30, 0, 15, 31, 0>(r, g);
    let o2 = i8x16_shuffle::<26, 1, 2, 27, 4, 5, 28, 7, 8, 29, 10, 11, 30, 13, 14, 31>(rg2, b);
    [o0, o1, o2]
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
    let (r, g, b) = convert16(y, cb, cr);
    let v = interleave3(r, g, b);
    // SAFETY: `out` is 48 bytes = three 16-byte stores; no alignment needed.
    unsafe {
        let p = out.as_mut_ptr();
        v128_store(p.cast::<v128>(), v[0]);
        v128_store(p.add(16).cast::<v128>(), v[1]);
        v128_store(p.add(32).cast::<v128>(), v[2]);
    }
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
    let (r, g, b) = convert16(y, cb, cr);
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
