//! [zarr-jpeg patch] WebAssembly `simd128` kernels, compiled only when the target enables
//! the feature (`-C target-feature=+simd128`); every kernel gives bit-identical results to
//! the scalar code it replaces (with the feature `scalar-reference` the scalar path stays
//! callable through `Encoder::set_scalar_reference` so tests can compare the two).
//!
//! - RGB → YCbCr (the crate's 16-bit fixed-point formula, as `rgb_to_ycbcr`), 16 pixels
//!   per step, and the YCbCr / grayscale row copies;
//! - 8×8 block extraction, with the `Average` chroma downsampling for factors 1, 2 and 4
//!   (libjpeg's alternating rounding bias);
//! - the islow forward DCT in 16-bit lanes with `i32x4.dot_i16x8_s` for the rotations
//!   (the scheme of libjpeg-turbo's SIMD `jfdctint`, exact for 8-bit samples);
//! - quantisation with the same reciprocal and correction as the scalar code;
//! - a 64-bit mask of non-zero coefficients, so Huffman statistics and coding visit only
//!   the non-zero ones.
//!
//! V8 rebuilds each `v128.const` and each two-vector constant shuffle's masks from
//! immediates at every use, so hot loops take constants and byte masks through
//! `core::hint::black_box` (kept in registers or loaded) and use swizzles.

use core::arch::wasm32::*;

use alloc::vec::Vec;

use crate::encoder::{AlignedBlock, BlockTrellis, JpegColorType, Operations};
use crate::image_buffer::{ImageBuffer, rgb_to_ycbcr};
use crate::quantization::QuantizationTable;

pub(crate) struct WasmSimdOperations;

impl Operations for WasmSimdOperations {
    #[inline(always)]
    fn fdct(data: &mut AlignedBlock) {
        fdct_simd(data);
    }

    #[inline(always)]
    fn quantize_block(block: &AlignedBlock, q_block: &mut AlignedBlock, table: &QuantizationTable) {
        quantize_simd(block, q_block, table);
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
        if col_stride == 1 && row_stride == 1 {
            get_block_averaged_simd(data, start_x, start_y, 1, 1, width)
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
        get_block_averaged_simd(data, start_x, start_y, col_stride, row_stride, width)
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
        if !simd_factors || (!average && (col_stride, row_stride) != (1, 1)) {
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
        let rows = fdct_rows(block_rows(data, start_x, start_y, col_stride, row_stride, width));
        if let Some(costs) = trellis {
            // the FDCT output in natural order, trellis-quantised
            let mut block = AlignedBlock::default();
            for (k, v) in rows.into_iter().enumerate() {
                store_row(&mut block.data, k, v);
            }
            return crate::trellis::quantize(&block, table, costs);
        }
        let coefficients = quantize_rows(rows, table);
        let mut q_block = AlignedBlock::default();
        for (k, v) in coefficients.into_iter().enumerate() {
            store_row(&mut q_block.data, k, v);
        }
        q_block
    }

    #[inline(always)]
    fn nonzero_ac_mask(block: &AlignedBlock) -> Option<u64> {
        Some(nonzero_mask(block) & !1)
    }
}

#[inline(always)]
fn load16(bytes: &[u8]) -> v128 {
    assert!(bytes.len() >= 16);
    // SAFETY: 16 readable bytes checked above; v128.load has no alignment requirement.
    unsafe { v128_load(bytes.as_ptr() as *const v128) }
}

#[inline(always)]
fn load8(bytes: &[u8]) -> v128 {
    assert!(bytes.len() >= 8);
    // SAFETY: 8 readable bytes checked above (the upper half of the vector is zero).
    unsafe { v128_load64_zero(bytes.as_ptr() as *const u64) }
}

#[inline(always)]
fn load_row(block: &[i16; 64], row: usize) -> v128 {
    let row = &block[row * 8..row * 8 + 8];
    // SAFETY: the slice holds 8 i16 (16 bytes).
    unsafe { v128_load(row.as_ptr() as *const v128) }
}

#[inline(always)]
fn store_row(block: &mut [i16; 64], row: usize, v: v128) {
    let row = &mut block[row * 8..row * 8 + 8];
    // SAFETY: the slice holds 8 i16 (16 bytes).
    unsafe { v128_store(row.as_mut_ptr() as *mut v128, v) }
}

// ---------------------------------------------------------------- colour conversion

/// Splits 16 interleaved RGB pixels (48 bytes) into R, G and B vectors: each output is
/// three swizzles (one per input vector, other lanes zeroed) OR-ed, with the byte masks
/// read through an opaque reference (`DEINTERLEAVE3`; as constant two-vector shuffles the
/// engine would rebuild two masks from immediates for each).
#[inline(always)]
fn deinterleave3(px: &[u8], masks: &[[u8; 16]; 9]) -> (v128, v128, v128) {
    let v = [load16(&px[0..16]), load16(&px[16..32]), load16(&px[32..48])];
    let m = |k: usize| load16(&masks[k]);
    let channel = |c: usize| {
        v128_or(
            v128_or(i8x16_swizzle(v[0], m(3 * c)), i8x16_swizzle(v[1], m(3 * c + 1))),
            i8x16_swizzle(v[2], m(3 * c + 2)),
        )
    };
    (channel(0), channel(1), channel(2))
}

/// Byte masks of `deinterleave3`: for channel c and input vector v, lane p takes byte
/// 3p + c − 16v when it lies in that vector, else 0x80 (zero).
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

/// The colour conversion's constants, made once per row and hidden from the optimiser
/// (`black_box`), so they stay in registers: left as `v128.const` inside the loop, each use
/// is rebuilt from immediates by the engine.
#[derive(Clone, Copy)]
struct YccConstants {
    y_rg: v128,
    y_gb: v128,
    cb_rg: v128,
    cr_gb: v128,
    y_round: v128,
    c_offset: v128,
}

impl YccConstants {
    #[inline(always)]
    fn new() -> Self {
        core::hint::black_box(YccConstants {
            y_rg: i16x8(19595, 19235, 19595, 19235, 19595, 19235, 19595, 19235),
            y_gb: i16x8(19235, 7471, 19235, 7471, 19235, 7471, 19235, 7471),
            cb_rg: i16x8(-11059, -21709, -11059, -21709, -11059, -21709, -11059, -21709),
            cr_gb: i16x8(-27439, -5329, -27439, -5329, -27439, -5329, -27439, -5329),
            y_round: i32x4_splat(0x7FFF),
            c_offset: i32x4_splat((128 << 16) + 0x7FFF),
        })
    }
}

/// Y, Cb and Cr of 4 pixels from `rg` = (r, g) and `gb` = (g, b) pairs in 16-bit lanes
/// and `r`, `b` in 32-bit lanes: exactly `rgb_to_ycbcr`'s integer sums, split so every
/// multiplier fits 16 bits (38470 = 2 · 19235, 32768 · x = x << 15).
#[inline(always)]
fn ycc4(k: &YccConstants, rg: v128, gb: v128, r: v128, b: v128) -> (v128, v128, v128) {
    let y = i32x4_add(
        i32x4_add(i32x4_dot_i16x8(rg, k.y_rg), i32x4_dot_i16x8(gb, k.y_gb)),
        k.y_round,
    );
    let cb = i32x4_add(i32x4_add(i32x4_dot_i16x8(rg, k.cb_rg), i32x4_shl(b, 15)), k.c_offset);
    let cr = i32x4_add(i32x4_add(i32x4_dot_i16x8(gb, k.cr_gb), i32x4_shl(r, 15)), k.c_offset);
    // Every sum is non-negative, so the arithmetic shift equals the scalar `>> 16`.
    (i32x4_shr(y, 16), i32x4_shr(cb, 16), i32x4_shr(cr, 16))
}

/// Appends `n` bytes to each of three rows: `fill` gets their uninitialised tails
/// (exactly `n` bytes each) and must write every byte.
#[inline(always)]
fn append3(
    buffers: &mut [Vec<u8>; 4],
    n: usize,
    fill: impl FnOnce(&mut [core::mem::MaybeUninit<u8>], &mut [core::mem::MaybeUninit<u8>], &mut [core::mem::MaybeUninit<u8>]),
) {
    let [b0, b1, b2, _] = buffers;
    b0.reserve(n);
    b1.reserve(n);
    b2.reserve(n);
    fill(&mut b0.spare_capacity_mut()[..n], &mut b1.spare_capacity_mut()[..n], &mut b2.spare_capacity_mut()[..n]);
    // SAFETY: `fill` initialised the first `n` spare bytes of each row.
    unsafe {
        b0.set_len(b0.len() + n);
        b1.set_len(b1.len() + n);
        b2.set_len(b2.len() + n);
    }
}

#[inline(always)]
fn store16(dst: &mut [core::mem::MaybeUninit<u8>], v: v128) {
    let dst = &mut dst[..16];
    // SAFETY: 16 writable bytes checked above; v128.store has no alignment requirement.
    unsafe { v128_store(dst.as_mut_ptr() as *mut v128, v) }
}

/// Byte masks of `rgb_row_to_ycbcr` for 4 pixels in bytes 0..12 of a vector: (r, g) and
/// (g, b) pairs zero-extended to 16-bit lanes, and r and b zero-extended to 32-bit lanes,
/// the operand shapes of `ycc4`, each one swizzle straight from the loaded bytes.
static YCC4_OPERANDS: [[u8; 16]; 4] = [
    [0x00, 0x80, 0x01, 0x80, 0x03, 0x80, 0x04, 0x80, 0x06, 0x80, 0x07, 0x80, 0x09, 0x80, 0x0a, 0x80],
    [0x01, 0x80, 0x02, 0x80, 0x04, 0x80, 0x05, 0x80, 0x07, 0x80, 0x08, 0x80, 0x0a, 0x80, 0x0b, 0x80],
    [0x00, 0x80, 0x80, 0x80, 0x03, 0x80, 0x80, 0x80, 0x06, 0x80, 0x80, 0x80, 0x09, 0x80, 0x80, 0x80],
    [0x02, 0x80, 0x80, 0x80, 0x05, 0x80, 0x80, 0x80, 0x08, 0x80, 0x80, 0x80, 0x0b, 0x80, 0x80, 0x80],
];

/// Y, Cb, Cr of the 4 pixels in bytes 0..12 of `px` (32-bit lanes).
#[inline(always)]
fn ycc_of_4(k: &YccConstants, masks: &[[u8; 16]; 4], px: v128) -> (v128, v128, v128) {
    let m = |i: usize| load16(&masks[i]);
    ycc4(k, i8x16_swizzle(px, m(0)), i8x16_swizzle(px, m(1)), i8x16_swizzle(px, m(2)), i8x16_swizzle(px, m(3)))
}

/// The bytes of four vectors of 32-bit lanes that each hold a value in 0..=255, in order:
/// `u8x16_narrow_i16x8(i16x8_narrow_i32x4(a, b), i16x8_narrow_i32x4(c, d))` for such
/// values. (LLVM turns those saturating narrows into clamps, constants and a two-vector
/// shuffle; here each value is shifted into its own byte of the lane, and one swizzle
/// puts the bytes in order.)
#[inline(always)]
fn pack4(a: v128, b: v128, c: v128, d: v128, mask: &[u8; 16]) -> v128 {
    let lanes = v128_or(v128_or(a, i32x4_shl(b, 8)), v128_or(i32x4_shl(c, 16), i32x4_shl(d, 24)));
    i8x16_swizzle(lanes, load16(mask))
}

/// Byte mask of `pack4`: byte k of lane j of `lanes` is value j of the k-th vector.
static PACK4_BYTES: [u8; 16] = [0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15];

/// One row of RGB samples → Y, Cb, Cr rows (appended), as `RgbImage::fill_buffers`.
/// 16 pixels per step, as four groups of 4 loaded at byte offsets 0, 12, 24 and 32 (the
/// last moved down 4 bytes in the register, so no load reads past the 48 bytes).
pub(crate) fn rgb_row_to_ycbcr(line: &[u8], buffers: &mut [Vec<u8>; 4]) {
    let n = line.len() / 3;
    let k = YccConstants::new();
    let masks = core::hint::black_box(&YCC4_OPERANDS);
    let pack_mask = core::hint::black_box(&PACK4_BYTES);
    append3(buffers, n, |y_buf, cb_buf, cr_buf| {
        let mut chunks = line.chunks_exact(48);
        let mut x = 0;
        for px in &mut chunks {
            let last = load16(&px[32..48]);
            let last = i8x16_shuffle::<4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19>(last, last);
            let (y0, cb0, cr0) = ycc_of_4(&k, masks, load16(&px[0..16]));
            let (y1, cb1, cr1) = ycc_of_4(&k, masks, load16(&px[12..28]));
            let (y2, cb2, cr2) = ycc_of_4(&k, masks, load16(&px[24..40]));
            let (y3, cb3, cr3) = ycc_of_4(&k, masks, last);
            let pack = |a, b, c, d| pack4(a, b, c, d, pack_mask);
            store16(&mut y_buf[x..], pack(y0, y1, y2, y3));
            store16(&mut cb_buf[x..], pack(cb0, cb1, cb2, cb3));
            store16(&mut cr_buf[x..], pack(cr0, cr1, cr2, cr3));
            x += 16;
        }
        for px in chunks.remainder().chunks_exact(3) {
            let (y, cb, cr) = rgb_to_ycbcr(px[0], px[1], px[2]);
            y_buf[x].write(y);
            cb_buf[x].write(cb);
            cr_buf[x].write(cr);
            x += 1;
        }
    });
}

/// One row of interleaved 3-component samples → three rows, unconverted.
pub(crate) fn split_row3(line: &[u8], buffers: &mut [Vec<u8>; 4]) {
    let n = line.len() / 3;
    let masks = core::hint::black_box(&DEINTERLEAVE3);
    append3(buffers, n, |c0_buf, c1_buf, c2_buf| {
        let mut chunks = line.chunks_exact(48);
        let mut x = 0;
        for px in &mut chunks {
            let (c0, c1, c2) = deinterleave3(px, masks);
            store16(&mut c0_buf[x..], c0);
            store16(&mut c1_buf[x..], c1);
            store16(&mut c2_buf[x..], c2);
            x += 16;
        }
        for px in chunks.remainder().chunks_exact(3) {
            c0_buf[x].write(px[0]);
            c1_buf[x].write(px[1]);
            c2_buf[x].write(px[2]);
            x += 1;
        }
    });
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

/// One row of grayscale samples, copied (`GrayImage` pushes them one by one).
fn gray_row(line: &[u8], buffers: &mut [Vec<u8>; 4]) {
    buffers[0].extend_from_slice(line);
}

// ---------------------------------------------------------------- block extraction

/// Sums of `h` horizontally adjacent samples for 8 outputs (16-bit lanes), `h` ∈ {1, 2, 4}.
#[inline(always)]
fn row_sums(row: &[u8], h: usize) -> v128 {
    match h {
        1 => u16x8_extend_low_u8x16(load8(&row[..8])),
        2 => u16x8_extadd_pairwise_u8x16(load16(&row[..16])),
        _ => {
            let a = u32x4_extadd_pairwise_u16x8(u16x8_extadd_pairwise_u8x16(load16(&row[..16])));
            let b = u32x4_extadd_pairwise_u16x8(u16x8_extadd_pairwise_u8x16(load16(&row[16..32])));
            i16x8_narrow_i32x4(a, b)
        }
    }
}

/// `get_block_averaged` (and `get_block` for factor 1): the mean of each `h`×`v` group
/// with libjpeg's alternating bias ((n-1)/2 on even, n/2 on odd output columns), minus 128.
/// Factors other than 1, 2, 4 fall back to the scalar code.
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
    for (y, row) in block_rows(data, start_x, start_y, h, v, width).into_iter().enumerate() {
        store_row(&mut block.data, y, row);
    }
    block
}

/// The rows of `get_block_averaged_simd` in registers; `h`, `v` ∈ {1, 2, 4}.
#[inline(always)]
fn block_rows(data: &[u8], start_x: usize, start_y: usize, h: usize, v: usize, width: usize) -> [v128; 8] {
    // Constant-factor versions for full-resolution blocks and 4:2:0 chroma; the rarer
    // factors share one generic version (each constant version costs module size).
    match (h, v) {
        (1, 1) => block_rows_hv::<1, 1>(data, start_x, start_y, width),
        (2, 2) => block_rows_hv::<2, 2>(data, start_x, start_y, width),
        _ => block_rows_any(data, start_x, start_y, h, v, width),
    }
}

/// `block_rows` for any factors in {1, 2, 4}.
#[inline(never)]
fn block_rows_any(data: &[u8], start_x: usize, start_y: usize, h: usize, v: usize, width: usize) -> [v128; 8] {
    let n = h * v;
    let shift = n.trailing_zeros();
    let even = ((n - 1) / 2) as i16;
    let odd = (n / 2) as i16;
    let bias = i16x8(even, odd, even, odd, even, odd, even, odd);
    let mut rows = [bias; 8];
    for (y, out) in rows.iter_mut().enumerate() {
        let top = (start_y + y * v) * width + start_x;
        let mut sum = row_sums(&data[top..top + 8 * h], h);
        for dy in 1..v {
            let at = top + dy * width;
            sum = i16x8_add(sum, row_sums(&data[at..at + 8 * h], h));
        }
        let mean = u16x8_shr(i16x8_add(sum, bias), shift);
        *out = i16x8_sub(mean, i16x8_splat(128));
    }
    rows
}

/// `block_rows` for constant factors (constant bias, shift and loop counts).
#[inline(always)]
fn block_rows_hv<const H: usize, const V: usize>(
    data: &[u8],
    start_x: usize,
    start_y: usize,
    width: usize,
) -> [v128; 8] {
    let n = H * V;
    let shift = n.trailing_zeros();
    let even = ((n - 1) / 2) as i16;
    let odd = (n / 2) as i16;
    let bias = i16x8(even, odd, even, odd, even, odd, even, odd);
    let mut rows = [bias; 8];
    for (y, out) in rows.iter_mut().enumerate() {
        let top = (start_y + y * V) * width + start_x;
        let mut sum = row_sums(&data[top..top + 8 * H], H);
        for dy in 1..V {
            let at = top + dy * width;
            sum = i16x8_add(sum, row_sums(&data[at..at + 8 * H], H));
        }
        let mean = if n == 1 { sum } else { u16x8_shr(i16x8_add(sum, bias), shift) };
        *out = i16x8_sub(mean, i16x8_splat(128));
    }
    rows
}

// ---------------------------------------------------------------- forward DCT

const CONST_BITS: u32 = 13;
const PASS1_BITS: u32 = 2;
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

#[inline(always)]
fn transpose8(r: [v128; 8]) -> [v128; 8] {
    let a0 = i16x8_shuffle::<0, 8, 1, 9, 2, 10, 3, 11>(r[0], r[1]);
    let a1 = i16x8_shuffle::<4, 12, 5, 13, 6, 14, 7, 15>(r[0], r[1]);
    let a2 = i16x8_shuffle::<0, 8, 1, 9, 2, 10, 3, 11>(r[2], r[3]);
    let a3 = i16x8_shuffle::<4, 12, 5, 13, 6, 14, 7, 15>(r[2], r[3]);
    let a4 = i16x8_shuffle::<0, 8, 1, 9, 2, 10, 3, 11>(r[4], r[5]);
    let a5 = i16x8_shuffle::<4, 12, 5, 13, 6, 14, 7, 15>(r[4], r[5]);
    let a6 = i16x8_shuffle::<0, 8, 1, 9, 2, 10, 3, 11>(r[6], r[7]);
    let a7 = i16x8_shuffle::<4, 12, 5, 13, 6, 14, 7, 15>(r[6], r[7]);
    let b0 = i32x4_shuffle::<0, 4, 1, 5>(a0, a2);
    let b1 = i32x4_shuffle::<2, 6, 3, 7>(a0, a2);
    let b2 = i32x4_shuffle::<0, 4, 1, 5>(a1, a3);
    let b3 = i32x4_shuffle::<2, 6, 3, 7>(a1, a3);
    let b4 = i32x4_shuffle::<0, 4, 1, 5>(a4, a6);
    let b5 = i32x4_shuffle::<2, 6, 3, 7>(a4, a6);
    let b6 = i32x4_shuffle::<0, 4, 1, 5>(a5, a7);
    let b7 = i32x4_shuffle::<2, 6, 3, 7>(a5, a7);
    [
        i64x2_shuffle::<0, 2>(b0, b4),
        i64x2_shuffle::<1, 3>(b0, b4),
        i64x2_shuffle::<0, 2>(b1, b5),
        i64x2_shuffle::<1, 3>(b1, b5),
        i64x2_shuffle::<0, 2>(b2, b6),
        i64x2_shuffle::<1, 3>(b2, b6),
        i64x2_shuffle::<0, 2>(b3, b7),
        i64x2_shuffle::<1, 3>(b3, b7),
    ]
}

const fn pair(a: i16, b: i16) -> v128 {
    i16x8(a, b, a, b, a, b, a, b)
}

/// The FDCT's multiplier pairs and rounding constants, read through an opaque reference
/// (`black_box`) so the engine loads them instead of rebuilding each from immediates.
static DCT_CONSTANTS: [v128; 11] = [
    pair(F_0_541 + F_0_765, F_0_541),
    pair(F_0_541, F_0_541 - F_1_847),
    pair(F_1_175 - F_1_961, F_1_175),
    pair(F_1_175, F_1_175 - F_0_390),
    pair(F_0_298 - F_0_899, -F_0_899),
    pair(-F_0_899, F_1_501 - F_0_899),
    pair(F_2_053 - F_2_562, -F_2_562),
    pair(-F_2_562, F_3_072 - F_2_562),
    i32x4(1 << (CONST_BITS - PASS1_BITS - 1), 1 << (CONST_BITS - PASS1_BITS - 1), 1 << (CONST_BITS - PASS1_BITS - 1), 1 << (CONST_BITS - PASS1_BITS - 1)),
    i32x4(1 << (CONST_BITS + PASS1_BITS - 1), 1 << (CONST_BITS + PASS1_BITS - 1), 1 << (CONST_BITS + PASS1_BITS - 1), 1 << (CONST_BITS + PASS1_BITS - 1)),
    i16x8(2, 2, 2, 2, 2, 2, 2, 2),
];

/// `a·k.0 + b·k.1` per lane (16-bit inputs, exact 32-bit sums), descaled by `n` with
/// rounding and narrowed back to 16 bits.
#[inline(always)]
fn rotate(a: v128, b: v128, k: v128, round: v128, n: u32) -> v128 {
    let lo = i32x4_dot_i16x8(i16x8_shuffle::<0, 8, 1, 9, 2, 10, 3, 11>(a, b), k);
    let hi = i32x4_dot_i16x8(i16x8_shuffle::<4, 12, 5, 13, 6, 14, 7, 15>(a, b), k);
    i16x8_narrow_i32x4(i32x4_shr(i32x4_add(lo, round), n), i32x4_shr(i32x4_add(hi, round), n))
}

/// Two-term products without descaling, lo and hi halves (32-bit lanes).
#[inline(always)]
fn dot2(a_lo: v128, a_hi: v128, k: v128) -> (v128, v128) {
    (i32x4_dot_i16x8(a_lo, k), i32x4_dot_i16x8(a_hi, k))
}

#[inline(always)]
fn descale2(lo: v128, hi: v128, round: v128, n: u32) -> v128 {
    i16x8_narrow_i32x4(i32x4_shr(i32x4_add(lo, round), n), i32x4_shr(i32x4_add(hi, round), n))
}

/// One 1-D pass of `fdct` over 8 vectors (lanes independent). All intermediate values
/// fit 16 bits for 8-bit samples (as in libjpeg-turbo's SIMD islow DCT); products are
/// summed in 32 bits, so the results equal the scalar code's.
#[inline(always)]
fn dct_pass<const PASS2: bool>(d: [v128; 8], k: &[v128; 11]) -> [v128; 8] {
    let n = if PASS2 { CONST_BITS + PASS1_BITS } else { CONST_BITS - PASS1_BITS };
    let round = if PASS2 { k[9] } else { k[8] };
    let tmp0 = i16x8_add(d[0], d[7]);
    let tmp7 = i16x8_sub(d[0], d[7]);
    let tmp1 = i16x8_add(d[1], d[6]);
    let tmp6 = i16x8_sub(d[1], d[6]);
    let tmp2 = i16x8_add(d[2], d[5]);
    let tmp5 = i16x8_sub(d[2], d[5]);
    let tmp3 = i16x8_add(d[3], d[4]);
    let tmp4 = i16x8_sub(d[3], d[4]);

    let tmp10 = i16x8_add(tmp0, tmp3);
    let tmp13 = i16x8_sub(tmp0, tmp3);
    let tmp11 = i16x8_add(tmp1, tmp2);
    let tmp12 = i16x8_sub(tmp1, tmp2);

    let (out0, out4) = if PASS2 {
        let round = k[10];
        (
            i16x8_shr(i16x8_add(i16x8_add(tmp10, tmp11), round), PASS1_BITS),
            i16x8_shr(i16x8_add(i16x8_sub(tmp10, tmp11), round), PASS1_BITS),
        )
    } else {
        (
            i16x8_shl(i16x8_add(tmp10, tmp11), PASS1_BITS),
            i16x8_shl(i16x8_sub(tmp10, tmp11), PASS1_BITS),
        )
    };
    // z1 = (tmp12 + tmp13)·c0.541; out2 = z1 + tmp13·c0.765; out6 = z1 − tmp12·c1.847
    let out2 = rotate(tmp13, tmp12, k[0], round, n);
    let out6 = rotate(tmp13, tmp12, k[1], round, n);

    // Odd part; z5 = (z3 + z4)·c1.175 is folded into the z3/z4 rotations, z1 and z2
    // into the tmp4..tmp7 ones.
    let z3 = i16x8_add(tmp4, tmp6);
    let z4 = i16x8_add(tmp5, tmp7);
    let z34_lo = i16x8_shuffle::<0, 8, 1, 9, 2, 10, 3, 11>(z3, z4);
    let z34_hi = i16x8_shuffle::<4, 12, 5, 13, 6, 14, 7, 15>(z3, z4);
    let (z3_lo, z3_hi) = dot2(z34_lo, z34_hi, k[2]);
    let (z4_lo, z4_hi) = dot2(z34_lo, z34_hi, k[3]);

    let t47_lo = i16x8_shuffle::<0, 8, 1, 9, 2, 10, 3, 11>(tmp4, tmp7);
    let t47_hi = i16x8_shuffle::<4, 12, 5, 13, 6, 14, 7, 15>(tmp4, tmp7);
    let t56_lo = i16x8_shuffle::<0, 8, 1, 9, 2, 10, 3, 11>(tmp5, tmp6);
    let t56_hi = i16x8_shuffle::<4, 12, 5, 13, 6, 14, 7, 15>(tmp5, tmp6);

    // out7 = tmp4·c0.298 + z1·(−c0.899) + z3, z1 = tmp4 + tmp7
    let (a_lo, a_hi) = dot2(t47_lo, t47_hi, k[4]);
    let out7 = descale2(i32x4_add(a_lo, z3_lo), i32x4_add(a_hi, z3_hi), round, n);
    // out1 = tmp7·c1.501 + z1·(−c0.899) + z4
    let (a_lo, a_hi) = dot2(t47_lo, t47_hi, k[5]);
    let out1 = descale2(i32x4_add(a_lo, z4_lo), i32x4_add(a_hi, z4_hi), round, n);
    // out5 = tmp5·c2.053 + z2·(−c2.562) + z4, z2 = tmp5 + tmp6
    let (a_lo, a_hi) = dot2(t56_lo, t56_hi, k[6]);
    let out5 = descale2(i32x4_add(a_lo, z4_lo), i32x4_add(a_hi, z4_hi), round, n);
    // out3 = tmp6·c3.072 + z2·(−c2.562) + z3
    let (a_lo, a_hi) = dot2(t56_lo, t56_hi, k[7]);
    let out3 = descale2(i32x4_add(a_lo, z3_lo), i32x4_add(a_hi, z3_hi), round, n);

    [out0, out1, out2, out3, out4, out5, out6, out7]
}

/// The crate's `fdct` (libjpeg's `jpeg_fdct_islow`), bit for bit.
pub(crate) fn fdct_simd(block: &mut AlignedBlock) {
    let data = &mut block.data;
    let rows = [
        load_row(data, 0),
        load_row(data, 1),
        load_row(data, 2),
        load_row(data, 3),
        load_row(data, 4),
        load_row(data, 5),
        load_row(data, 6),
        load_row(data, 7),
    ];
    for (y, v) in fdct_rows(rows).into_iter().enumerate() {
        store_row(data, y, v);
    }
}

/// `fdct_simd` on 8 row vectors in registers.
#[inline(always)]
fn fdct_rows(rows: [v128; 8]) -> [v128; 8] {
    // Pass 1 runs along rows: with columns in vectors, lanes are rows.
    let k = core::hint::black_box(&DCT_CONSTANTS);
    let pass1 = dct_pass::<false>(transpose8(rows), k);
    dct_pass::<true>(transpose8(pass1), k)
}

// ---------------------------------------------------------------- quantisation

/// The zig-zag reorder of 8 row vectors (natural order) into 8 vectors of coefficients
/// 0..63 in zig-zag order. Each output vector takes its lanes from 2 to 6 rows, but from
/// only one half of most: so the rows are first paired by halves (`lo`: both low halves,
/// `hi`: both high, `lh`: low of one, high of the other; one instruction each) and each
/// pair, or row, is swizzled into place (other lanes zeroed, index 0x80) and OR-ed: 22
/// swizzles instead of 36 (one per row used). The byte masks are read through an opaque
/// reference: as constant shuffles each would be rebuilt from immediates by the engine.
#[inline(always)]
fn zigzag(n: [v128; 8]) -> [v128; 8] {
    let masks = core::hint::black_box(&ZIGZAG_SWIZZLES);
    let swizzle = |v: v128, k: usize| {
        let mask = &masks[k];
        // SAFETY: 16 readable bytes.
        i8x16_swizzle(v, unsafe { v128_load(mask.as_ptr() as *const v128) })
    };
    let or3 = |a: v128, b: v128, c: v128| v128_or(v128_or(a, b), c);
    let lo = |a: v128, b: v128| i64x2_shuffle::<0, 2>(a, b);
    let hi = |a: v128, b: v128| i64x2_shuffle::<1, 3>(a, b);
    let lh = |a: v128, b: v128| i64x2_shuffle::<0, 3>(a, b);
    let lo23 = lo(n[2], n[3]);
    [
        v128_or(swizzle(lo(n[0], n[1]), 0), swizzle(n[2], 1)),
        or3(swizzle(lo23, 2), swizzle(lh(n[4], n[0]), 3), swizzle(n[1], 4)),
        or3(swizzle(lo23, 5), swizzle(lo(n[4], n[5]), 6), swizzle(lh(n[6], n[1]), 7)),
        or3(swizzle(n[3], 8), swizzle(hi(n[1], n[2]), 9), swizzle(n[0], 10)),
        or3(swizzle(n[4], 11), swizzle(lo(n[5], n[6]), 12), swizzle(n[7], 13)),
        or3(swizzle(hi(n[2], n[3]), 14), swizzle(hi(n[1], n[4]), 15), swizzle(lh(n[6], n[5]), 16)),
        or3(swizzle(lh(n[7], n[6]), 17), swizzle(hi(n[4], n[5]), 18), swizzle(n[3], 19)),
        v128_or(swizzle(hi(n[6], n[7]), 20), swizzle(n[5], 21)),
    ]
}

/// Byte masks of `zigzag` (generated from `ZIGZAG`), one per swizzle in its order: lane
/// p takes the bytes of the source lane holding zig-zag coefficient 8k + p, if no
/// earlier source of output vector k holds it, else 0x80.
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
/// `(|x| + correction) · reciprocal >> 15` with the sign restored: |x| + correction
/// < 2^16 and the product < 2^31, so unsigned 16×16→32-bit products are exact.
pub(crate) fn quantize_simd(block: &AlignedBlock, q_block: &mut AlignedBlock, table: &QuantizationTable) {
    let rows = [
        load_row(&block.data, 0),
        load_row(&block.data, 1),
        load_row(&block.data, 2),
        load_row(&block.data, 3),
        load_row(&block.data, 4),
        load_row(&block.data, 5),
        load_row(&block.data, 6),
        load_row(&block.data, 7),
    ];
    for (k, v) in quantize_rows(rows, table).into_iter().enumerate() {
        store_row(&mut q_block.data, k, v);
    }
}

/// `quantize_simd` on 8 row vectors in registers; returns zig-zag ordered vectors.
#[inline(always)]
fn quantize_rows(rows: [v128; 8], table: &QuantizationTable) -> [v128; 8] {
    let (recip, corr) = table.simd_tables();
    let mut natural = [i16x8_splat(0); 8];
    for k in 0..8 {
        let x = rows[k];
        let sign = i16x8_shr(x, 15);
        let t = i16x8_add(i16x8_abs(x), load_row(corr, k));
        let r = load_row(recip, k);
        let lo = u32x4_shr(u32x4_extmul_low_u16x8(t, r), 15);
        let hi = u32x4_shr(u32x4_extmul_high_u16x8(t, r), 15);
        // The quotients lie in 0..2^15, so no lane saturates; the signed narrow would
        // be compiled into an i32 clamp (a constant the engine rebuilds) and this one.
        let q = u16x8_narrow_i32x4(lo, hi);
        natural[k] = i16x8_sub(v128_xor(q, sign), sign);
    }
    zigzag(natural)
}

// ---------------------------------------------------------------- entropy coding help

/// Bit `i` set when coefficient `i` (zig-zag order) is non-zero.
#[inline(always)]
pub(crate) fn nonzero_mask(block: &AlignedBlock) -> u64 {
    let zero = i16x8_splat(0);
    let mut mask = 0u64;
    for k in 0..4 {
        let a = i16x8_eq(load_row(&block.data, 2 * k), zero);
        let b = i16x8_eq(load_row(&block.data, 2 * k + 1), zero);
        let bits = i8x16_bitmask(i8x16_narrow_i16x8(a, b));
        mask |= u64::from(bits) << (16 * k);
    }
    !mask
}
