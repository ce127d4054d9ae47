//! The encoder's SIMD kernels against its scalar code, in the same build: WebAssembly
//! `simd128` (vendor/jpeg-encoder/src/wasm_simd.rs, in `--test wasm_node` built with
//! `+simd128`) and x86-64 SSE4.1 (vendor/jpeg-encoder/src/x86_simd.rs, natively through
//! `tests/encode_identity/main.rs`, where the CPU has SSE4.1): every mode, all eight baseline
//! sampling schemes, odd and tiny sizes (tails narrower than a vector), flat 0 and 255,
//! stripes, checkerboards and noise, at several qualities must give the same bytes. Built
//! without either kernel set, both sides run the scalar code and the test checks nothing new.

use crate::common::{
    config, pattern_chunk, pattern_image as image, BASELINE_SCHEMES, ENCODER_COLOUR_TYPES,
};
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test;
use zarr_jpeg::testing::{encode_scalar_reference, encode_scalar_reference_with_options};
use zarr_jpeg::JpegConfig;
use zarr_jpeg::{encode, encode_from_with_options, EncodeOptions, QuantTable};

pub fn modes() -> Vec<(String, usize)> {
    let mut modes = Vec::new();
    for (h, v) in BASELINE_SCHEMES {
        for decoded in ["rgb", "ycbcr"] {
            modes.push((
                format!(
                    r#""encoded_color_space": "ycbcr", "decoded_color_space": "{decoded}", "subsampling": [[{h}, {v}], [1, 1], [1, 1]]"#
                ),
                3,
            ));
        }
    }
    modes.push((r#""encoded_color_space": "rgb""#.to_string(), 3));
    modes.push((r#""encoded_color_space": "grayscale""#.to_string(), 1));
    modes
}

/// Encodes with the SIMD kernels and with the scalar reference and asserts the same bytes;
/// `what` names the case in the failure message.
pub fn assert_simd_matches_scalar(
    config: &JpegConfig,
    data: &[u8],
    shape: &[u64],
    options: &EncodeOptions,
    what: impl FnOnce() -> String,
) {
    let ours = encode_from_with_options(config, &data, shape, options).unwrap();
    let reference = encode_scalar_reference_with_options(config, data, shape, options).unwrap();
    assert!(
        ours == reference,
        "{}: SIMD and scalar streams differ",
        what()
    );
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn simd_kernels_write_the_same_bytes_as_the_scalar_code() {
    let sizes = [
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
    let mut cases = 0;
    for (mode, channels) in modes() {
        for quality in [1, 50, 90, 100] {
            let config = config(&format!(r#"{{"quality": {quality}, {mode}}}"#));
            for (height, width) in sizes {
                for pattern in 0..7 {
                    let (data, shape) = pattern_chunk(pattern, height, width, channels);
                    let ours = encode(&config, &data, &shape).unwrap();
                    let reference = encode_scalar_reference(&config, &data, &shape).unwrap();
                    assert!(
                        ours == reference,
                        "{mode} q{quality} {height}x{width} pattern {pattern}: SIMD and scalar streams differ"
                    );
                    cases += 1;
                }
            }
        }
    }
    assert_eq!(cases, 18 * 4 * 9 * 7);
}

/// Trellis quantisation (`EncodeOptions::trellis`) takes the blocks from the SIMD
/// extraction and FDCT kernels: the same bytes as the scalar code in every mode, with and
/// without restart intervals (the 150-row images have them), on the synthetic patterns
/// (noise, flat, stripes, gradients, DCT basis functions: every zig-zag position).
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn trellis_writes_the_same_bytes_with_simd_kernels_as_with_the_scalar_code() {
    let mut cases = 0;
    for (mode, channels) in modes() {
        for quality in [1, 50, 90, 100] {
            let config = config(&format!(r#"{{"quality": {quality}, {mode}}}"#));
            for (height, width) in [(1, 1), (7, 13), (61, 47), (33, 100), (150, 41)] {
                for pattern in 0..9 {
                    let (data, shape) = pattern_chunk(pattern, height, width, channels);
                    for restart_intervals in [true, false] {
                        let options = EncodeOptions {
                            restart_intervals,
                            trellis: true,
                            ..EncodeOptions::default()
                        };
                        assert_simd_matches_scalar(&config, &data, &shape, &options, || {
                            format!("trellis {mode} q{quality} {height}x{width} pattern {pattern} restarts {restart_intervals}")
                        });
                        cases += 1;
                    }
                }
            }
        }
    }
    assert_eq!(cases, 18 * 4 * 5 * 9 * 2);
}

/// Every quantisation table (`EncodeOptions::quant_table`), with and without trellis: the
/// SIMD quantiser's 16-bit reciprocals serve every table's steps (1–255, times 8) exactly as
/// the scalar code does, in every mode (`rgb`: the luma table for all three channels).
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn every_quantisation_table_writes_the_same_bytes_with_simd_kernels_as_with_the_scalar_code() {
    let mut cases = 0;
    for (_, quant_table) in QuantTable::ALL {
        for (mode, channels) in modes() {
            for quality in [1, 90] {
                let config = config(&format!(r#"{{"quality": {quality}, {mode}}}"#));
                for pattern in 0..9 {
                    let (data, shape) = pattern_chunk(pattern, 61, 47, channels);
                    for trellis in [false, true] {
                        let options = EncodeOptions {
                            trellis,
                            quant_table,
                            ..EncodeOptions::default()
                        };
                        assert_simd_matches_scalar(&config, &data, &shape, &options, || {
                            format!("{quant_table:?} {mode} q{quality} pattern {pattern} trellis {trellis}")
                        });
                        cases += 1;
                    }
                }
            }
        }
    }
    assert_eq!(cases, 9 * 18 * 2 * 9 * 2);
}

/// The vendored encoder's other paths, which the codec does not use but which run the same
/// kernels in simd128 builds: progressive, standard Huffman tables (the unbuffered
/// interleaved writer), restart intervals, `Nearest` chroma, every input colour type.
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn simd_kernels_match_the_scalar_code_on_every_encoder_path() {
    use jpeg_encoder::{ChromaSubsamplingMethod, Encoder, SamplingFactor};

    let samplings = [
        SamplingFactor::F_1_1,
        SamplingFactor::F_2_1,
        SamplingFactor::F_2_2,
        SamplingFactor::F_4_1,
        SamplingFactor::R_4_2_1,
    ];
    let mut cases = 0;
    for (colour, channels) in ENCODER_COLOUR_TYPES {
        for sampling in samplings {
            for path in 0..5 {
                for (height, width) in [(1, 1), (13, 7), (61, 47)] {
                    for pattern in [0, 3] {
                        let data = image(
                            pattern,
                            height,
                            width,
                            channels,
                            (width * 31 + height) as u64,
                        );
                        let encode = |scalar: bool| {
                            let mut out = Vec::new();
                            let mut encoder = Encoder::new(&mut out, 85);
                            encoder.set_sampling_factor(sampling);
                            encoder.set_optimized_huffman_tables(path != 1);
                            encoder.set_progressive(path == 2);
                            if path == 3 {
                                encoder.set_restart_interval(3);
                            }
                            encoder.set_chroma_subsampling_method(if path == 4 {
                                ChromaSubsamplingMethod::Nearest
                            } else {
                                ChromaSubsamplingMethod::Average
                            });
                            encoder.set_scalar_reference(scalar);
                            encoder
                                .encode(&data, width as u16, height as u16, colour)
                                .unwrap();
                            out
                        };
                        assert!(
                            encode(false) == encode(true),
                            "{colour:?} {sampling:?} path {path} {height}x{width} pattern {pattern}: SIMD and scalar streams differ"
                        );
                        cases += 1;
                    }
                }
            }
        }
    }
    assert_eq!(cases, 9 * 5 * 5 * 3 * 2);
}
