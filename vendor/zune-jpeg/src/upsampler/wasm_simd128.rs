/*
 * Copyright (c) 2025.
 *
 * This software is free software;
 *
 * You can redistribute it or modify it under terms of the MIT, Apache License or Zlib license
 */

//! WebAssembly `simd128` up-samplers (zarr-jpeg patch): a translation of `neon.rs`.
//!
//! The scalar code computes in wrapping `i16`; `i16x8` lanes do the same, so the output
//! is bit-identical to `scalar.rs` for every input. Widths that are not a multiple of
//! eight are finished by re-running the kernel on the last (overlapping) eight samples;
//! short rows go to the scalar code. The assertions are the scalar functions' own.
//!
//! Compiled only into modules built with `-C target-feature=+simd128`.

#![cfg(all(target_arch = "wasm32", target_feature = "simd128"))]

use core::arch::wasm32::*;

#[inline(always)]
fn horizontal8(input: &[i16; 10], output: &mut [i16; 16]) {
    // SAFETY: `input` holds 10 i16, so loads of 8 at offsets 0, 1 and 2 are in bounds;
    // `output` holds 16 i16, two 16-byte stores. No alignment is needed.
    unsafe {
        let p = input.as_ptr();
        let prev = v128_load(p.cast::<v128>());
        let curr = v128_load(p.add(1).cast::<v128>());
        let next = v128_load(p.add(2).cast::<v128>());
        let common = i16x8_add(i16x8_mul(curr, i16x8_splat(3)), i16x8_splat(2));
        let even = i16x8_shr(i16x8_add(common, prev), 2);
        let odd = i16x8_shr(i16x8_add(common, next), 2);
        let o = output.as_mut_ptr();
        v128_store(o.cast::<v128>(), i16x8_shuffle::<0, 8, 1, 9, 2, 10, 3, 11>(even, odd));
        v128_store(o.add(8).cast::<v128>(), i16x8_shuffle::<4, 12, 5, 13, 6, 14, 7, 15>(even, odd));
    }
}

pub fn upsample_horizontal_wasm_simd(
    input: &[i16], in_near: &[i16], in_far: &[i16], scratch: &mut [i16], output: &mut [i16]
) {
    assert_eq!(
        input.len() * 2,
        output.len(),
        "Input length is not half the size of the output length"
    );
    assert!(
        output.len() > 4 && input.len() > 2,
        "Too Short of a vector, cannot upsample"
    );

    let len = input.len();
    if len < 10 {
        return super::scalar::upsample_horizontal(input, in_near, in_far, scratch, output);
    }

    output[0] = input[0];
    output[1] = (input[0] * 3 + input[1] + 2) >> 2;

    // output[2 + 2i], output[3 + 2i] come from input[i..i + 3], i in 0..len - 2.
    for (inp, out) in input
        .windows(10)
        .step_by(8)
        .zip(output[2..].chunks_exact_mut(16))
    {
        horizontal8(inp.try_into().unwrap(), out.try_into().unwrap());
    }
    // The remainder: the last window again (overlapping what is already written).
    if let Some(rest_input) = input.last_chunk::<10>() {
        let end = output.len() - 2;
        if let Some(rest_output) = output[..end].last_chunk_mut::<16>() {
            horizontal8(rest_input, rest_output);
        }
    }

    output[output.len() - 2] = (3 * input[len - 1] + input[len - 2] + 2) >> 2;
    output[output.len() - 1] = input[len - 1];
}

#[inline(always)]
fn vertical8(
    input: &[i16; 8], in_near: &[i16; 8], in_far: &[i16; 8], out_top: &mut [i16; 8],
    out_bottom: &mut [i16; 8]
) {
    // SAFETY: every slice is exactly 8 i16 = 16 bytes; no alignment needed.
    unsafe {
        let v_in = v128_load(input.as_ptr().cast::<v128>());
        let near = v128_load(in_near.as_ptr().cast::<v128>());
        let far = v128_load(in_far.as_ptr().cast::<v128>());
        let common = i16x8_add(i16x8_mul(v_in, i16x8_splat(3)), i16x8_splat(2));
        v128_store(out_top.as_mut_ptr().cast::<v128>(), i16x8_shr(i16x8_add(common, near), 2));
        v128_store(out_bottom.as_mut_ptr().cast::<v128>(), i16x8_shr(i16x8_add(common, far), 2));
    }
}

pub fn upsample_vertical_wasm_simd(
    input: &[i16], in_near: &[i16], in_far: &[i16], scratch: &mut [i16], output: &mut [i16]
) {
    assert_eq!(input.len() * 2, output.len());
    assert_eq!(in_near.len(), input.len());
    assert_eq!(in_far.len(), input.len());

    let len = input.len();
    if len < 8 {
        return super::scalar::upsample_vertical(input, in_near, in_far, scratch, output);
    }

    let (out_top, out_bottom) = output.split_at_mut(len);
    let chunks = input
        .chunks_exact(8)
        .zip(in_near.chunks_exact(8))
        .zip(in_far.chunks_exact(8))
        .zip(out_top.chunks_exact_mut(8))
        .zip(out_bottom.chunks_exact_mut(8));
    for ((((i, n), f), t), b) in chunks {
        vertical8(
            i.try_into().unwrap(),
            n.try_into().unwrap(),
            f.try_into().unwrap(),
            t.try_into().unwrap(),
            b.try_into().unwrap()
        );
    }
    if len % 8 != 0 {
        // The last eight again (len ≥ 8, so these all exist).
        if let (Some(i), Some(n), Some(f), Some(t), Some(b)) = (
            input.last_chunk::<8>(),
            in_near.last_chunk::<8>(),
            in_far.last_chunk::<8>(),
            out_top.last_chunk_mut::<8>(),
            out_bottom.last_chunk_mut::<8>()
        ) {
            vertical8(i, n, f, t, b);
        }
    }
}

pub fn upsample_hv_wasm_simd(
    input: &[i16], in_near: &[i16], in_far: &[i16], scratch_space: &mut [i16], output: &mut [i16]
) {
    assert_eq!(input.len() * 4, output.len());
    assert!(input.len() * 2 <= scratch_space.len());
    let scratch_space = &mut scratch_space[..input.len() * 2];

    upsample_vertical_wasm_simd(input, in_near, in_far, &mut [], scratch_space);

    let scratch_half = scratch_space.len() / 2;
    let output_half = output.len() / 2;
    let (scratch_top, scratch_bottom) = scratch_space.split_at(scratch_half);
    let (out_top, out_bottom) = output.split_at_mut(output_half);

    let mut t = [0];
    upsample_horizontal_wasm_simd(scratch_top, &[], &[], &mut t, out_top);
    upsample_horizontal_wasm_simd(scratch_bottom, &[], &[], &mut t, out_bottom);
}
