//! [zarr-jpeg patch] x86-64 SSE4.1 kernels (feature `simd`), chosen at run time: every
//! entry point checks `is_x86_feature_detected!("sse4.1")` (std caches the answer) and runs
//! the scalar code otherwise. A port of `wasm_simd.rs`, kernel for kernel, so every result
//! is bit-identical to the scalar code it replaces (with `Encoder::set_scalar_reference` the
//! scalar code runs instead, so tests can compare the two):
//!
//! - RGB → YCbCr (the crate's 16-bit fixed-point formula, as `rgb_to_ycbcr`), 16 pixels
//!   per step, and the YCbCr / grayscale row copies;
//! - 8×8 block extraction, with the `Average` chroma downsampling for factors 1, 2 and 4
//!   (libjpeg's alternating rounding bias);
//! - the islow forward DCT in 16-bit lanes with `pmaddwd` for the rotations (the scheme of
//!   libjpeg-turbo's SIMD `jfdctint`, exact for 8-bit samples);
//! - quantisation with the same reciprocal and correction as the scalar code, and the
//!   zig-zag reorder by byte shuffles;
//! - a 64-bit mask of non-zero coefficients, so Huffman statistics and coding visit only
//!   the non-zero ones.
//!
//! simd128 maps onto SSE4.1 nearly one to one (`i8x16.swizzle` with 0x80 lanes is `pshufb`,
//! `i32x4.dot_i16x8_s` is `pmaddwd`); the unsigned 16×16→32-bit products of the quantiser
//! become `pmulhuw`/`pmullw`. SSE4.1 (with SSSE3) is on every x86-64 CPU since about 2008;
//! 256-bit AVX2 would need two blocks per call to pay, and the encoder works block by block.
//!
//! The kernels are `#[target_feature(enable = "sse4.1")]` functions (so the intrinsics
//! inline into them); loads and stores go through bounds-checked slices or fixed-size
//! arrays, so no input can read or write out of bounds.

use core::arch::x86_64::*;

use alloc::vec::Vec;

use crate::encoder::{AlignedBlock, BlockTrellis, JpegColorType, Operations};
use crate::image_buffer::{ImageBuffer, rgb_to_ycbcr};
use crate::quantization::QuantizationTable;

/// Whether the kernels can run on this CPU (std caches the CPUID answer in an atomic).
#[inline(always)]
pub(crate) fn available() -> bool {
    std::is_x86_feature_detected!("sse4.1")
}

pub(crate) struct X86SimdOperations;

impl Operations for X86SimdOperations {
    #[inline(always)]
    fn fdct(data: &mut AlignedBlock) {
        if available() {
            // SAFETY: SSE4.1 is available (checked above).
            unsafe { fdct_simd(data) }
        } else {
            crate::fdct::fdct(data)
        }
    }

    #[inline(always)]
    fn quantize_block(block: &AlignedBlock, q_block: &mut AlignedBlock, table: &QuantizationTable) {
        if available() {
            // SAFETY: SSE4.1 is available (checked above).
            unsafe { quantize_simd(block, q_block, table) }
        } else {
            crate::encoder::DefaultOperations::quantize_block(block, q_block, table)
        }
    }

    #[inline(always)]
    fn get_block(
        data: &[u8],
        start_x: usize,
        start_y: usize,
        col_stride: usize,
        row_stride: usize,
        width: usize,
    ) -> AlignedBlock {
        if col_stride == 1 && row_stride == 1 && available() {
            // SAFETY: SSE4.1 is available (checked above).
            unsafe { get_block_averaged_simd(data, start_x, start_y, 1, 1, width) }
        } else {
            crate::encoder::get_block(data, start_x, start_y, col_stride, row_stride, width)
        }
    }

    #[inline(always)]
    fn get_block_averaged(
        data: &[u8],
        start_x: usize,
        start_y: usize,
        col_stride: usize,
        row_stride: usize,
        width: usize,
    ) -> AlignedBlock {
        if available() {
            // SAFETY: SSE4.1 is available (checked above).
            unsafe { get_block_averaged_simd(data, start_x, start_y, col_stride, row_stride, width) }
        } else {
            crate::encoder::get_block_averaged(data, start_x, start_y, col_stride, row_stride, width)
        }
    }

    #[inline(always)]
    fn encode_block(
        data: &[u8],
        start_x: usize,
        start_y: usize,
        col_stride: usize,
        row_stride: usize,
        width: usize,
        average: bool,
        table: &QuantizationTable,
        trellis: BlockTrellis,
    ) -> AlignedBlock {
        let simd_factors = matches!(col_stride, 1 | 2 | 4) && matches!(row_stride, 1 | 2 | 4);
        if !simd_factors || (!average && (col_stride, row_stride) != (1, 1)) || !available() {
            let mut block = if average {
                Self::get_block_averaged(data, start_x, start_y, col_stride, row_stride, width)
            } else {
                Self::get_block(data, start_x, start_y, col_stride, row_stride, width)
            };
            Self::fdct(&mut block);
            if let Some(costs) = trellis {
                return crate::trellis::quantize(&block, table, costs);
            }
            let mut q_block = AlignedBlock::default();
            Self::quantize_block(&block, &mut q_block, table);
            return q_block;
        }
        // SAFETY: SSE4.1 is available (checked above).
        unsafe { encode_block_simd(data, start_x, start_y, col_stride, row_stride, width, table, trellis) }
    }

    #[inline(always)]
    fn nonzero_ac_mask(block: &AlignedBlock) -> Option<u64> {
        if available() {
            // SAFETY: SSE4.1 is available (checked above).
            Some(unsafe { nonzero_mask(block) } & !1)
        } else {
            None
        }
    }
}

/// Block extraction, FDCT and quantisation of one block in registers (`h`, `v` ∈ {1, 2, 4}).
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "sse4.1")]
fn encode_block_simd(
    data: &[u8],
    start_x: usize,
    start_y: usize,
    h: usize,
    v: usize,
    width: usize,
    table: &QuantizationTable,
    trellis: BlockTrellis,
) -> AlignedBlock {
    // SAFETY: SSE4.1 is available (this function is compiled for it, its caller checked).
    let rows = fdct_rows(unsafe { block_rows(data, start_x, start_y, h, v, width) });
    if let Some(costs) = trellis {
        // the FDCT output in natural order, trellis-quantised
        let mut block = AlignedBlock::default();
        for (k, v) in rows.into_iter().enumerate() {
            store_row(&mut block.data, k, v);
        }
        return crate::trellis::quantize(&block, table, costs);
    }
    // SAFETY: as above.
    let coefficients = unsafe { quantize_rows(rows, table) };
    let mut q_block = AlignedBlock::default();
    for (k, v) in coefficients.into_iter().enumerate() {
        store_row(&mut q_block.data, k, v);
    }
    q_block
}

#[inline]
#[target_feature(enable = "sse4.1")]
fn load16(bytes: &[u8]) -> __m128i {
    let bytes: &[u8; 16] = bytes[..16].try_into().unwrap();
    // SAFETY: 16 readable bytes; `loadu` has no alignment requirement.
    unsafe { _mm_loadu_si128(bytes.as_ptr() as *const __m128i) }
}

#[inline]
#[target_feature(enable = "sse4.1")]
fn load8(bytes: &[u8]) -> __m128i {
    let bytes: &[u8; 8] = bytes[..8].try_into().unwrap();
    // SAFETY: 8 readable bytes (the upper half of the vector is zero).
    unsafe { _mm_loadl_epi64(bytes.as_ptr() as *const __m128i) }
}

#[inline]
#[target_feature(enable = "sse4.1")]
fn load_row(block: &[i16; 64], row: usize) -> __m128i {
    let row: &[i16; 8] = block[row * 8..row * 8 + 8].try_into().unwrap();
    // SAFETY: the array holds 8 i16 (16 bytes).
    unsafe { _mm_loadu_si128(row.as_ptr() as *const __m128i) }
}

#[inline]
#[target_feature(enable = "sse4.1")]
fn store_row(block: &mut [i16; 64], row: usize, v: __m128i) {
    let row: &mut [i16; 8] = (&mut block[row * 8..row * 8 + 8]).try_into().unwrap();
    // SAFETY: the array holds 8 i16 (16 bytes).
    unsafe { _mm_storeu_si128(row.as_mut_ptr() as *mut __m128i, v) }
}

#[inline]
#[target_feature(enable = "sse4.1")]
fn mask(bytes: &[u8; 16]) -> __m128i {
    // SAFETY: 16 readable bytes.
    unsafe { _mm_loadu_si128(bytes.as_ptr() as *const __m128i) }
}

#[inline]
#[target_feature(enable = "sse4.1")]
fn store16(dst: &mut [core::mem::MaybeUninit<u8>], v: __m128i) {
    let dst = &mut dst[..16];
    // SAFETY: 16 writable bytes checked above; `storeu` has no alignment requirement.
    unsafe { _mm_storeu_si128(dst.as_mut_ptr() as *mut __m128i, v) }
}

// ---------------------------------------------------------------- colour conversion

/// Byte masks of `split_row3` (as `wasm_simd::DEINTERLEAVE3`): for channel c and input
/// vector v, lane p takes byte 3p + c − 16v when it lies in that vector, else 0x80 (zero).
static DEINTERLEAVE3: [[u8; 16]; 9] = [
    [0x00, 0x03, 0x06, 0x09, 0x0c, 0x0f, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80],
    [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02, 0x05, 0x08, 0x0b, 0x0e, 0x80, 0x80, 0x80, 0x80, 0x80],
    [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 0x04, 0x07, 0x0a, 0x0d],
    [0x01, 0x04, 0x07, 0x0a, 0x0d, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80],
    [0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 0x03, 0x06, 0x09, 0x0c, 0x0f, 0x80, 0x80, 0x80, 0x80, 0x80],
    [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02, 0x05, 0x08, 0x0b, 0x0e],
    [0x02, 0x05, 0x08, 0x0b, 0x0e, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80],
    [0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 0x04, 0x07, 0x0a, 0x0d, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80],
    [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 0x03, 0x06, 0x09, 0x0c, 0x0f],
];

/// Byte masks of `ycc_of_4` (as `wasm_simd::YCC4_OPERANDS`) for 4 pixels in bytes 0..12 of a
/// vector: (r, g) and (g, b) pairs zero-extended to 16-bit lanes, and r and b zero-extended
/// to 32-bit lanes.
static YCC4_OPERANDS: [[u8; 16]; 4] = [
    [0x00, 0x80, 0x01, 0x80, 0x03, 0x80, 0x04, 0x80, 0x06, 0x80, 0x07, 0x80, 0x09, 0x80, 0x0a, 0x80],
    [0x01, 0x80, 0x02, 0x80, 0x04, 0x80, 0x05, 0x80, 0x07, 0x80, 0x08, 0x80, 0x0a, 0x80, 0x0b, 0x80],
    [0x00, 0x80, 0x80, 0x80, 0x03, 0x80, 0x80, 0x80, 0x06, 0x80, 0x80, 0x80, 0x09, 0x80, 0x80, 0x80],
    [0x02, 0x80, 0x80, 0x80, 0x05, 0x80, 0x80, 0x80, 0x08, 0x80, 0x80, 0x80, 0x0b, 0x80, 0x80, 0x80],
];

/// Y, Cb, Cr of the 4 pixels in bytes 0..12 of `px` (32-bit lanes): exactly `rgb_to_ycbcr`'s
/// integer sums, split so every multiplier fits 16 bits (38470 = 2 · 19235, 32768 · x =
/// x << 15). Every sum is non-negative, so the arithmetic shift equals the scalar `>> 16`.
#[inline]
#[target_feature(enable = "sse4.1")]
fn ycc_of_4(px: __m128i) -> (__m128i, __m128i, __m128i) {
    let rg = _mm_shuffle_epi8(px, mask(&YCC4_OPERANDS[0]));
    let gb = _mm_shuffle_epi8(px, mask(&YCC4_OPERANDS[1]));
    let r = _mm_shuffle_epi8(px, mask(&YCC4_OPERANDS[2]));
    let b = _mm_shuffle_epi8(px, mask(&YCC4_OPERANDS[3]));
    let pair = |a: i16, b: i16| _mm_set1_epi32((i32::from(b) << 16) | i32::from(a as u16));
    let y = _mm_add_epi32(
        _mm_add_epi32(_mm_madd_epi16(rg, pair(19595, 19235)), _mm_madd_epi16(gb, pair(19235, 7471))),
        _mm_set1_epi32(0x7FFF),
    );
    let offset = _mm_set1_epi32((128 << 16) + 0x7FFF);
    let cb = _mm_add_epi32(_mm_add_epi32(_mm_madd_epi16(rg, pair(-11059, -21709)), _mm_slli_epi32(b, 15)), offset);
    let cr = _mm_add_epi32(_mm_add_epi32(_mm_madd_epi16(gb, pair(-27439, -5329)), _mm_slli_epi32(r, 15)), offset);
    (_mm_srai_epi32(y, 16), _mm_srai_epi32(cb, 16), _mm_srai_epi32(cr, 16))
}

/// The bytes of four vectors of 32-bit lanes that each hold a value in 0..=255, in order.
#[inline]
#[target_feature(enable = "sse4.1")]
fn pack4(a: __m128i, b: __m128i, c: __m128i, d: __m128i) -> __m128i {
    _mm_packus_epi16(_mm_packs_epi32(a, b), _mm_packs_epi32(c, d))
}

/// Three rows' uninitialised tails of `n` bytes each (reserved); `commit3` marks them written.
fn tails3(buffers: &mut [Vec<u8>; 4], n: usize) -> [&mut [core::mem::MaybeUninit<u8>]; 3] {
    let [b0, b1, b2, _] = buffers;
    b0.reserve(n);
    b1.reserve(n);
    b2.reserve(n);
    [&mut b0.spare_capacity_mut()[..n], &mut b1.spare_capacity_mut()[..n], &mut b2.spare_capacity_mut()[..n]]
}

/// # Safety
/// The first `n` spare bytes of the first three rows must have been written.
unsafe fn commit3(buffers: &mut [Vec<u8>; 4], n: usize) {
    let [b0, b1, b2, _] = buffers;
    // SAFETY: by the caller, the first `n` spare bytes of each row are initialised (and
    // `tails3` reserved them).
    unsafe {
        b0.set_len(b0.len() + n);
        b1.set_len(b1.len() + n);
        b2.set_len(b2.len() + n);
    }
}

/// One row of RGB samples → Y, Cb, Cr rows (appended), as `RgbImage::fill_buffers`.
/// 16 pixels per step, as four groups of 4 loaded at byte offsets 0, 12, 24 and 32 (the
/// last shifted down 4 bytes, so no load reads past the 48 bytes).
#[target_feature(enable = "sse4.1")]
fn rgb_row_to_ycbcr_simd(line: &[u8], buffers: &mut [Vec<u8>; 4]) {
    let n = line.len() / 3;
    let [y_buf, cb_buf, cr_buf] = tails3(buffers, n);
    let mut chunks = line.chunks_exact(48);
    let mut x = 0;
    for px in &mut chunks {
        let last = _mm_srli_si128(load16(&px[32..48]), 4);
        let (y0, cb0, cr0) = ycc_of_4(load16(&px[0..16]));
        let (y1, cb1, cr1) = ycc_of_4(load16(&px[12..28]));
        let (y2, cb2, cr2) = ycc_of_4(load16(&px[24..40]));
        let (y3, cb3, cr3) = ycc_of_4(last);
        store16(&mut y_buf[x..], pack4(y0, y1, y2, y3));
        store16(&mut cb_buf[x..], pack4(cb0, cb1, cb2, cb3));
        store16(&mut cr_buf[x..], pack4(cr0, cr1, cr2, cr3));
        x += 16;
    }
    for px in chunks.remainder().chunks_exact(3) {
        let (y, cb, cr) = rgb_to_ycbcr(px[0], px[1], px[2]);
        y_buf[x].write(y);
        cb_buf[x].write(cb);
        cr_buf[x].write(cr);
        x += 1;
    }
    debug_assert_eq!(x, n);
    // SAFETY: the loops wrote bytes 0..n of each tail (16 per chunk of 16 pixels, then one
    // per remaining pixel).
    unsafe { commit3(buffers, n) }
}

/// One row of interleaved 3-component samples → three rows, unconverted.
#[target_feature(enable = "sse4.1")]
fn split_row3_simd(line: &[u8], buffers: &mut [Vec<u8>; 4]) {
    let n = line.len() / 3;
    let [c0_buf, c1_buf, c2_buf] = tails3(buffers, n);
    let mut chunks = line.chunks_exact(48);
    let mut x = 0;
    for px in &mut chunks {
        let v = [load16(&px[0..16]), load16(&px[16..32]), load16(&px[32..48])];
        let mut c = [_mm_setzero_si128(); 3];
        for (ch, out) in c.iter_mut().enumerate() {
            *out = _mm_or_si128(
                _mm_or_si128(
                    _mm_shuffle_epi8(v[0], mask(&DEINTERLEAVE3[3 * ch])),
                    _mm_shuffle_epi8(v[1], mask(&DEINTERLEAVE3[3 * ch + 1])),
                ),
                _mm_shuffle_epi8(v[2], mask(&DEINTERLEAVE3[3 * ch + 2])),
            );
        }
        store16(&mut c0_buf[x..], c[0]);
        store16(&mut c1_buf[x..], c[1]);
        store16(&mut c2_buf[x..], c[2]);
        x += 16;
    }
    for px in chunks.remainder().chunks_exact(3) {
        c0_buf[x].write(px[0]);
        c1_buf[x].write(px[1]);
        c2_buf[x].write(px[2]);
        x += 1;
    }
    debug_assert_eq!(x, n);
    // SAFETY: the loops wrote bytes 0..n of each tail.
    unsafe { commit3(buffers, n) }
}

/// `rgb_row_to_ycbcr_simd` where SSE4.1 is available, else the scalar conversion. (The
/// encoder picks these adapters only where it is: the fallbacks keep them sound anyway.)
pub(crate) fn rgb_row_to_ycbcr(line: &[u8], buffers: &mut [Vec<u8>; 4]) {
    if available() {
        // SAFETY: SSE4.1 is available (checked above).
        unsafe { rgb_row_to_ycbcr_simd(line, buffers) }
    } else {
        rgb_row_to_ycbcr_scalar(line, buffers)
    }
}

fn rgb_row_to_ycbcr_scalar(line: &[u8], buffers: &mut [Vec<u8>; 4]) {
    for px in line.chunks_exact(3) {
        let (y, cb, cr) = rgb_to_ycbcr(px[0], px[1], px[2]);
        buffers[0].push(y);
        buffers[1].push(cb);
        buffers[2].push(cr);
    }
}

/// `split_row3_simd` where SSE4.1 is available, else the scalar copy.
pub(crate) fn split_row3(line: &[u8], buffers: &mut [Vec<u8>; 4]) {
    if available() {
        // SAFETY: SSE4.1 is available (checked above).
        unsafe { split_row3_simd(line, buffers) }
    } else {
        split_row3_scalar(line, buffers)
    }
}

fn split_row3_scalar(line: &[u8], buffers: &mut [Vec<u8>; 4]) {
    for px in line.chunks_exact(3) {
        buffers[0].push(px[0]);
        buffers[1].push(px[1]);
        buffers[2].push(px[2]);
    }
}

/// One row of grayscale samples, copied (`GrayImage` pushes them one by one).
pub(crate) fn gray_row(line: &[u8], buffers: &mut [Vec<u8>; 4]) {
    buffers[0].extend_from_slice(line);
}

#[inline(always)]
fn line(data: &[u8], y: u16, width: u16, num_colors: usize) -> &[u8] {
    let start = usize::from(y) * usize::from(width) * num_colors;
    &data[start..start + usize::from(width) * num_colors]
}

macro_rules! simd_image {
    ($name:ident, $color:expr, $num_colors:expr, $fill:expr) => {
        pub(crate) struct $name<'a>(pub &'a [u8], pub u16, pub u16);

        impl ImageBuffer for $name<'_> {
            fn get_jpeg_color_type(&self) -> JpegColorType {
                $color
            }

            fn width(&self) -> u16 {
                self.1
            }

            fn height(&self) -> u16 {
                self.2
            }

            #[inline(always)]
            fn fill_buffers(&self, y: u16, buffers: &mut [Vec<u8>; 4]) {
                $fill(line(self.0, y, self.1, $num_colors), buffers)
            }
        }
    };
}

simd_image!(RgbImageSimd, JpegColorType::Ycbcr, 3, rgb_row_to_ycbcr);
simd_image!(YCbCrImageSimd, JpegColorType::Ycbcr, 3, split_row3);
simd_image!(GrayImageSimd, JpegColorType::Luma, 1, gray_row);

// ---------------------------------------------------------------- block extraction

/// Sums of `h` horizontally adjacent samples for 8 outputs (16-bit lanes), `h` ∈ {1, 2, 4}.
#[inline]
#[target_feature(enable = "sse4.1")]
fn row_sums(row: &[u8], h: usize) -> __m128i {
    match h {
        1 => _mm_cvtepu8_epi16(load8(&row[..8])),
        // (unsigned bytes times signed ones, pairs summed: at most 510, no saturation)
        2 => _mm_maddubs_epi16(load16(&row[..16]), _mm_set1_epi8(1)),
        _ => {
            let ones = _mm_set1_epi16(1);
            let a = _mm_madd_epi16(_mm_maddubs_epi16(load16(&row[..16]), _mm_set1_epi8(1)), ones);
            let b = _mm_madd_epi16(_mm_maddubs_epi16(load16(&row[16..32]), _mm_set1_epi8(1)), ones);
            _mm_packs_epi32(a, b)
        }
    }
}

/// `get_block_averaged` (and `get_block` for factor 1): the mean of each `h`×`v` group
/// with libjpeg's alternating bias ((n-1)/2 on even, n/2 on odd output columns), minus 128.
/// Factors other than 1, 2, 4 fall back to the scalar code.
#[target_feature(enable = "sse4.1")]
fn get_block_averaged_simd(
    data: &[u8],
    start_x: usize,
    start_y: usize,
    h: usize,
    v: usize,
    width: usize,
) -> AlignedBlock {
    if !matches!(h, 1 | 2 | 4) || !matches!(v, 1 | 2 | 4) {
        return crate::encoder::get_block_averaged(data, start_x, start_y, h, v, width);
    }
    let mut block = AlignedBlock::default();
    // SAFETY: SSE4.1 is available (this function is compiled for it, its caller checked).
    let rows = unsafe { block_rows(data, start_x, start_y, h, v, width) };
    for (y, row) in rows.into_iter().enumerate() {
        store_row(&mut block.data, y, row);
    }
    block
}

/// The rows of `get_block_averaged_simd` in registers; `h`, `v` ∈ {1, 2, 4}.
///
/// Always inlined, as `quantize_rows` is: as `#[inline]` `target_feature` functions LLVM
/// left both as calls passing the eight rows through memory (9–12 % of a colour or grayscale
/// encode). `#[inline(always)]` cannot be combined with `#[target_feature]`, so these two are
/// `unsafe` functions without it, inlined into their `target_feature` callers.
///
/// # Safety
/// The CPU must have SSE4.1 (every caller is a `target_feature(enable = "sse4.1")` function).
#[inline(always)]
unsafe fn block_rows(data: &[u8], start_x: usize, start_y: usize, h: usize, v: usize, width: usize) -> [__m128i; 8] {
    // SAFETY: SSE4.1 is available (by the caller).
    unsafe {
        match (h, v) {
            (1, 1) => block_rows_hv::<1, 1>(data, start_x, start_y, width),
            (2, 2) => block_rows_hv::<2, 2>(data, start_x, start_y, width),
            (2, 1) => block_rows_hv::<2, 1>(data, start_x, start_y, width),
            _ => block_rows_any(data, start_x, start_y, h, v, width),
        }
    }
}

/// `block_rows` for any factors in {1, 2, 4}.
#[inline(never)]
#[target_feature(enable = "sse4.1")]
fn block_rows_any(data: &[u8], start_x: usize, start_y: usize, h: usize, v: usize, width: usize) -> [__m128i; 8] {
    let n = h * v;
    let shift = _mm_cvtsi32_si128(n.trailing_zeros() as i32);
    let even = ((n - 1) / 2) as i16;
    let odd = (n / 2) as i16;
    let bias = _mm_setr_epi16(even, odd, even, odd, even, odd, even, odd);
    let mut rows = [bias; 8];
    for (y, out) in rows.iter_mut().enumerate() {
        let top = (start_y + y * v) * width + start_x;
        let mut sum = row_sums(&data[top..top + 8 * h], h);
        for dy in 1..v {
            let at = top + dy * width;
            sum = _mm_add_epi16(sum, row_sums(&data[at..at + 8 * h], h));
        }
        let mean = _mm_srl_epi16(_mm_add_epi16(sum, bias), shift);
        *out = _mm_sub_epi16(mean, _mm_set1_epi16(128));
    }
    rows
}

/// `block_rows` for constant factors (constant bias, shift and loop counts).
#[inline]
#[target_feature(enable = "sse4.1")]
fn block_rows_hv<const H: usize, const V: usize>(
    data: &[u8],
    start_x: usize,
    start_y: usize,
    width: usize,
) -> [__m128i; 8] {
    let n = H * V;
    let shift = _mm_cvtsi32_si128(n.trailing_zeros() as i32);
    let even = ((n - 1) / 2) as i16;
    let odd = (n / 2) as i16;
    let bias = _mm_setr_epi16(even, odd, even, odd, even, odd, even, odd);
    let mut rows = [bias; 8];
    for (y, out) in rows.iter_mut().enumerate() {
        let top = (start_y + y * V) * width + start_x;
        let mut sum = row_sums(&data[top..top + 8 * H], H);
        for dy in 1..V {
            let at = top + dy * width;
            sum = _mm_add_epi16(sum, row_sums(&data[at..at + 8 * H], H));
        }
        let mean = if n == 1 { sum } else { _mm_srl_epi16(_mm_add_epi16(sum, bias), shift) };
        *out = _mm_sub_epi16(mean, _mm_set1_epi16(128));
    }
    rows
}

// ---------------------------------------------------------------- forward DCT

const CONST_BITS: i32 = 13;
const PASS1_BITS: i32 = 2;
const F_0_298: i16 = 2446;
const F_0_390: i16 = 3196;
const F_0_541: i16 = 4433;
const F_0_765: i16 = 6270;
const F_0_899: i16 = 7373;
const F_1_175: i16 = 9633;
const F_1_501: i16 = 12299;
const F_1_847: i16 = 15137;
const F_1_961: i16 = 16069;
const F_2_053: i16 = 16819;
const F_2_562: i16 = 20995;
const F_3_072: i16 = 25172;

#[inline]
#[target_feature(enable = "sse4.1")]
fn transpose8(r: [__m128i; 8]) -> [__m128i; 8] {
    let a0 = _mm_unpacklo_epi16(r[0], r[1]);
    let a1 = _mm_unpackhi_epi16(r[0], r[1]);
    let a2 = _mm_unpacklo_epi16(r[2], r[3]);
    let a3 = _mm_unpackhi_epi16(r[2], r[3]);
    let a4 = _mm_unpacklo_epi16(r[4], r[5]);
    let a5 = _mm_unpackhi_epi16(r[4], r[5]);
    let a6 = _mm_unpacklo_epi16(r[6], r[7]);
    let a7 = _mm_unpackhi_epi16(r[6], r[7]);
    let b0 = _mm_unpacklo_epi32(a0, a2);
    let b1 = _mm_unpackhi_epi32(a0, a2);
    let b2 = _mm_unpacklo_epi32(a1, a3);
    let b3 = _mm_unpackhi_epi32(a1, a3);
    let b4 = _mm_unpacklo_epi32(a4, a6);
    let b5 = _mm_unpackhi_epi32(a4, a6);
    let b6 = _mm_unpacklo_epi32(a5, a7);
    let b7 = _mm_unpackhi_epi32(a5, a7);
    [
        _mm_unpacklo_epi64(b0, b4),
        _mm_unpackhi_epi64(b0, b4),
        _mm_unpacklo_epi64(b1, b5),
        _mm_unpackhi_epi64(b1, b5),
        _mm_unpacklo_epi64(b2, b6),
        _mm_unpackhi_epi64(b2, b6),
        _mm_unpacklo_epi64(b3, b7),
        _mm_unpackhi_epi64(b3, b7),
    ]
}

/// A multiplier pair (a, b) in every 32-bit lane, for `pmaddwd`.
#[inline]
#[target_feature(enable = "sse4.1")]
fn pair(a: i16, b: i16) -> __m128i {
    _mm_set1_epi32((i32::from(b) << 16) | i32::from(a as u16))
}

/// `(lo, hi)` 32-bit sums, descaled by `N` with rounding and narrowed back to 16 bits.
#[inline]
#[target_feature(enable = "sse4.1")]
fn descale2<const N: i32>(lo: __m128i, hi: __m128i) -> __m128i {
    let round = _mm_set1_epi32(1 << (N - 1));
    _mm_packs_epi32(_mm_srai_epi32::<N>(_mm_add_epi32(lo, round)), _mm_srai_epi32::<N>(_mm_add_epi32(hi, round)))
}

/// One 1-D pass of `fdct` over 8 vectors (lanes independent). All intermediate values fit
/// 16 bits for 8-bit samples (as in libjpeg-turbo's SIMD islow DCT); products are summed in
/// 32 bits, so the results equal the scalar code's. `N` is the pass's descale shift.
#[inline]
#[target_feature(enable = "sse4.1")]
fn dct_pass<const PASS2: bool, const N: i32>(d: [__m128i; 8]) -> [__m128i; 8] {
    let tmp0 = _mm_add_epi16(d[0], d[7]);
    let tmp7 = _mm_sub_epi16(d[0], d[7]);
    let tmp1 = _mm_add_epi16(d[1], d[6]);
    let tmp6 = _mm_sub_epi16(d[1], d[6]);
    let tmp2 = _mm_add_epi16(d[2], d[5]);
    let tmp5 = _mm_sub_epi16(d[2], d[5]);
    let tmp3 = _mm_add_epi16(d[3], d[4]);
    let tmp4 = _mm_sub_epi16(d[3], d[4]);

    let tmp10 = _mm_add_epi16(tmp0, tmp3);
    let tmp13 = _mm_sub_epi16(tmp0, tmp3);
    let tmp11 = _mm_add_epi16(tmp1, tmp2);
    let tmp12 = _mm_sub_epi16(tmp1, tmp2);

    let (out0, out4) = if PASS2 {
        let round = _mm_set1_epi16(1 << (PASS1_BITS - 1));
        (
            _mm_srai_epi16::<PASS1_BITS>(_mm_add_epi16(_mm_add_epi16(tmp10, tmp11), round)),
            _mm_srai_epi16::<PASS1_BITS>(_mm_add_epi16(_mm_sub_epi16(tmp10, tmp11), round)),
        )
    } else {
        (
            _mm_slli_epi16::<PASS1_BITS>(_mm_add_epi16(tmp10, tmp11)),
            _mm_slli_epi16::<PASS1_BITS>(_mm_sub_epi16(tmp10, tmp11)),
        )
    };
    // z1 = (tmp12 + tmp13)·c0.541; out2 = z1 + tmp13·c0.765; out6 = z1 − tmp12·c1.847
    let t1312_lo = _mm_unpacklo_epi16(tmp13, tmp12);
    let t1312_hi = _mm_unpackhi_epi16(tmp13, tmp12);
    let k = pair(F_0_541 + F_0_765, F_0_541);
    let out2 = descale2::<N>(_mm_madd_epi16(t1312_lo, k), _mm_madd_epi16(t1312_hi, k));
    let k = pair(F_0_541, F_0_541 - F_1_847);
    let out6 = descale2::<N>(_mm_madd_epi16(t1312_lo, k), _mm_madd_epi16(t1312_hi, k));

    // Odd part; z5 = (z3 + z4)·c1.175 is folded into the z3/z4 rotations, z1 and z2
    // into the tmp4..tmp7 ones.
    let z3 = _mm_add_epi16(tmp4, tmp6);
    let z4 = _mm_add_epi16(tmp5, tmp7);
    let z34_lo = _mm_unpacklo_epi16(z3, z4);
    let z34_hi = _mm_unpackhi_epi16(z3, z4);
    let k = pair(F_1_175 - F_1_961, F_1_175);
    let (z3_lo, z3_hi) = (_mm_madd_epi16(z34_lo, k), _mm_madd_epi16(z34_hi, k));
    let k = pair(F_1_175, F_1_175 - F_0_390);
    let (z4_lo, z4_hi) = (_mm_madd_epi16(z34_lo, k), _mm_madd_epi16(z34_hi, k));

    let t47_lo = _mm_unpacklo_epi16(tmp4, tmp7);
    let t47_hi = _mm_unpackhi_epi16(tmp4, tmp7);
    let t56_lo = _mm_unpacklo_epi16(tmp5, tmp6);
    let t56_hi = _mm_unpackhi_epi16(tmp5, tmp6);

    // out7 = tmp4·c0.298 + z1·(−c0.899) + z3, z1 = tmp4 + tmp7
    let k = pair(F_0_298 - F_0_899, -F_0_899);
    let out7 = descale2::<N>(
        _mm_add_epi32(_mm_madd_epi16(t47_lo, k), z3_lo),
        _mm_add_epi32(_mm_madd_epi16(t47_hi, k), z3_hi),
    );
    // out1 = tmp7·c1.501 + z1·(−c0.899) + z4
    let k = pair(-F_0_899, F_1_501 - F_0_899);
    let out1 = descale2::<N>(
        _mm_add_epi32(_mm_madd_epi16(t47_lo, k), z4_lo),
        _mm_add_epi32(_mm_madd_epi16(t47_hi, k), z4_hi),
    );
    // out5 = tmp5·c2.053 + z2·(−c2.562) + z4, z2 = tmp5 + tmp6
    let k = pair(F_2_053 - F_2_562, -F_2_562);
    let out5 = descale2::<N>(
        _mm_add_epi32(_mm_madd_epi16(t56_lo, k), z4_lo),
        _mm_add_epi32(_mm_madd_epi16(t56_hi, k), z4_hi),
    );
    // out3 = tmp6·c3.072 + z2·(−c2.562) + z3
    let k = pair(-F_2_562, F_3_072 - F_2_562);
    let out3 = descale2::<N>(
        _mm_add_epi32(_mm_madd_epi16(t56_lo, k), z3_lo),
        _mm_add_epi32(_mm_madd_epi16(t56_hi, k), z3_hi),
    );

    [out0, out1, out2, out3, out4, out5, out6, out7]
}

/// The crate's `fdct` (libjpeg's `jpeg_fdct_islow`), bit for bit.
#[target_feature(enable = "sse4.1")]
fn fdct_simd(block: &mut AlignedBlock) {
    let data = &mut block.data;
    let mut rows = [_mm_setzero_si128(); 8];
    for (y, row) in rows.iter_mut().enumerate() {
        *row = load_row(data, y);
    }
    for (y, v) in fdct_rows(rows).into_iter().enumerate() {
        store_row(data, y, v);
    }
}

/// `fdct_simd` on 8 row vectors in registers.
#[inline]
#[target_feature(enable = "sse4.1")]
fn fdct_rows(rows: [__m128i; 8]) -> [__m128i; 8] {
    // Pass 1 runs along rows: with columns in vectors, lanes are rows.
    let pass1 = dct_pass::<false, { CONST_BITS - PASS1_BITS }>(transpose8(rows));
    dct_pass::<true, { CONST_BITS + PASS1_BITS }>(transpose8(pass1))
}

// ---------------------------------------------------------------- quantisation

/// The zig-zag reorder of 8 row vectors (natural order) into 8 vectors of coefficients
/// 0..63 in zig-zag order, as `wasm_simd::zigzag`: rows paired by halves (`lo`, `hi`, `lh`),
/// each pair or row shuffled into place (other lanes zeroed) and OR-ed, 22 shuffles.
#[inline]
#[target_feature(enable = "sse4.1")]
fn zigzag(n: [__m128i; 8]) -> [__m128i; 8] {
    macro_rules! s {
        ($v:expr, $k:expr) => {
            _mm_shuffle_epi8($v, mask(&ZIGZAG_SWIZZLES[$k]))
        };
    }
    macro_rules! or3 {
        ($a:expr, $b:expr, $c:expr) => {
            _mm_or_si128(_mm_or_si128($a, $b), $c)
        };
    }
    let lo = |a, b| _mm_unpacklo_epi64(a, b);
    let hi = |a, b| _mm_unpackhi_epi64(a, b);
    // low half of `a`, high half of `b`
    let lh = |a, b| _mm_blend_epi16::<0xF0>(a, b);
    let lo23 = lo(n[2], n[3]);
    [
        _mm_or_si128(s!(lo(n[0], n[1]), 0), s!(n[2], 1)),
        or3!(s!(lo23, 2), s!(lh(n[4], n[0]), 3), s!(n[1], 4)),
        or3!(s!(lo23, 5), s!(lo(n[4], n[5]), 6), s!(lh(n[6], n[1]), 7)),
        or3!(s!(n[3], 8), s!(hi(n[1], n[2]), 9), s!(n[0], 10)),
        or3!(s!(n[4], 11), s!(lo(n[5], n[6]), 12), s!(n[7], 13)),
        or3!(s!(hi(n[2], n[3]), 14), s!(hi(n[1], n[4]), 15), s!(lh(n[6], n[5]), 16)),
        or3!(s!(lh(n[7], n[6]), 17), s!(hi(n[4], n[5]), 18), s!(n[3], 19)),
        _mm_or_si128(s!(hi(n[6], n[7]), 20), s!(n[5], 21)),
    ]
}

/// Byte masks of `zigzag` (`wasm_simd::ZIGZAG_SWIZZLES`): lane p takes the bytes of the
/// source lane holding zig-zag coefficient 8k + p, if no earlier source of output vector k
/// holds it, else 0x80.
static ZIGZAG_SWIZZLES: [[u8; 16]; 22] = [
    [0x00, 0x01, 0x02, 0x03, 0x08, 0x09, 0x80, 0x80, 0x0a, 0x0b, 0x04, 0x05, 0x06, 0x07, 0x0c, 0x0d],
    [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 0x01, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80],
    [0x02, 0x03, 0x08, 0x09, 0x80, 0x80, 0x0a, 0x0b, 0x04, 0x05, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80],
    [0x80, 0x80, 0x80, 0x80, 0x00, 0x01, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x08, 0x09, 0x0a, 0x0b],
    [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x06, 0x07, 0x80, 0x80, 0x80, 0x80],
    [0x80, 0x80, 0x06, 0x07, 0x0c, 0x0d, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80],
    [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02, 0x03, 0x08, 0x09, 0x80, 0x80, 0x0a, 0x0b, 0x04, 0x05],
    [0x08, 0x09, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 0x01, 0x80, 0x80, 0x80, 0x80],
    [0x06, 0x07, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x08, 0x09],
    [0x80, 0x80, 0x08, 0x09, 0x02, 0x03, 0x80, 0x80, 0x80, 0x80, 0x04, 0x05, 0x0a, 0x0b, 0x80, 0x80],
    [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x0c, 0x0d, 0x0e, 0x0f, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80],
    [0x06, 0x07, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x08, 0x09],
    [0x80, 0x80, 0x04, 0x05, 0x0a, 0x0b, 0x80, 0x80, 0x80, 0x80, 0x0c, 0x0d, 0x06, 0x07, 0x80, 0x80],
    [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 0x01, 0x02, 0x03, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80],
    [0x0a, 0x0b, 0x04, 0x05, 0x80, 0x80, 0x06, 0x07, 0x0c, 0x0d, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80],
    [0x80, 0x80, 0x80, 0x80, 0x06, 0x07, 0x80, 0x80, 0x80, 0x80, 0x0a, 0x0b, 0x80, 0x80, 0x80, 0x80],
    [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x08, 0x09, 0x06, 0x07],
    [0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80],
    [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x0a, 0x0b, 0x04, 0x05, 0x80, 0x80, 0x06, 0x07, 0x0c, 0x0d],
    [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x0e, 0x0f, 0x80, 0x80, 0x80, 0x80],
    [0x02, 0x03, 0x08, 0x09, 0x0a, 0x0b, 0x04, 0x05, 0x80, 0x80, 0x06, 0x07, 0x0c, 0x0d, 0x0e, 0x0f],
    [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x0e, 0x0f, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80],
];

/// `QuantizationTable::quantize` for all 64 coefficients, then the zig-zag reorder.
#[target_feature(enable = "sse4.1")]
fn quantize_simd(block: &AlignedBlock, q_block: &mut AlignedBlock, table: &QuantizationTable) {
    let mut rows = [_mm_setzero_si128(); 8];
    for (y, row) in rows.iter_mut().enumerate() {
        *row = load_row(&block.data, y);
    }
    // SAFETY: SSE4.1 is available (this function is compiled for it, its caller checked).
    let coefficients = unsafe { quantize_rows(rows, table) };
    for (k, v) in coefficients.into_iter().enumerate() {
        store_row(&mut q_block.data, k, v);
    }
}

/// `quantize_simd` on 8 row vectors in registers; returns zig-zag ordered vectors.
/// `(|x| + correction) · reciprocal >> 15` with the sign restored: |x| + correction < 2^16
/// and reciprocal < 2^15, so the product P < 2^31 and P >> 15 is its high 16 bits
/// (`pmulhuw`) shifted left once with bit 15 of its low 16 bits (`pmullw`) shifted in;
/// the quotient is < 2^15.
///
/// # Safety
/// The CPU must have SSE4.1 (always inlined into `target_feature` callers, see `block_rows`).
#[inline(always)]
unsafe fn quantize_rows(rows: [__m128i; 8], table: &QuantizationTable) -> [__m128i; 8] {
    let (recip, corr) = table.simd_tables();
    // SAFETY: SSE4.1 is available (by the caller).
    unsafe {
        let mut natural = [_mm_setzero_si128(); 8];
        for k in 0..8 {
            let x = rows[k];
            let sign = _mm_srai_epi16::<15>(x);
            let t = _mm_add_epi16(_mm_abs_epi16(x), load_row(corr, k));
            let r = load_row(recip, k);
            let q = _mm_or_si128(
                _mm_slli_epi16::<1>(_mm_mulhi_epu16(t, r)),
                _mm_srli_epi16::<15>(_mm_mullo_epi16(t, r)),
            );
            natural[k] = _mm_sub_epi16(_mm_xor_si128(q, sign), sign);
        }
        zigzag(natural)
    }
}

// ---------------------------------------------------------------- entropy coding help

/// Bit `i` set when coefficient `i` (zig-zag order) is non-zero.
#[target_feature(enable = "sse4.1")]
fn nonzero_mask(block: &AlignedBlock) -> u64 {
    let zero = _mm_setzero_si128();
    let mut mask = 0u64;
    for k in 0..4 {
        let a = _mm_cmpeq_epi16(load_row(&block.data, 2 * k), zero);
        let b = _mm_cmpeq_epi16(load_row(&block.data, 2 * k + 1), zero);
        let bits = _mm_movemask_epi8(_mm_packs_epi16(a, b)) as u32 as u64;
        mask |= bits << (16 * k);
    }
    !mask
}

/// Each kernel against the scalar code it replaces, exactly, where the CPU has SSE4.1
/// (`cargo test --lib --features simd`; tests/encode_identity compares whole streams).
#[cfg(test)]
mod tests {
    use alloc::vec;
    use alloc::vec::Vec;

    use super::*;
    use crate::encoder::DefaultOperations;
    use crate::quantization::QuantizationTableType;

    /// xorshift64*: reproducible noise.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }

        fn byte(&mut self) -> u8 {
            (self.next() >> 56) as u8
        }
    }

    /// Sample blocks (values −128..=127): noise, flat extremes, stripes and checkerboards
    /// at full swing, and noise of small amplitude.
    fn sample_blocks(rng: &mut Rng, noise: usize) -> Vec<AlignedBlock> {
        let mut blocks = Vec::new();
        for v in [-128i16, 127, 0, -1] {
            blocks.push(AlignedBlock::new([v; 64]));
        }
        for kind in 0..6 {
            let mut data = [0i16; 64];
            for (i, d) in data.iter_mut().enumerate() {
                let (x, y) = (i % 8, i / 8);
                let high = match kind {
                    0 => (x + y) % 2 == 0,
                    1 => x % 2 == 0,
                    2 => y % 2 == 0,
                    3 => x < 4,
                    4 => (x / 2 + y / 2) % 2 == 0,
                    _ => (x ^ y) & 4 != 0,
                };
                *d = if high { 127 } else { -128 };
            }
            blocks.push(AlignedBlock::new(data));
            let mut inverted = data;
            inverted.iter_mut().for_each(|d| *d = -1 - *d);
            blocks.push(AlignedBlock::new(inverted));
        }
        for n in 0..noise {
            let mut data = [0i16; 64];
            for d in &mut data {
                let b = i16::from(rng.byte()) - 128;
                *d = if n % 3 == 0 { b / 16 } else { b };
            }
            blocks.push(AlignedBlock::new(data));
        }
        blocks
    }

    #[test]
    fn fdct_equals_the_scalar_fdct() {
        if !available() {
            return;
        }
        let mut rng = Rng(0x1234_5678_9ABC_DEF1);
        for block in sample_blocks(&mut rng, 100_000) {
            let (mut ours, mut scalar) = (block, block);
            X86SimdOperations::fdct(&mut ours);
            crate::fdct::fdct(&mut scalar);
            assert_eq!(ours.data, scalar.data, "input {:?}", block.data);
        }
    }

    /// Every table type, quality 1–100, luma and chroma, with and without the dead zone, on
    /// FDCT outputs and on every coefficient value the FDCT can give (±8,192, and more).
    #[test]
    fn quantisation_equals_the_scalar_quantisation() {
        if !available() {
            return;
        }
        let mut rng = Rng(0xDEAD_BEEF_0BAD_F00D);
        let mut inputs: Vec<AlignedBlock> = sample_blocks(&mut rng, 200)
            .into_iter()
            .map(|mut b| {
                crate::fdct::fdct(&mut b);
                b
            })
            .collect();
        for start in (-9000i32..9000).step_by(64) {
            let mut data = [0i16; 64];
            for (i, d) in data.iter_mut().enumerate() {
                *d = (start + i as i32) as i16;
            }
            inputs.push(AlignedBlock::new(data));
        }
        let mut types = vec![
            QuantizationTableType::Default,
            QuantizationTableType::Flat,
            QuantizationTableType::CustomMsSsim,
            QuantizationTableType::CustomPsnrHvs,
            QuantizationTableType::ImageMagick,
            QuantizationTableType::KleinSilversteinCarney,
            QuantizationTableType::DentalXRays,
            QuantizationTableType::VisualDetectionModel,
            QuantizationTableType::ImprovedDetectionModel,
        ];
        let mut custom = [0u16; 64];
        for (i, c) in custom.iter_mut().enumerate() {
            *c = [1, 2, 255, 2048, 4096][i % 5];
        }
        types.push(QuantizationTableType::Custom(alloc::boxed::Box::new(custom)));
        for table_type in &types {
            for quality in 1..=100 {
                for (luma, dead_zone) in [(true, true), (true, false), (false, true), (false, false)] {
                    let table = QuantizationTable::new_with_quality(table_type, quality, luma, dead_zone);
                    for block in &inputs {
                        let (mut ours, mut scalar) = (AlignedBlock::default(), AlignedBlock::default());
                        X86SimdOperations::quantize_block(block, &mut ours, &table);
                        DefaultOperations::quantize_block(block, &mut scalar, &table);
                        assert_eq!(ours.data, scalar.data, "{table_type:?} q{quality} luma {luma} dead zone {dead_zone}");
                        let mask = X86SimdOperations::nonzero_ac_mask(&ours).unwrap();
                        let expected = (1..64).fold(0u64, |m, i| m | u64::from(ours.data[i] != 0) << i);
                        assert_eq!(mask, expected);
                    }
                }
            }
        }
    }

    /// Block extraction with every factor (3 takes the scalar fallback), averaged or not, at
    /// every offset of a noisy plane, and the fused extraction + FDCT + quantisation (and
    /// trellis input) against the scalar operations.
    #[test]
    fn block_extraction_and_encode_block_equal_the_scalar_code() {
        if !available() {
            return;
        }
        let mut rng = Rng(42);
        let width = 8 * 4 * 3 + 5;
        let height = 8 * 4 + 3;
        let mut planes = vec![vec![0u8; width * height], vec![255u8; width * height]];
        planes.push((0..width * height).map(|_| rng.byte()).collect());
        planes.push((0..width * height).map(|i| if (i + i / width) % 2 == 0 { 255 } else { 0 }).collect());
        let tables = [
            QuantizationTable::new_with_quality(&QuantizationTableType::Default, 90, true, true),
            QuantizationTable::new_with_quality(&QuantizationTableType::Default, 1, false, false),
            QuantizationTable::new_with_quality(&QuantizationTableType::Flat, 100, true, false),
        ];
        for data in &planes {
            for h in 1..=4 {
                for v in 1..=4 {
                    for start_y in [0, 1, height - 8 * v] {
                        for start_x in [0, 1, 3, width - 8 * h] {
                            let ours = X86SimdOperations::get_block_averaged(data, start_x, start_y, h, v, width);
                            let scalar = crate::encoder::get_block_averaged(data, start_x, start_y, h, v, width);
                            assert_eq!(ours.data, scalar.data, "averaged {h}x{v} at ({start_x}, {start_y})");
                            let ours = X86SimdOperations::get_block(data, start_x, start_y, h, v, width);
                            let scalar = crate::encoder::get_block(data, start_x, start_y, h, v, width);
                            assert_eq!(ours.data, scalar.data, "picked {h}x{v} at ({start_x}, {start_y})");
                            for table in &tables {
                                for average in [false, true] {
                                    let ours = X86SimdOperations::encode_block(
                                        data, start_x, start_y, h, v, width, average, table, None,
                                    );
                                    let scalar = DefaultOperations::encode_block(
                                        data, start_x, start_y, h, v, width, average, table, None,
                                    );
                                    assert_eq!(ours.data, scalar.data, "encode_block {h}x{v} average {average}");
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// All 2^24 colours, and every row length up to 100 pixels (tails narrower than 16).
    #[test]
    fn colour_conversion_and_row_split_equal_the_scalar_code() {
        if !available() {
            return;
        }
        let mut line = vec![0u8; 3 * 4096];
        for r in 0..=255u8 {
            for g_block in 0..16u32 {
                for (i, px) in line.chunks_exact_mut(3).enumerate() {
                    px[0] = r;
                    px[1] = (g_block * 16 + i as u32 / 256) as u8;
                    px[2] = (i % 256) as u8;
                }
                let mut ours: [Vec<u8>; 4] = Default::default();
                rgb_row_to_ycbcr(&line, &mut ours);
                for (i, px) in line.chunks_exact(3).enumerate() {
                    let (y, cb, cr) = rgb_to_ycbcr(px[0], px[1], px[2]);
                    assert_eq!((ours[0][i], ours[1][i], ours[2][i]), (y, cb, cr), "{px:?}");
                }
            }
        }
        let mut rng = Rng(7);
        for n in 0..=100 {
            let line: Vec<u8> = (0..3 * n).map(|_| rng.byte()).collect();
            // appended after what the rows hold already
            let mut ours: [Vec<u8>; 4] = [vec![1], vec![2], vec![3], vec![]];
            let mut split: [Vec<u8>; 4] = [vec![1], vec![2], vec![3], vec![]];
            rgb_row_to_ycbcr(&line, &mut ours);
            split_row3(&line, &mut split);
            let mut expected: [Vec<u8>; 4] = [vec![1], vec![2], vec![3], vec![]];
            let mut expected_split: [Vec<u8>; 4] = [vec![1], vec![2], vec![3], vec![]];
            for px in line.chunks_exact(3) {
                let (y, cb, cr) = rgb_to_ycbcr(px[0], px[1], px[2]);
                expected[0].push(y);
                expected[1].push(cb);
                expected[2].push(cr);
                for c in 0..3 {
                    expected_split[c].push(px[c]);
                }
            }
            assert_eq!(ours, expected, "{n} pixels");
            assert_eq!(split, expected_split, "{n} pixels");
            // the fallbacks (CPUs without SSE4.1) and the crate's own adapters
            let mut fallback: [Vec<u8>; 4] = [vec![1], vec![2], vec![3], vec![]];
            let mut fallback_split: [Vec<u8>; 4] = [vec![1], vec![2], vec![3], vec![]];
            rgb_row_to_ycbcr_scalar(&line, &mut fallback);
            split_row3_scalar(&line, &mut fallback_split);
            assert_eq!(fallback, expected, "{n} pixels");
            assert_eq!(fallback_split, expected_split, "{n} pixels");
            let mut adapter: [Vec<u8>; 4] = [vec![1], vec![2], vec![3], vec![]];
            let mut adapter_split: [Vec<u8>; 4] = [vec![1], vec![2], vec![3], vec![]];
            let mut simd_adapter: [Vec<u8>; 4] = [vec![1], vec![2], vec![3], vec![]];
            let mut simd_adapter_split: [Vec<u8>; 4] = [vec![1], vec![2], vec![3], vec![]];
            crate::image_buffer::RgbImage(&line, n as u16, 1).fill_buffers(0, &mut adapter);
            crate::image_buffer::YCbCrImage(&line, n as u16, 1).fill_buffers(0, &mut adapter_split);
            RgbImageSimd(&line, n as u16, 1).fill_buffers(0, &mut simd_adapter);
            YCbCrImageSimd(&line, n as u16, 1).fill_buffers(0, &mut simd_adapter_split);
            assert_eq!(adapter, expected, "{n} pixels");
            assert_eq!(adapter_split, expected_split, "{n} pixels");
            assert_eq!(simd_adapter, expected, "{n} pixels");
            assert_eq!(simd_adapter_split, expected_split, "{n} pixels");
        }
    }
}
