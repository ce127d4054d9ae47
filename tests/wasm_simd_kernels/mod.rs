//! The wasm simd128 kernels of the vendored zune-jpeg (vendor/PATCHES.md) against the
//! scalar functions they replace, on random and extreme inputs (hostile streams can
//! produce any coefficient), odd lengths (tail handling) and short output buffers; then
//! whole decodes with the kernels against the same decodes with the scalar code
//! (`use_unsafe(false)`). Every comparison is exact: the kernels are bit-identical.
//! The colour converter and up-samplers only ever see IDCT output (0..=255); they are
//! also tried on wider values, as wide as the scalar code takes without overflowing
//! `i16` (these tests run unoptimised, with overflow checks).
//! Only in modules built with `-C target-feature=+simd128`.

use crate::common::config;
use wasm_bindgen_test::wasm_bindgen_test;
use zarr_jpeg::encode;
use zune_jpeg::__wasm_simd128_kernels as k;
use zune_jpeg::zune_core::bytestream::ZCursor;
use zune_jpeg::zune_core::colorspace::ColorSpace;
use zune_jpeg::zune_core::options::DecoderOptions;
use zune_jpeg::JpegDecoder;

/// xorshift64*: deterministic, no dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }
}

/// A coefficient from one of several regimes: typical, full i16, extreme i32, boundaries,
/// sparse, and around ±1096, the largest magnitude `idct_i16_wasm_simd`'s 16-bit path takes.
fn coefficient(rng: &mut Rng, regime: u64) -> i32 {
    match regime % 6 {
        0 => rng.range(-1024, 1024) as i32,
        5 => rng.range(-1100, 1100) as i32,
        1 => rng.range(i16::MIN as i64, i16::MAX as i64) as i32,
        2 => rng.next() as i32,
        3 => [
            0,
            1,
            -1,
            i16::MIN as i32,
            i16::MAX as i32,
            i32::MIN,
            i32::MAX,
            65535 * 255,
        ][rng.range(0, 7) as usize],
        _ => {
            if rng.range(0, 3) == 0 {
                rng.range(-300, 300) as i32
            } else {
                0
            }
        }
    }
}

type Idct = fn(&mut [i32; 64], &mut [i16], usize);

fn check_idct(simd: Idct, scalar: Idct, coeffs: &[i32; 64], name: &str) {
    // Strides of one block and of an image row, and outputs too short for all eight rows
    // (rows that do not fit are dropped by both; the scalar flat-block shortcut would
    // panic on those, so they are only tried on blocks with AC coefficients).
    let flat = coeffs[1..].iter().all(|&c| c == 0);
    for (stride, out_len) in [(8, 64), (24, 8 * 24), (8, 60), (16, 40), (8, 0)] {
        if flat && out_len < stride * 7 + 8 {
            continue;
        }
        let mut a = *coeffs;
        let mut b = *coeffs;
        let mut out_simd = vec![-7i16; out_len];
        let mut out_scalar = vec![-7i16; out_len];
        simd(&mut a, &mut out_simd, stride);
        scalar(&mut b, &mut out_scalar, stride);
        // The kernels leave their input as it was (the decoders' re-zeroing relies on it).
        assert_eq!(&a, coeffs, "{name}: input changed");
        assert_eq!(
            out_simd, out_scalar,
            "{name}: stride {stride}, len {out_len}, input {coeffs:?}"
        );
    }
}

#[wasm_bindgen_test]
fn idct_8x8_matches_scalar() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for n in 0..4000u64 {
        let mut c = [0i32; 64];
        for x in c.iter_mut() {
            *x = coefficient(&mut rng, n);
        }
        if n % 7 == 0 {
            // DC only (the flat-block shortcut), including extreme DC values.
            let dc = c[0];
            c = [0; 64];
            c[0] = dc;
        }
        check_idct(k::idct_wasm_simd, k::idct_int, &c, "idct 8x8");
        check_idct(k::idct_i16_wasm_simd, k::idct_int, &c, "idct 8x8 (16-bit)");
    }
    for v in [
        0,
        1,
        -1,
        255,
        -256,
        i16::MIN as i32,
        i16::MAX as i32,
        i32::MIN,
        i32::MAX,
    ] {
        check_idct(
            k::idct_wasm_simd,
            k::idct_int,
            &[v; 64],
            "idct 8x8 constant",
        );
        check_idct(
            k::idct_i16_wasm_simd,
            k::idct_int,
            &[v; 64],
            "idct 8x8 (16-bit) constant",
        );
    }
    // The 16-bit kernel's fast path takes blocks whose coefficients are all within ±1096. Column
    // 0 all `top` and column 4 all `-(top - 1)` give first-pass outputs of about ±32,760 in
    // row 0 that nearly cancel in the second pass, so an output in 0..=255 shows whether
    // they were exact: at `top` = 1097 the first would be 32,792, which a 16-bit lane
    // would saturate (output 128 instead of 129).
    for top in [1096, 1097, 1100] {
        for sign in [1, -1] {
            let mut c = [0i32; 64];
            for row in 0..8 {
                c[row * 8] = sign * top;
                c[row * 8 + 4] = -sign * (top - 1);
            }
            check_idct(
                k::idct_i16_wasm_simd,
                k::idct_int,
                &c,
                "idct 8x8 (16-bit) at its limit",
            );
        }
    }
}

#[wasm_bindgen_test]
fn idct_4x4_matches_scalar_and_keeps_the_contract() {
    let mut rng = Rng(0x0123_4567_89ab_cdef);
    for n in 0..4000u64 {
        let mut c = [0i32; 64];
        for row in 0..4 {
            for col in 0..4 {
                c[row * 8 + col] = coefficient(&mut rng, n);
            }
        }
        check_idct(k::idct4x4_wasm_simd, k::idct4x4, &c, "idct 4x4");
        // The full IDCT gives the same on such blocks.
        check_idct(k::idct_wasm_simd, k::idct4x4, &c, "idct 8x8 on a 4x4 block");
        check_idct(
            k::idct_i16_wasm_simd,
            k::idct4x4,
            &c,
            "idct 8x8 (16-bit) on a 4x4 block",
        );
        // Contract: everything outside the top-left 4x4 is zero on return.
        let mut a = c;
        let mut out = [0i16; 64];
        k::idct4x4_wasm_simd(&mut a, &mut out, 8);
        for (i, v) in a.iter().enumerate() {
            if i % 8 >= 4 || i >= 32 {
                assert_eq!(*v, 0, "coefficient {i} not zero after the 4x4 IDCT");
            }
        }
    }
}

#[wasm_bindgen_test]
fn colour_conversion_matches_scalar() {
    let mut rng = Rng(42);
    let mut planes = Vec::new();
    for v in [0i16, 255, 128, -1, 256, i16::MIN + 128, i16::MAX] {
        planes.push(([v; 16], [v; 16], [v; 16]));
        planes.push(([v; 16], [0; 16], [255; 16]));
        planes.push(([v; 16], [255; 16], [0; 16]));
    }
    for n in 0..3000 {
        let mut p = ([0i16; 16], [0i16; 16], [0i16; 16]);
        for i in 0..16 {
            // `cb - 128`, `cr - 128` are i16 operations in the scalar code.
            let (lo, hi) = if n % 3 == 0 {
                (i16::MIN as i64 + 128, i16::MAX as i64)
            } else {
                (0, 255)
            };
            p.0[i] = rng.range(lo, hi) as i16;
            p.1[i] = rng.range(lo, hi) as i16;
            p.2[i] = rng.range(lo, hi) as i16;
        }
        planes.push(p);
    }
    for (y, cb, cr) in &planes {
        for start in [0usize, 5] {
            let (mut a, mut b) = (vec![1u8; start + 64], vec![1u8; start + 64]);
            let (mut pa, mut pb) = (start, start);
            k::ycbcr_to_rgb_wasm_simd(y, cb, cr, &mut a, &mut pa);
            k::ycbcr_to_rgb_inner_16_scalar::<false>(y, cb, cr, &mut b, &mut pb);
            assert_eq!((a, pa), (b, pb), "rgb: {y:?} {cb:?} {cr:?}");

            let (mut a, mut b) = (vec![1u8; start + 64], vec![1u8; start + 64]);
            let (mut pa, mut pb) = (start, start);
            k::ycbcr_to_rgba_wasm_simd(y, cb, cr, &mut a, &mut pa);
            k::ycbcr_to_rgba_inner_16_scalar::<false>(y, cb, cr, &mut b, &mut pb);
            assert_eq!((a, pa), (b, pb), "rgba: {y:?} {cb:?} {cr:?}");
        }
    }
}

/// Rows of random samples: every width from 1 to 80 and a few long ones, one row in three
/// with any `i16` (beyond what the IDCT and upsamplers produce), the rest 0..=255.
fn sample_rows(rng: &mut Rng) -> Vec<[Vec<i16>; 3]> {
    let widths = (1..=80).chain([127, 128, 129, 1000, 2048]);
    widths
        .enumerate()
        .map(|(n, w)| {
            let (lo, hi) = if n % 3 == 0 {
                (i16::MIN as i64 + 128, i16::MAX as i64)
            } else {
                (0, 255)
            };
            let mut plane = || (0..w).map(|_| rng.range(lo, hi) as i16).collect::<Vec<_>>();
            [plane(), plane(), plane()]
        })
        .collect()
}

#[wasm_bindgen_test]
fn colour_conversion_rows_match_the_16_pixel_loop() {
    // The RGB row kernel against what `color_convert_ycbcr` does with the scalar 16-pixel
    // function: every whole chunk, then the last 16 pixels again.
    let mut rng = Rng(7);
    for [y, cb, cr] in sample_rows(&mut rng).iter().filter(|p| p[0].len() >= 16) {
        let w = y.len();
        let scalar = |s: usize, out: &mut [u8]| {
            let (y, cb, cr) = (&y[s..s + 16], &cb[s..s + 16], &cr[s..s + 16]);
            k::ycbcr_to_rgb_inner_16_scalar::<false>(
                y.try_into().unwrap(),
                cb.try_into().unwrap(),
                cr.try_into().unwrap(),
                out,
                &mut 0,
            );
        };
        let mut expected = vec![1u8; w * 3];
        for s in (0..w / 16).map(|k| 16 * k) {
            scalar(s, &mut expected[s * 3..]);
        }
        let mut last = [0u8; 48];
        scalar(w - 16, &mut last);
        expected[(w - 16) * 3..].copy_from_slice(&last);

        let mut got = vec![1u8; w * 3];
        k::ycbcr_to_rgb_row_wasm_simd(y, cb, cr, &mut got, w);
        assert_eq!(got, expected, "width {w}");
    }
}

#[wasm_bindgen_test]
fn upsamplers_match_scalar() {
    let mut rng = Rng(7);
    for len in 3..80usize {
        for full_range in [false, true, false] {
            let row = |rng: &mut Rng| -> Vec<i16> {
                (0..len)
                    // 3 * x + 2 + y must fit in i16 (the scalar arithmetic).
                    .map(|_| {
                        if full_range {
                            rng.range(-8191, 8191) as i16
                        } else {
                            rng.range(0, 255) as i16
                        }
                    })
                    .collect()
            };
            let (input, near, far) = (row(&mut rng), row(&mut rng), row(&mut rng));

            let mut a = vec![0i16; 2 * len];
            let mut b = vec![0i16; 2 * len];
            k::upsample_horizontal_wasm_simd(&input, &[], &[], &mut [0], &mut a);
            k::upsample_horizontal(&input, &[], &[], &mut [0], &mut b);
            assert_eq!(a, b, "horizontal, len {len}");

            let mut a = vec![0i16; 2 * len];
            let mut b = vec![0i16; 2 * len];
            k::upsample_vertical_wasm_simd(&input, &near, &far, &mut [0], &mut a);
            k::upsample_vertical(&input, &near, &far, &mut [0], &mut b);
            assert_eq!(a, b, "vertical, len {len}");

            let mut a = vec![0i16; 4 * len];
            let mut b = vec![0i16; 4 * len];
            let (mut sa, mut sb) = (vec![0i16; 2 * len + 3], vec![0i16; 2 * len + 3]);
            k::upsample_hv_wasm_simd(&input, &near, &far, &mut sa, &mut a);
            k::upsample_hv(&input, &near, &far, &mut sb, &mut b);
            assert_eq!(a, b, "hv, len {len}");
        }
    }
}

fn zune_decode(stream: &[u8], out: ColorSpace, simd: bool) -> Vec<u8> {
    let options = DecoderOptions::default()
        .jpeg_set_out_colorspace(out)
        .set_use_unsafe(simd);
    let mut decoder = JpegDecoder::new_with_options(ZCursor::new(stream), options);
    decoder.decode().expect("decodes")
}

#[wasm_bindgen_test]
fn whole_decodes_match_the_scalar_decoder() {
    let mut rng = Rng(99);
    let schemes = [
        "[1, 1]", "[2, 1]", "[1, 2]", "[2, 2]", "[4, 1]", "[1, 4]", "[4, 2]", "[2, 4]",
    ];
    // Odd sizes (partial MCUs, widths that are not multiples of 8 or 16) and some small
    // ones (the colour converter's < 16 path, short upsampler rows).
    let sizes = [
        (1, 1),
        (3, 5),
        (8, 8),
        (9, 17),
        (15, 33),
        (31, 47),
        (64, 40),
        (37, 130),
        (100, 203),
    ];
    for (h, w) in sizes {
        // Smooth gradients plus noise, so blocks take every IDCT path.
        let colour: Vec<u8> = (0..h * w * 3)
            .map(|i| {
                let (p, c) = (i / 3, i % 3);
                let (y, x) = (p / w, p % w);
                ((x * 3 + y * 5 + c * 70) as u64 % 256 + rng.range(0, 40) as u64).min(255) as u8
            })
            .collect();
        let gray: Vec<u8> = colour.iter().step_by(3).copied().collect();
        let shape3 = [h as u64, w as u64, 3];
        let shape1 = [h as u64, w as u64];
        for q in [10, 75, 100] {
            let mut streams = Vec::new();
            for s in schemes {
                let c = config(&format!(
                    r#"{{"quality": {q}, "encoded_color_space": "ycbcr", "subsampling": [{s}, [1, 1], [1, 1]]}}"#
                ));
                streams.push((encode(&c, &colour, &shape3).unwrap(), "ycbcr"));
            }
            let rgb = config(&format!(
                r#"{{"quality": {q}, "encoded_color_space": "rgb"}}"#
            ));
            streams.push((encode(&rgb, &colour, &shape3).unwrap(), "rgb"));
            let g = config(&format!(
                r#"{{"quality": {q}, "encoded_color_space": "grayscale"}}"#
            ));
            streams.push((encode(&g, &gray, &shape1).unwrap(), "gray"));
            for (stream, kind) in &streams {
                // zune-jpeg maps an RGB (Adobe transform 0) stream to RGB only.
                let outs: &[ColorSpace] = match *kind {
                    "gray" => &[ColorSpace::Luma],
                    "rgb" => &[ColorSpace::RGB],
                    _ => &[ColorSpace::RGB, ColorSpace::RGBA, ColorSpace::YCbCr],
                };
                for &out in outs {
                    let a = zune_decode(stream, out, true);
                    let b = zune_decode(stream, out, false);
                    assert!(
                        a == b,
                        "{h}x{w} q{q} {out:?}: SIMD decode differs from scalar"
                    );
                }
            }
        }
    }
}

/// Every decodable libjpeg-turbo / PIL fixture (tests/fixtures: progressive, restart
/// intervals, all sampling layouts, 1×1 to 64×64): the kernels against the scalar code.
const FIXTURES: &[(&str, usize, &[u8])] = &[
    (
        "gray_q90_pil_61x47.jpg",
        1,
        include_bytes!("../fixtures/gray_q90_pil_61x47.jpg"),
    ),
    (
        "gray_q90_pil_64x64.jpg",
        1,
        include_bytes!("../fixtures/gray_q90_pil_64x64.jpg"),
    ),
    (
        "gray_q90_cjpeg_61x47.jpg",
        1,
        include_bytes!("../fixtures/gray_q90_cjpeg_61x47.jpg"),
    ),
    (
        "ycc444_q90_pil_61x47.jpg",
        3,
        include_bytes!("../fixtures/ycc444_q90_pil_61x47.jpg"),
    ),
    (
        "ycc422_q90_pil_61x47.jpg",
        3,
        include_bytes!("../fixtures/ycc422_q90_pil_61x47.jpg"),
    ),
    (
        "ycc420_q90_pil_61x47.jpg",
        3,
        include_bytes!("../fixtures/ycc420_q90_pil_61x47.jpg"),
    ),
    (
        "ycc444_q90_pil_64x64.jpg",
        3,
        include_bytes!("../fixtures/ycc444_q90_pil_64x64.jpg"),
    ),
    (
        "ycc420_q90_pil_64x64.jpg",
        3,
        include_bytes!("../fixtures/ycc420_q90_pil_64x64.jpg"),
    ),
    (
        "ycc444_q90_cjpeg_61x47.jpg",
        3,
        include_bytes!("../fixtures/ycc444_q90_cjpeg_61x47.jpg"),
    ),
    (
        "ycc422_q90_cjpeg_61x47.jpg",
        3,
        include_bytes!("../fixtures/ycc422_q90_cjpeg_61x47.jpg"),
    ),
    (
        "ycc440_q90_cjpeg_61x47.jpg",
        3,
        include_bytes!("../fixtures/ycc440_q90_cjpeg_61x47.jpg"),
    ),
    (
        "ycc420_q90_cjpeg_61x47.jpg",
        3,
        include_bytes!("../fixtures/ycc420_q90_cjpeg_61x47.jpg"),
    ),
    (
        "ycc411_q90_cjpeg_61x47.jpg",
        3,
        include_bytes!("../fixtures/ycc411_q90_cjpeg_61x47.jpg"),
    ),
    (
        "ycc_y1x4_q90_cjpeg_61x47.jpg",
        3,
        include_bytes!("../fixtures/ycc_y1x4_q90_cjpeg_61x47.jpg"),
    ),
    (
        "ycc_y4x2_q90_cjpeg_61x47.jpg",
        3,
        include_bytes!("../fixtures/ycc_y4x2_q90_cjpeg_61x47.jpg"),
    ),
    (
        "ycc_y2x4_q90_cjpeg_61x47.jpg",
        3,
        include_bytes!("../fixtures/ycc_y2x4_q90_cjpeg_61x47.jpg"),
    ),
    (
        "ycc411_q90_cjpeg_64x64.jpg",
        3,
        include_bytes!("../fixtures/ycc411_q90_cjpeg_64x64.jpg"),
    ),
    (
        "ycc_y1x4_q90_cjpeg_64x64.jpg",
        3,
        include_bytes!("../fixtures/ycc_y1x4_q90_cjpeg_64x64.jpg"),
    ),
    (
        "ycc_y4x2_q90_cjpeg_64x64.jpg",
        3,
        include_bytes!("../fixtures/ycc_y4x2_q90_cjpeg_64x64.jpg"),
    ),
    (
        "ycc_y2x4_q90_cjpeg_64x64.jpg",
        3,
        include_bytes!("../fixtures/ycc_y2x4_q90_cjpeg_64x64.jpg"),
    ),
    (
        "ycc_y3x1_q90_cjpeg_61x47.jpg",
        3,
        include_bytes!("../fixtures/ycc_y3x1_q90_cjpeg_61x47.jpg"),
    ),
    (
        "ycc_cb2x2_q90_cjpeg_61x47.jpg",
        3,
        include_bytes!("../fixtures/ycc_cb2x2_q90_cjpeg_61x47.jpg"),
    ),
    (
        "ycc420_progressive_q90_pil_61x47.jpg",
        3,
        include_bytes!("../fixtures/ycc420_progressive_q90_pil_61x47.jpg"),
    ),
    (
        "ycc420_progressive_q90_cjpeg_61x47.jpg",
        3,
        include_bytes!("../fixtures/ycc420_progressive_q90_cjpeg_61x47.jpg"),
    ),
    (
        "gray_progressive_q90_cjpeg_61x47.jpg",
        1,
        include_bytes!("../fixtures/gray_progressive_q90_cjpeg_61x47.jpg"),
    ),
    (
        "ycc420_restart1row_q90_cjpeg_61x47.jpg",
        3,
        include_bytes!("../fixtures/ycc420_restart1row_q90_cjpeg_61x47.jpg"),
    ),
    (
        "ycc420_restart3blocks_q90_cjpeg_61x47.jpg",
        3,
        include_bytes!("../fixtures/ycc420_restart3blocks_q90_cjpeg_61x47.jpg"),
    ),
    (
        "gray_restart3blocks_q90_cjpeg_61x47.jpg",
        1,
        include_bytes!("../fixtures/gray_restart3blocks_q90_cjpeg_61x47.jpg"),
    ),
    (
        "ycc420_optimize_q90_cjpeg_61x47.jpg",
        3,
        include_bytes!("../fixtures/ycc420_optimize_q90_cjpeg_61x47.jpg"),
    ),
    (
        "gray_optimize_q90_cjpeg_61x47.jpg",
        1,
        include_bytes!("../fixtures/gray_optimize_q90_cjpeg_61x47.jpg"),
    ),
    (
        "ycc420_sof1_q5_cjpeg_61x47.jpg",
        3,
        include_bytes!("../fixtures/ycc420_sof1_q5_cjpeg_61x47.jpg"),
    ),
    (
        "gray_q90_pil_1x1.jpg",
        1,
        include_bytes!("../fixtures/gray_q90_pil_1x1.jpg"),
    ),
    (
        "ycc420_q90_pil_1x1.jpg",
        3,
        include_bytes!("../fixtures/ycc420_q90_pil_1x1.jpg"),
    ),
    (
        "gray_q90_pil_7x13.jpg",
        1,
        include_bytes!("../fixtures/gray_q90_pil_7x13.jpg"),
    ),
    (
        "ycc420_q90_pil_7x13.jpg",
        3,
        include_bytes!("../fixtures/ycc420_q90_pil_7x13.jpg"),
    ),
    (
        "ycc420_q90_pil_17x33.jpg",
        3,
        include_bytes!("../fixtures/ycc420_q90_pil_17x33.jpg"),
    ),
    (
        "ycc420_q90_cjpeg_17x33.jpg",
        3,
        include_bytes!("../fixtures/ycc420_q90_cjpeg_17x33.jpg"),
    ),
    (
        "rgb_q90_cjpeg_61x47.jpg",
        3,
        include_bytes!("../fixtures/rgb_q90_cjpeg_61x47.jpg"),
    ),
    (
        "rgb_q90_cjpeg_64x64.jpg",
        3,
        include_bytes!("../fixtures/rgb_q90_cjpeg_64x64.jpg"),
    ),
    (
        "rgb_keeprgb_q90_pil_61x47.jpg",
        3,
        include_bytes!("../fixtures/rgb_keeprgb_q90_pil_61x47.jpg"),
    ),
    (
        "gray_sample2x2_q90_cjpeg_61x47.jpg",
        1,
        include_bytes!("../fixtures/gray_sample2x2_q90_cjpeg_61x47.jpg"),
    ),
];

#[wasm_bindgen_test]
fn fixture_decodes_match_the_scalar_decoder() {
    let decode = |stream: &[u8], out: ColorSpace, simd: bool| {
        let options = DecoderOptions::default()
            .jpeg_set_out_colorspace(out)
            .set_use_unsafe(simd);
        JpegDecoder::new_with_options(ZCursor::new(stream), options)
            .decode()
            .map_err(|e| format!("{e:?}"))
    };
    let mut decoded = 0;
    for (name, components, stream) in FIXTURES {
        let outs: &[ColorSpace] = if *components == 1 {
            &[ColorSpace::Luma, ColorSpace::RGB]
        } else {
            &[ColorSpace::RGB, ColorSpace::RGBA]
        };
        for &out in outs {
            let a = decode(stream, out, true);
            let b = decode(stream, out, false);
            assert!(a == b, "{name} {out:?}: SIMD decode differs from scalar");
            decoded += usize::from(a.is_ok());
        }
    }
    // Both decoders refuse a few layouts alike (zune-jpeg's limits); the rest must decode.
    assert!(
        decoded >= 2 * (FIXTURES.len() - 4),
        "only {decoded} fixture decodes succeeded"
    );
}

/// Corrupted fixtures (bytes of the entropy-coded data flipped or set to extremes): the
/// decoder with the kernels must not trap, and wherever zarr-jpeg accepts the stream
/// (its checks keep zune-jpeg 0.5.15's known panics away), the kernels must give exactly
/// what the scalar code gives, however wild the coefficients.
#[wasm_bindgen_test]
fn corrupted_streams_decode_identically_or_fail_alike() {
    let mut rng = Rng(2024);
    let mut compared = 0;
    for (name, components, stream) in FIXTURES {
        let (json, out) = if *components == 1 {
            (
                r#"{"quality": 90, "encoded_color_space": "grayscale"}"#,
                ColorSpace::Luma,
            )
        } else {
            (
                r#"{"quality": 90, "encoded_color_space": "rgb"}"#,
                ColorSpace::RGB,
            )
        };
        let Some(sos) = stream.windows(2).position(|w| w == [0xFF, 0xDA]) else {
            continue;
        };
        let Ok(header) = zune_header(stream) else {
            continue;
        };
        let shape: Vec<u64> = if *components == 1 {
            vec![header.1 as u64, header.0 as u64]
        } else {
            vec![header.1 as u64, header.0 as u64, 3]
        };
        for _ in 0..40 {
            let mut s = stream.to_vec();
            let data_start = sos + 16;
            if data_start + 4 >= s.len() {
                break;
            }
            for _ in 0..rng.range(1, 6) {
                let at = rng.range(data_start as i64, s.len() as i64 - 3) as usize;
                s[at] = match rng.range(0, 3) {
                    0 => s[at] ^ (1 << rng.range(0, 7)),
                    1 => 0x7F,
                    2 => 0x80,
                    _ => rng.next() as u8,
                };
            }
            // Must not trap (a panic would abort the test).
            let accepted = zarr_jpeg::decode(&config(json), &s, &shape).is_ok();
            if accepted {
                let options = |simd| {
                    DecoderOptions::default()
                        .set_strict_mode(true)
                        .jpeg_set_out_colorspace(out)
                        .set_use_unsafe(simd)
                };
                let a = JpegDecoder::new_with_options(ZCursor::new(&s[..]), options(true)).decode();
                let b =
                    JpegDecoder::new_with_options(ZCursor::new(&s[..]), options(false)).decode();
                assert!(
                    a.as_ref().ok() == b.as_ref().ok(),
                    "{name}: a corrupted stream decodes differently with the kernels"
                );
                compared += 1;
            }
        }
    }
    assert!(
        compared >= 200,
        "only {compared} corrupted streams were compared"
    );
}

/// (width, height) from the frame header.
fn zune_header(stream: &[u8]) -> Result<(usize, usize), String> {
    let mut d = JpegDecoder::new(ZCursor::new(stream));
    d.decode_headers().map_err(|e| format!("{e:?}"))?;
    let (w, h) = d.dimensions().ok_or("no dimensions")?;
    Ok((w, h))
}
