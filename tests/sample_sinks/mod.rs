//! Decoding through a `SampleSink` (the samples handed over a band of rows at a time, as the
//! wasm boundary writes them into the `Uint8Array` it returns) must give exactly
//! `zarr_jpeg::decode`'s samples or its error, and the bands must come in order,
//! contiguous, whole rows of at most 64 KiB (at least one row), covering the chunk once
//! (the streams the baseline decoder defers: one band of the whole chunk). Natively
//! (`tests/sample_sinks/main.rs`) and in `--test wasm_node` (with `+simd128`, the SIMD kernels),
//! where the wasm export's `Uint8Array` is compared too.

use crate::common::{config, encoder_configs, pattern_image, FIXTURES};
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test;
use zarr_jpeg::{decode, decode_to_sink, CodecError, JpegConfig, SampleSink};

/// A sink that records `start` and every band, and refuses to start if `refuse`.
#[derive(Default)]
struct Recorder {
    started: Vec<usize>,
    samples: Vec<u8>,
    bands: Vec<(usize, usize)>,
    refuse: bool,
}

impl SampleSink for Recorder {
    fn start(&mut self, sample_count: usize) -> Result<(), CodecError> {
        assert!(self.bands.is_empty(), "start after a write");
        self.started.push(sample_count);
        if self.refuse {
            return Err(CodecError::data("test: this sink refuses"));
        }
        self.samples = vec![0xA5; sample_count];
        Ok(())
    }

    fn write(&mut self, offset: usize, band: &[u8]) {
        assert_eq!(self.started.len(), 1, "a write before start");
        assert!(
            offset + band.len() <= self.samples.len(),
            "band {offset}+{} past the end ({})",
            band.len(),
            self.samples.len()
        );
        self.bands.push((offset, band.len()));
        self.samples[offset..offset + band.len()].copy_from_slice(band);
    }
}

struct Case {
    name: String,
    stream: Vec<u8>,
    /// the baseline decoder must decode it (else one band of the whole chunk)
    baseline: bool,
}

/// Renames the components of a stream's frame and scan headers 'R', 'G', 'B' (keeping
/// its JFIF marker): stored YCbCr that zune-jpeg reads as RGB, the path that converts
/// with `color::ycbcr_to_rgb_in_place`.
fn rgb_ids(stream: &[u8]) -> Vec<u8> {
    let mut s = stream.to_vec();
    let mut i = 2;
    while i + 4 <= s.len() && s[i] == 0xFF {
        let marker = s[i + 1];
        let len = usize::from(s[i + 2]) << 8 | usize::from(s[i + 3]);
        match marker {
            0xC0 | 0xC1 => {
                for k in 0..3 {
                    s[i + 10 + 3 * k] = b"RGB"[k];
                }
            }
            0xDA => {
                for k in 0..3 {
                    s[i + 5 + 2 * k] = b"RGB"[k];
                }
                break;
            }
            _ => {}
        }
        i += 2 + len;
    }
    s
}

fn cases() -> Vec<Case> {
    let mut out: Vec<Case> = FIXTURES
        .iter()
        .map(|(name, stream)| Case {
            name: name.to_string(),
            stream: stream.to_vec(),
            baseline: !name.starts_with("reject_")
                && !name.contains("progressive")
                && !name.starts_with("ycc_cb2x2")
                && !name.starts_with("ycc_y3x1"),
        })
        .collect();
    // 300x500: several bands per chunk and rows across MCU rows; 20x23000: one row
    // (> 64 KiB) per band.
    let sizes = [(1, 1), (7, 13), (17, 33), (61, 47), (300, 500), (20, 23000)];
    for (i, &(h, w)) in sizes.iter().enumerate() {
        for (label, json, c) in encoder_configs(90) {
            let samples = pattern_image(6 + i % 3, h, w, c, i as u64);
            let mut shape = vec![h as u64, w as u64];
            if c == 3 {
                shape.push(3);
            }
            let stream = zarr_jpeg::encode(&config(&json), &samples, &shape).unwrap();
            if label == "ycbcr2x2" {
                out.push(Case {
                    name: format!("encode {label} {h}x{w}, ids R G B"),
                    stream: rgb_ids(&stream),
                    baseline: true,
                });
            }
            out.push(Case {
                name: format!("encode {label} {h}x{w}"),
                stream,
                baseline: true,
            });
        }
    }
    out
}

/// The chunk configurations (every decoded colour space) and shape for a stream.
fn chunks_for(stream: &[u8]) -> (Vec<(&'static str, JpegConfig)>, Vec<u64>) {
    let colour = |decoded: &str| {
        config(&format!(
            r#"{{"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[2, 2], [1, 1], [1, 1]], "decoded_color_space": "{decoded}"}}"#
        ))
    };
    match zarr_jpeg::testing::read_header(stream) {
        Ok(h) if h.components.len() == 1 => (
            vec![(
                "grayscale",
                config(r#"{"quality": 90, "encoded_color_space": "grayscale"}"#),
            )],
            vec![u64::from(h.height), u64::from(h.width)],
        ),
        Ok(h) => (
            vec![("rgb", colour("rgb")), ("ycbcr", colour("ycbcr"))],
            vec![u64::from(h.height), u64::from(h.width), 3],
        ),
        Err(_) => (vec![("rgb", colour("rgb"))], vec![8, 8, 3]),
    }
}

fn describe(r: &Result<Vec<u8>, CodecError>) -> String {
    match r {
        Ok(s) => format!("{} samples", s.len()),
        Err(e) => format!("error {e}"),
    }
}

/// Every stream × decoded colour space: the sink's samples are `decode`'s (or its error),
/// through a recording sink and a `&mut [u8]`; the bands are in order, contiguous, whole
/// rows of at most 64 KiB (one band of the chunk for deferred streams), covering it once.
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn a_sink_gets_the_samples_of_decode_in_ordered_bands_covering_the_chunk_once() {
    let (mut decoded, mut banded, mut multi) = (0, 0, 0);
    for case in cases() {
        let (configs, shape) = chunks_for(&case.stream);
        for (decoded_as, config) in configs {
            let what = format!("{} as {decoded_as}", case.name);
            let expected = decode(&config, &case.stream, &shape);
            // the same samples, or the same error, as `decode`
            let assert_as_decode = |got: &Result<Vec<u8>, _>, from: &str| {
                assert!(
                    got.as_ref().map_err(ToString::to_string)
                        == expected.as_ref().map_err(ToString::to_string),
                    "{what}: {} from {from}, {} from decode",
                    describe(got),
                    describe(&expected)
                );
            };
            let mut sink = Recorder::default();
            let got = decode_to_sink(&config, &case.stream, &shape, &mut sink)
                .map(|()| sink.samples.clone());
            assert_as_decode(&got, "the sink");
            let mut slice = vec![0x5A; expected.as_ref().map_or(0, Vec::len)];
            let via_slice =
                decode_to_sink(&config, &case.stream, &shape, &mut slice.as_mut_slice())
                    .map(|()| slice.clone());
            assert_as_decode(&via_slice, "a slice sink");
            let Ok(expected) = expected else {
                assert!(!case.baseline, "{what}: a clean stream fails");
                continue;
            };
            decoded += 1;
            assert_eq!(sink.started, vec![expected.len()], "{what}: start");
            let row = (expected.len() / shape[0] as usize).max(1);
            let mut next = 0;
            for (k, &(offset, len)) in sink.bands.iter().enumerate() {
                assert_eq!(
                    offset, next,
                    "{what}: band {k} at {offset}, expected {next}"
                );
                if case.baseline {
                    assert!(
                        len > 0 && len % row == 0 && (len <= 65536 || len == row),
                        "{what}: band {k} of {len} bytes (rows of {row})"
                    );
                    let last = offset + len == expected.len();
                    assert!(
                        last || len == (65536 / row).max(1) * row,
                        "{what}: band {k} of {len} bytes is short (rows of {row})"
                    );
                } else {
                    assert_eq!(len, expected.len(), "{what}: a deferred stream's band");
                }
                next += len;
            }
            assert_eq!(next, expected.len(), "{what}: the bands end at {next}");
            banded += 1;
            multi += usize::from(sink.bands.len() > 1);
        }
    }
    assert!(
        decoded > 150 && banded == decoded && multi > 20,
        "{decoded} {banded} {multi}"
    );
}

/// Damaged streams (truncated, bytes flipped in the entropy-coded data): the sink ends
/// with `decode`'s samples or error, also where the baseline decoder defers part-way
/// (the full decoder then writes the whole chunk again).
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn damaged_streams_give_the_samples_or_errors_of_decode() {
    let mut n = 0;
    for case in cases().into_iter().filter(|c| c.stream.len() < 30_000) {
        let (configs, shape) = chunks_for(&case.stream);
        let len = case.stream.len();
        let mut mutants = Vec::new();
        for cut in [len / 3, len / 2, len - 2, len - 1] {
            mutants.push(case.stream[..cut].to_vec());
        }
        for at in [len / 2, len * 3 / 4, len - 3] {
            for byte in [0x00, 0xFF, 0x5C] {
                let mut s = case.stream.clone();
                s[at] = byte;
                mutants.push(s);
            }
        }
        for (i, stream) in mutants.iter().enumerate() {
            for (decoded_as, config) in &configs {
                let expected = decode(config, stream, &shape);
                let mut sink = Recorder::default();
                let got = decode_to_sink(config, stream, &shape, &mut sink)
                    .map(|()| sink.samples.clone());
                assert!(
                    got.as_ref().map_err(ToString::to_string)
                        == expected.as_ref().map_err(ToString::to_string),
                    "{} mutant {i} as {decoded_as}: {} from the sink, {} from decode",
                    case.name,
                    describe(&got),
                    describe(&expected)
                );
                n += 1;
            }
        }
    }
    assert!(n > 1000, "{n}");
}

/// A sink that refuses to start ends the decode with its error, before any write; a slice
/// of the wrong length is refused with `decode_into`'s message before anything is written;
/// a stream that fails its checks or needs another colour space fails before `start`.
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn a_refusing_sink_ends_the_decode_before_any_write() {
    let json = r#"{"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[2, 2], [1, 1], [1, 1]]}"#;
    let samples = pattern_image(6, 300, 500, 3, 1);
    let shape = [300, 500, 3];
    let stream = zarr_jpeg::encode(&config(json), &samples, &shape).unwrap();
    let config = config(json);
    let mut sink = Recorder {
        refuse: true,
        ..Recorder::default()
    };
    let err = decode_to_sink(&config, &stream, &shape, &mut sink).unwrap_err();
    assert_eq!(
        err.to_string(),
        CodecError::data("test: this sink refuses").to_string()
    );
    assert_eq!(sink.started, vec![300 * 500 * 3]);
    assert!(sink.bands.is_empty(), "a write after a refused start");

    let mut short = vec![0u8; 300 * 500 * 3 - 1];
    let err = decode_to_sink(&config, &stream, &shape, &mut short.as_mut_slice()).unwrap_err();
    let mut into = vec![0u8; 300 * 500 * 3 - 1];
    let expected = zarr_jpeg::decode_into(&config, &stream, &shape, &mut into).unwrap_err();
    assert_eq!(err.to_string(), expected.to_string());
    assert!(short.iter().all(|&b| b == 0), "a refused slice was written");

    // errors before the output exists: no start
    for (stream, shape) in [
        (&stream[..stream.len() / 2], &shape[..]),
        (&stream[..], &[300, 501, 3][..]),
    ] {
        let mut sink = Recorder::default();
        let err = decode_to_sink(&config, stream, shape, &mut sink).unwrap_err();
        assert_eq!(
            err.to_string(),
            decode(&config, stream, shape).unwrap_err().to_string()
        );
        assert!(sink.started.is_empty(), "started for a failing stream");
    }
    let gray = crate::common::config(r#"{"quality": 90, "encoded_color_space": "grayscale"}"#);
    let gray_stream = zarr_jpeg::encode(&gray, &[7; 64], &[8, 8]).unwrap();
    let mut sink = Recorder::default();
    let err = decode_to_sink(&config, &gray_stream, &[8, 8, 3], &mut sink).unwrap_err();
    assert_eq!(
        err.to_string(),
        decode(&config, &gray_stream, &[8, 8, 3])
            .unwrap_err()
            .to_string()
    );
    assert!(sink.started.is_empty(), "started for a mismatched stream");
}

/// The wasm export `decode` returns the `Uint8Array` its sink wrote: `decode`'s samples
/// or its error message, for every stream and decoded colour space.
#[cfg(target_arch = "wasm32")]
#[wasm_bindgen_test]
fn the_wasm_export_returns_the_samples_or_error_of_decode() {
    use wasm_bindgen::{JsCast, JsValue};
    let mut n = 0;
    for case in cases() {
        let (configs, shape) = chunks_for(&case.stream);
        let js_shape: js_sys::Array = shape.iter().map(|&d| JsValue::from(d as f64)).collect();
        for (decoded_as, config) in configs {
            let json = js_sys::JSON::parse(&format!(
                r#"{{"quality": 90, "encoded_color_space": "{}", "decoded_color_space": "{decoded_as}"{}}}"#,
                if decoded_as == "grayscale" { "grayscale" } else { "ycbcr" },
                if decoded_as == "grayscale" { "" } else { r#", "subsampling": [[2, 2], [1, 1], [1, 1]]"# }
            ))
            .unwrap();
            let expected = decode(&config, &case.stream, &shape).map_err(|e| e.to_string());
            let stream = js_sys::Uint8Array::from(case.stream.as_slice());
            let got = zarr_jpeg::wasm::decode(json, stream.into(), js_shape.clone().into())
                .map(|a| a.to_vec())
                .map_err(|e| String::from(e.unchecked_ref::<js_sys::Error>().message()));
            assert!(
                got == expected,
                "{} as {decoded_as}: the export differs",
                case.name
            );
            n += 1;
        }
    }
    assert!(n > 100);
}
