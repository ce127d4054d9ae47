//! The encoder's output pinned to digests of the bytes it wrote before its interleaved
//! writer was rewritten (vendor/PATCHES.md, "symbols instead of buffered blocks"): every
//! codec mode, all eight baseline sampling schemes, qualities 1–100, odd and tiny sizes,
//! and patterns that reach every case of the writer's symbol streams (blocks with no AC
//! coefficient, all 63 non-zero, the last coefficient non-zero so no EOB, zero runs of
//! 16 and more); and the vendored encoder directly on its other paths (standard tables,
//! restart intervals, `Nearest` chroma, progressive, every colour type). Natively this
//! checks the scalar code; in `--test wasm_node` the module's own code (with `+simd128`
//! the SIMD kernels). The digests were recorded from commit dc1a9d9 (the encoder before
//! the rewrite); a change of output must come with new digests and a reason.

use crate::common::{config, BASELINE_SCHEMES};
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test;
use zarr_jpeg::encode::encode;

/// FNV-1a, 64-bit, over every stream of a group (each preceded by its length).
struct Digest(u64);

impl Digest {
    fn new() -> Self {
        Digest(0xcbf29ce484222325)
    }

    fn add(&mut self, bytes: &[u8]) {
        for &b in (bytes.len() as u64).to_le_bytes().iter().chain(bytes) {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x100000001b3);
        }
    }
}

/// Numerical Recipes' LCG, high bits.
struct Lcg(u64);

impl Lcg {
    fn byte(&mut self) -> u8 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 56) as u8
    }
}

/// 1000 · cos(mπ/16), m = 0..31, rounded (integers, so every platform draws the same).
const COS: [i64; 32] = [
    1000, 981, 924, 831, 707, 556, 383, 195, 0, -195, -383, -556, -707, -831, -924, -981, -1000,
    -981, -924, -831, -707, -556, -383, -195, 0, 195, 383, 556, 707, 831, 924, 981,
];

/// Number of patterns `image` draws.
const PATTERNS: usize = 9;

/// Test images: noise (dense blocks), flat 0 and 255 (no AC coefficients), checkerboard,
/// stripes, gradients, and DCT basis functions, one `(u, v)` per 8×8 block, which leave
/// a single AC coefficient anywhere from zig-zag position 1 to 63 (long zero runs, and
/// position 63 itself: a block without EOB), full-amplitude (7) or faint (8).
fn image(pattern: usize, height: usize, width: usize, channels: usize, seed: u64) -> Vec<u8> {
    let mut rng = Lcg(seed);
    let mut data = Vec::with_capacity(height * width * channels);
    for y in 0..height {
        for x in 0..width {
            for c in 0..channels {
                data.push(match pattern {
                    0 => rng.byte(),
                    1 => 0,
                    2 => 255,
                    3 => {
                        if (x + y + c) % 2 == 0 {
                            0
                        } else {
                            255
                        }
                    }
                    4 => {
                        if (x / (c + 1)) % 2 == 0 {
                            255
                        } else {
                            0
                        }
                    }
                    5 => ((x * 255) / width.max(1)) as u8 ^ ((y * 97) as u8),
                    _ => {
                        let (bx, by) = (x / 8, y / 8);
                        let u = (bx + c) % 8;
                        let v = (by + bx / 8) % 8;
                        let amplitude = if pattern == 6 { 127 } else { 12 };
                        let f = |n: usize, k: usize| COS[((2 * (n % 8) + 1) * k) % 32];
                        (128 + amplitude * f(x, u) * f(y, v) / 1_000_000).clamp(0, 255) as u8
                    }
                });
            }
        }
    }
    data
}

const SIZES: [(usize, usize); 9] = [
    (1, 1),
    (7, 13),
    (13, 7),
    (61, 47),
    (16, 16),
    (17, 33),
    (33, 100),
    (64, 48),
    (9, 130),
];

/// Through the codec: each mode (the eight schemes, `rgb`, grayscale) × quality × size ×
/// pattern, one digest per mode.
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn codec_streams_are_unchanged() {
    let mut modes: Vec<(String, usize)> = BASELINE_SCHEMES
        .iter()
        .map(|(h, v)| {
            (
                format!(
                    r#""encoded_color_space": "ycbcr", "subsampling": [[{h}, {v}], [1, 1], [1, 1]]"#
                ),
                3,
            )
        })
        .collect();
    modes.push((r#""encoded_color_space": "rgb""#.to_string(), 3));
    modes.push((r#""encoded_color_space": "grayscale""#.to_string(), 1));
    let expected: [u64; 10] = EXPECTED_CODEC;
    let mut got = Vec::new();
    for (mode, channels) in &modes {
        let mut digest = Digest::new();
        for quality in [1, 50, 90, 100] {
            let config = config(&format!(r#"{{"quality": {quality}, {mode}}}"#));
            for (height, width) in SIZES {
                for pattern in 0..PATTERNS {
                    let data = image(
                        pattern,
                        height,
                        width,
                        *channels,
                        (height * 1000 + width) as u64,
                    );
                    let mut shape = vec![height as u64, width as u64];
                    if *channels == 3 {
                        shape.push(3);
                    }
                    digest.add(&encode(&config, &data, &shape).unwrap());
                }
            }
        }
        got.push(digest.0);
    }
    assert_eq!(got, expected, "codec streams changed (modes: {modes:?})");
}

/// The vendored encoder directly: colour type × sampling × path × size × pattern, one
/// digest per colour type. Paths: optimised tables; standard tables (the unbuffered
/// interleaved writer, or the buffered one for factors of 4); optimised with restart
/// intervals of 1 and 3 MCUs (standard tables for 1 and 4 components, see below);
/// standard with 7; `Nearest` chroma at quality 100; progressive.
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn encoder_paths_are_unchanged() {
    use jpeg_encoder::{ChromaSubsamplingMethod, ColorType, Encoder, SamplingFactor};

    let colours = [
        (ColorType::Luma, 1),
        (ColorType::Rgb, 3),
        (ColorType::Rgba, 4),
        (ColorType::Ycbcr, 3),
        (ColorType::Cmyk, 4),
        (ColorType::CmykAsYcck, 4),
        (ColorType::Ycck, 4),
    ];
    let samplings = [
        SamplingFactor::F_1_1,
        SamplingFactor::F_2_1,
        SamplingFactor::F_1_2,
        SamplingFactor::F_2_2,
        SamplingFactor::F_4_1,
        SamplingFactor::F_1_4,
        SamplingFactor::F_4_2,
        SamplingFactor::F_2_4,
    ];
    let expected: [u64; 7] = EXPECTED_PATHS;
    let mut got = Vec::new();
    for (colour, channels) in colours {
        let mut digest = Digest::new();
        for sampling in samplings {
            for path in 0..7 {
                for (height, width) in [(1, 1), (13, 7), (61, 47), (40, 72)] {
                    for pattern in [0, 3, 6] {
                        let data = image(
                            pattern,
                            height,
                            width,
                            channels,
                            (width * 31 + height) as u64,
                        );
                        let mut out = Vec::new();
                        let mut encoder = Encoder::new(&mut out, if path == 5 { 100 } else { 85 });
                        encoder.set_sampling_factor(sampling);
                        // Optimised tables with restart intervals only for 3 components:
                        // the crate's one-scan-per-component writer (grayscale, and CMYK /
                        // YCCK with more than 10 blocks per MCU) counts DC differences
                        // without the resets at restart markers, so a difference can lack
                        // a code (a debug assertion; a broken stream in release builds).
                        let restart_ok = channels == 3 || !matches!(path, 2 | 3);
                        encoder.set_optimized_huffman_tables(!matches!(path, 1 | 4) && restart_ok);
                        encoder.set_progressive(path == 6);
                        match path {
                            2 => encoder.set_restart_interval(1),
                            3 => encoder.set_restart_interval(3),
                            4 => encoder.set_restart_interval(7),
                            _ => {}
                        }
                        encoder.set_chroma_subsampling_method(if path == 5 {
                            ChromaSubsamplingMethod::Nearest
                        } else {
                            ChromaSubsamplingMethod::Average
                        });
                        encoder
                            .encode(&data, width as u16, height as u16, colour)
                            .unwrap();
                        digest.add(&out);
                    }
                }
            }
        }
        got.push(digest.0);
    }
    assert_eq!(
        got, expected,
        "encoder streams changed (colours: {colours:?})"
    );
}

const EXPECTED_CODEC: [u64; 10] = [
    8344703684542109897,
    2429073777383214090,
    5314155952605928259,
    1902383851048768906,
    14449399535663730342,
    4205270787105763606,
    1151069615384786164,
    12909879122680143828,
    540771850138107712,
    15982913603976219255,
];
const EXPECTED_PATHS: [u64; 7] = [
    16255281853360455997,
    12829243708254117366,
    15169028053463093087,
    7036178455161428475,
    9256339591036413438,
    14916167987280412788,
    9971305453883045997,
];
