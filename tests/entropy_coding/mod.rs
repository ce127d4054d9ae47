//! The encoder's optimised-table writer (vendor/PATCHES.md: blocks turned into tokens as
//! they are made, Huffman tables built from their counts) checked against references
//! that do not share its code, on inputs that reach every case of the token stream:
//! blocks with no AC coefficient, with all 63 non-zero (stored raw), with the last
//! coefficient non-zero (no end-of-block code), zero runs of 16 and more.
//!
//! - The same encoder settings with the crate's standard tables (its unchanged upstream
//!   writers), progressive, or restart intervals quantise the same coefficients, so every
//!   such stream must decode to exactly the samples of the optimised one; the decoder is
//!   zune-jpeg (independent of the encoder), natively and in `--test wasm_node` (with
//!   `+simd128`, the encoder's SIMD kernels).
//! - Natively, libjpeg-turbo's `djpeg` must decode every stream the codec writes, and
//!   agree with zune-jpeg on it.

#[cfg(not(target_arch = "wasm32"))]
use crate::common::{config, pattern_chunk, BASELINE_SCHEMES, PATTERNS};
use crate::common::{pattern_image as image, ENCODER_COLOUR_TYPES, ENCODER_SAMPLING_FACTORS};
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test;
#[cfg(not(target_arch = "wasm32"))]
use zarr_jpeg::encode;
use zune_jpeg::zune_core::bytestream::ZCursor;
use zune_jpeg::zune_core::colorspace::ColorSpace;
use zune_jpeg::zune_core::options::DecoderOptions;
use zune_jpeg::JpegDecoder;

/// zune-jpeg's decode: RGB (its default; grayscale repeated in three channels).
fn zune(stream: &[u8], what: &str) -> Vec<u8> {
    zune_as(stream, ColorSpace::RGB, what)
}

fn zune_as(stream: &[u8], out: ColorSpace, what: &str) -> Vec<u8> {
    let options = DecoderOptions::default().jpeg_set_out_colorspace(out);
    JpegDecoder::new_with_options(ZCursor::new(stream), options)
        .decode()
        .unwrap_or_else(|e| panic!("{what}: zune-jpeg cannot decode the stream: {e:?}"))
}

/// The vendored encoder directly, every colour type × sampling scheme × size × pattern ×
/// quality: the optimised-table stream (the token writer) against the standard-table,
/// progressive and restart-interval streams of the same settings.
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn optimised_streams_decode_like_the_standard_writers() {
    use jpeg_encoder::{ColorType, Encoder, SamplingFactor};

    // Bgr and Bgra are Rgb and Rgba with the channels swapped: nothing new for the writers.
    let colours = ENCODER_COLOUR_TYPES
        .into_iter()
        .filter(|(colour, _)| !matches!(colour, ColorType::Bgr | ColorType::Bgra));
    let mut streams = 0;
    for (colour, channels) in colours {
        // zune-jpeg cannot decode subsampled four-component streams (CMYK, YCCK), which the
        // codec never writes; those take 1×1 only.
        let samplings = if channels == 4 && colour != ColorType::Rgba {
            &ENCODER_SAMPLING_FACTORS[..1]
        } else {
            &ENCODER_SAMPLING_FACTORS[..]
        };
        for &sampling in samplings {
            for (height, width) in [(1, 1), (13, 7), (61, 47), (40, 72)] {
                for pattern in [0, 1, 3, 7, 8] {
                    let data = image(
                        pattern,
                        height,
                        width,
                        channels,
                        (width * 31 + height) as u64,
                    );
                    for quality in [50, 100] {
                        // Optimised tables with restart intervals only where the crate's
                        // per-component writer is not used (CMYK / YCCK with more than 10
                        // blocks per MCU): it counts DC differences without the resets at
                        // restart markers (an upstream bug the token writer does not have).
                        let restarts_ok = channels != 4 || sampling == SamplingFactor::F_1_1;
                        let write = |optimised: bool, progressive: bool, restart: u16| {
                            let mut out = Vec::new();
                            let mut encoder = Encoder::new(&mut out, quality);
                            encoder.set_sampling_factor(sampling);
                            encoder.set_optimized_huffman_tables(optimised);
                            encoder.set_progressive(progressive);
                            if restart > 0 {
                                encoder.set_restart_interval(restart);
                            }
                            encoder
                                .encode(&data, width as u16, height as u16, colour)
                                .unwrap();
                            out
                        };
                        let what = format!(
                            "{colour:?} {sampling:?} {height}x{width} pattern {pattern} q{quality}"
                        );
                        let optimised = zune(&write(true, false, 0), &what);
                        let mut others = vec![
                            ("standard tables", write(false, false, 0)),
                            ("progressive", write(false, true, 0)),
                            ("standard tables, restart 7", write(false, false, 7)),
                        ];
                        if restarts_ok {
                            others.push(("optimised, restart 1", write(true, false, 1)));
                            others.push(("optimised, restart 3", write(true, false, 3)));
                        }
                        for (name, stream) in &others {
                            assert!(
                                zune(stream, &what) == optimised,
                                "{what}: the optimised stream decodes other samples than the {name} one"
                            );
                        }
                        streams += 1 + others.len();
                    }
                }
            }
        }
    }
    assert!(streams > 5000, "only {streams} streams");
}

/// Through the codec (its own colour conversion and chroma averaging, then the writer),
/// each mode × quality × size × pattern: libjpeg-turbo decodes every stream without a
/// warning, and where no chroma is upsampled agrees with zune-jpeg on it to within IDCT
/// rounding (a mis-coded symbol desynchronises the rest of the scan, which no tolerance
/// hides).
#[cfg(not(target_arch = "wasm32"))]
#[test]
fn libjpeg_turbo_decodes_every_codec_stream() {
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
    for (mode, channels) in &modes {
        for quality in [1, 50, 90, 100] {
            let config = config(&format!(r#"{{"quality": {quality}, {mode}}}"#));
            for (height, width) in [(7, 13), (61, 47), (9, 130)] {
                for pattern in 0..PATTERNS {
                    let (data, shape) = pattern_chunk(pattern, height, width, *channels);
                    let stream = encode(&config, &data, &shape).unwrap();
                    let what = format!("{mode} q{quality} {height}x{width} pattern {pattern}");
                    // `djpeg` fails on any warning (premature end of data, extraneous
                    // bytes, bad Huffman code).
                    let reference = crate::common::djpeg(&stream);
                    assert_eq!(reference.samples.len(), data.len(), "{what}");
                    let ours = zune_as(
                        &stream,
                        if *channels == 1 {
                            ColorSpace::Luma
                        } else {
                            ColorSpace::RGB
                        },
                        &what,
                    );
                    if !mode.contains("subsampling") || mode.contains("[[1, 1]") {
                        // Without chroma upsampling (whose edge rules differ between the
                        // two), they agree to within IDCT rounding.
                        let max = crate::common::max_abs_diff(&reference.samples, &ours);
                        assert!(max <= 4, "{what}: djpeg and zune-jpeg differ by {max}");
                    }
                }
            }
        }
    }
}
