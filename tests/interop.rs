//! Interoperability with libjpeg-turbo (`djpeg`, the decoder behind PIL and browsers):
//! every stream we write decodes there close to our own decode, and every stream
//! libjpeg-turbo writes (tests/fixtures, made by tests/fixtures/generate.py) decodes
//! here close to libjpeg-turbo's own output.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::*;
use zarr_jpeg::ErrorKind;

/// Largest per-sample difference between our decode and libjpeg-turbo's. Measured on
/// 2026-11-29 over every mode and fixture here (run with `-- --nocapture` to print):
/// max 4, mean at most 0.362 (4:2:0, where zune-jpeg's chroma upsampling rounds
/// differently from libjpeg-turbo's "fancy" upsampling); 1 for grayscale.
const MAX_DIFF_VS_LIBJPEG: u8 = 4;
/// Mean absolute difference bound, from the same measurement.
const MEAN_DIFF_VS_LIBJPEG: f64 = 0.4;

fn compare(label: &str, ours: &[u8], theirs: &[u8]) {
    let max = max_abs_diff(ours, theirs);
    let mean = mean_abs_diff(ours, theirs);
    println!("{label}: max |ours - libjpeg-turbo| = {max}, mean = {mean:.3}");
    assert!(
        max <= MAX_DIFF_VS_LIBJPEG,
        "{label}: max difference {max} > {MAX_DIFF_VS_LIBJPEG}"
    );
    assert!(
        mean <= MEAN_DIFF_VS_LIBJPEG,
        "{label}: mean difference {mean:.3} > {MEAN_DIFF_VS_LIBJPEG}"
    );
}

const MODES: &[(&str, &str)] = &[
    (
        "ycbcr 4:4:4",
        r#"{"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[1, 1], [1, 1], [1, 1]]}"#,
    ),
    (
        "ycbcr 4:2:2",
        r#"{"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[2, 1], [1, 1], [1, 1]]}"#,
    ),
    (
        "ycbcr 4:4:0",
        r#"{"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[1, 2], [1, 1], [1, 1]]}"#,
    ),
    (
        "ycbcr 4:2:0",
        r#"{"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[2, 2], [1, 1], [1, 1]]}"#,
    ),
    (
        "ycbcr [4,1]",
        r#"{"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[4, 1], [1, 1], [1, 1]]}"#,
    ),
    (
        "ycbcr [1,4]",
        r#"{"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[1, 4], [1, 1], [1, 1]]}"#,
    ),
    (
        "ycbcr [4,2]",
        r#"{"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[4, 2], [1, 1], [1, 1]]}"#,
    ),
    (
        "ycbcr [2,4]",
        r#"{"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[2, 4], [1, 1], [1, 1]]}"#,
    ),
    ("rgb", r#"{"quality": 90, "encoded_color_space": "rgb"}"#),
    (
        "ycbcr q50 4:2:0",
        r#"{"quality": 50, "encoded_color_space": "ycbcr", "subsampling": [[2, 2], [1, 1], [1, 1]]}"#,
    ),
    (
        "rgb q100",
        r#"{"quality": 100, "encoded_color_space": "rgb"}"#,
    ),
];

#[test]
fn our_colour_streams_decode_in_libjpeg_turbo_like_ours() {
    let image = ihc().tile(203, 317, 31, 17); // odd size: exercises edge padding too
    for (label, json) in MODES {
        let config = config(json);
        let stream = zarr_jpeg::encode(&config, &image.samples, &image.shape()).unwrap();
        let ours = zarr_jpeg::decode(&config, &stream, &image.shape()).unwrap();
        let theirs = djpeg(&stream);
        assert_eq!(
            (theirs.height, theirs.width, theirs.components),
            (image.height, image.width, 3),
            "{label}"
        );
        compare(label, &ours, &theirs.samples);
        // Both decoders agree with the original to about the same degree.
        let (p_ours, p_theirs) = (
            psnr(&ours, &image.samples),
            psnr(&theirs.samples, &image.samples),
        );
        println!("{label}: PSNR ours {p_ours:.2} dB, libjpeg-turbo {p_theirs:.2} dB");
        assert!(
            (p_ours - p_theirs).abs() < 0.5,
            "{label}: PSNR {p_ours:.2} vs {p_theirs:.2}"
        );
    }
}

#[test]
fn our_grayscale_streams_decode_in_libjpeg_turbo_like_ours() {
    let image = cell().tile(131, 257, 300, 300);
    for quality in [50, 90, 100] {
        let config = config(&format!(
            r#"{{"quality": {quality}, "encoded_color_space": "grayscale"}}"#
        ));
        let stream = zarr_jpeg::encode(&config, &image.samples, &image.shape()).unwrap();
        let ours = zarr_jpeg::decode(&config, &stream, &image.shape()).unwrap();
        let theirs = djpeg(&stream);
        assert_eq!(theirs.components, 1);
        compare(&format!("grayscale q{quality}"), &ours, &theirs.samples);
    }
}

#[test]
fn ycbcr_passthrough_streams_are_ordinary_ycbcr_jpeg() {
    // decoded ycbcr → encoded ycbcr stores the samples unconverted, and the stream is a
    // normal YCbCr JPEG: libjpeg-turbo's RGB output equals ours when we decode to rgb.
    let rgb = ihc().tile(64, 96, 100, 100);
    let mut ycc = rgb.samples.clone();
    zarr_jpeg::testing::rgb_to_ycbcr_in_place(&mut ycc);
    let pass = config(
        r#"{"quality": 90, "encoded_color_space": "ycbcr", "decoded_color_space": "ycbcr", "subsampling": [[2, 2], [1, 1], [1, 1]]}"#,
    );
    let stream = zarr_jpeg::encode(&pass, &ycc, &rgb.shape()).unwrap();
    let to_rgb = config(
        r#"{"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[2, 2], [1, 1], [1, 1]]}"#,
    );
    let ours = zarr_jpeg::decode(&to_rgb, &stream, &rgb.shape()).unwrap();
    compare("ycbcr passthrough", &ours, &djpeg(&stream).samples);
}

struct Fixture {
    file: String,
    width: u64,
    height: u64,
    components: u64,
    expect: serde_json::Value,
}

fn fixtures() -> Vec<Fixture> {
    let text = std::fs::read_to_string(repo_path("tests/fixtures/manifest.json")).unwrap();
    let entries: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
    entries
        .into_iter()
        .map(|e| Fixture {
            file: e["file"].as_str().unwrap().to_string(),
            width: e["width"].as_u64().unwrap(),
            height: e["height"].as_u64().unwrap(),
            components: e["components"].as_u64().unwrap(),
            expect: e["expect"].clone(),
        })
        .collect()
}

/// Streams libjpeg-turbo decodes that this codec rejects by design, with the reason.
const REJECTED_BY_DESIGN: &[(&str, &str)] = &[
    // zune-jpeg cannot reconstruct a horizontal factor of 3 (see config.rs).
    (
        "ycc_y3x1_q90_cjpeg_61x47.jpg",
        "sampling factors [[3, 1], [1, 1], [1, 1]] are not supported",
    ),
    // zune-jpeg upsamples relative to the first component; here Cb is finer than Y.
    (
        "ycc_cb2x2_q90_cjpeg_61x47.jpg",
        "a later component is sampled more finely than the first",
    ),
];

#[test]
fn separate_scan_colour_streams_decode_like_libjpeg_turbo_or_are_refused_by_name() {
    // Valid sequential streams that code their components in several scans (libjpeg-turbo's
    // `cjpeg -scans`; the jpeg-encoder crate writes optimised colour so). zune-jpeg 0.5.15
    // skipped rows of such scans (vendor/PATCHES.md, zune-jpeg section on separate scans);
    // with the patch every form the decoder accepts must match libjpeg-turbo, and the forms
    // zune still cannot place are refused by name, never decoded wrongly.
    let dir = std::env::temp_dir().join(format!("zarr-jpeg-scans-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = |name: &str, text: &str| {
        let file = dir.join(name);
        std::fs::write(&file, text).unwrap();
        file.to_str().unwrap().to_string()
    };
    // (scan script, decodes?): one scan per component in frame order or not, Y alone then
    // Cb and Cr together, and the two forms refused (first scan not Y; Y with Cb in a scan)
    let scripts = [
        (script("y-cb-cr.txt", "0;\n1;\n2;\n"), true),
        (script("y-cr-cb.txt", "0;\n2;\n1;\n"), true),
        (script("y-cbcr.txt", "0;\n1 2;\n"), true),
        (script("cb-y-cr.txt", "1;\n0;\n2;\n"), false),
        (script("ycb-cr.txt", "0 1;\n2;\n"), false),
    ];
    let config = config(r#"{"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[2, 2], [1, 1], [1, 1]]}"#);
    let mut decoded = 0;
    for (height, width) in [(9, 35), (47, 61), (33, 17), (1, 1), (136, 200)] {
        let image = ihc().tile(height, width, 0, 0);
        for sample in ["1x1", "2x1", "1x2", "2x2", "4x1", "1x4", "4x2", "2x4"] {
            for (scans, decodes) in &scripts {
                for restart in [None, Some("1")] {
                    let mut args = vec!["-quality", "90", "-sample", sample, "-scans", scans.as_str()];
                    if let Some(rows) = restart {
                        args.extend(["-restart", rows]);
                    }
                    let stream = cjpeg(&image, &args);
                    let header = zarr_jpeg::testing::read_header(&stream).unwrap();
                    assert!(usize::from(header.first_scan_components) < 3, "{args:?}: one scan");
                    let what = format!("{width}×{height} {args:?}");
                    // a scan of Y with Cb is refused only where a factor is not 1 × 1
                    let refused = !decodes && !(scans.ends_with("ycb-cr.txt") && sample == "1x1");
                    match zarr_jpeg::decode(&config, &stream, &image.shape()) {
                        Ok(ours) => {
                            assert!(!refused, "{what}: decoded, expected a refusal");
                            let reference = djpeg(&stream);
                            assert!(max_abs_diff(&ours, &reference.samples) <= 4, "{what}: max |ours - djpeg| {}", max_abs_diff(&ours, &reference.samples));
                            decoded += 1;
                        }
                        Err(err) => {
                            assert!(refused, "{what}: {err}");
                            assert_eq!(err.kind(), ErrorKind::UnsupportedStream, "{what}: {err}");
                            assert!(err.to_string().contains("a sequential stream"), "{what}: {err}");
                        }
                    }
                }
            }
        }
    }
    assert_eq!(decoded, 5 * 8 * 2 * 3 + 5 * 2, "streams decoded");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn libjpeg_turbo_fixtures_decode_like_libjpeg_turbo() {
    let mut checked = 0;
    for f in fixtures() {
        if f.expect != serde_json::json!("decode") {
            continue;
        }
        let stream = std::fs::read(repo_path(&format!("tests/fixtures/{}", f.file))).unwrap();
        let (json, shape) = if f.components == 1 {
            (
                r#"{"quality": 90, "encoded_color_space": "grayscale"}"#,
                vec![f.height, f.width],
            )
        } else {
            (
                r#"{"quality": 90, "encoded_color_space": "rgb"}"#,
                vec![f.height, f.width, 3],
            )
        };
        let result = zarr_jpeg::decode(&config(json), &stream, &shape);
        if let Some((_, reason)) = REJECTED_BY_DESIGN.iter().find(|(name, _)| *name == f.file) {
            let err = result.expect_err(&f.file);
            assert_eq!(err.kind(), ErrorKind::UnsupportedStream, "{}", f.file);
            assert!(err.to_string().contains(reason), "{}: {err}", f.file);
            continue;
        }
        let ours = result.unwrap_or_else(|e| panic!("{}: {e}", f.file));
        compare(&f.file, &ours, &djpeg(&stream).samples);
        checked += 1;
    }
    assert!(checked >= 35, "only {checked} fixtures decoded");
}

#[test]
fn unsupported_fixtures_are_rejected_naming_the_feature() {
    let mut checked = 0;
    for f in fixtures() {
        let Some(feature) = f.expect.get("reject").and_then(|v| v.as_str()) else {
            continue;
        };
        let stream = std::fs::read(repo_path(&format!("tests/fixtures/{}", f.file))).unwrap();
        let shape = vec![f.height, f.width, 3];
        let err = zarr_jpeg::decode(
            &config(r#"{"quality": 90, "encoded_color_space": "rgb"}"#),
            &stream,
            &shape,
        )
        .expect_err(&f.file);
        let message = err.to_string();
        let named = match feature {
            "arithmetic coding" => "arithmetic coding",
            "4 components (CMYK)" => "4-component (CMYK or YCCK)",
            "lossless (predictive) JPEG" => "lossless JPEG",
            other => panic!("no expectation for {other}"),
        };
        assert_eq!(
            err.kind(),
            ErrorKind::UnsupportedStream,
            "{}: {message}",
            f.file
        );
        assert!(message.contains(named), "{}: {message}", f.file);
        checked += 1;
    }
    assert_eq!(checked, 4);
}
