//! The baseline decoder (src/baseline/) against the zune-jpeg path in wasm, where the
//! kernels it picks differ by build (simd128 or scalar): every fixture and streams of
//! our encoder in all eight sampling schemes, `rgb` and grayscale at odd sizes, plus
//! byte mutations; `zarr_jpeg::decode` must give identical samples or errors with the
//! baseline decoder on and forced off (`testing::set_baseline_for_tests`), and every
//! clean baseline stream must be decoded by the baseline decoder itself.
//! (tests/baseline_decoder.rs is the larger native version.)

use wasm_bindgen_test::wasm_bindgen_test;
use zarr_jpeg::testing::baseline::{self, Output};
use zarr_jpeg::ChunkLayout;

use crate::common::{config, encoder_configs, pattern_image, FIXTURES};

fn configs(components: usize) -> Vec<(&'static str, String)> {
    if components == 1 {
        return vec![(
            "luma",
            r#"{"quality": 90, "encoded_color_space": "grayscale"}"#.into(),
        )];
    }
    ["rgb", "ycbcr"]
        .iter()
        .map(|d| {
            (
                *d,
                format!(
                    r#"{{"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[2, 2], [1, 1], [1, 1]], "decoded_color_space": "{d}"}}"#
                ),
            )
        })
        .collect()
}

/// Compares the codec with the baseline decoder on and off; returns whether the
/// baseline decoder itself decodes every output of the stream.
fn check(name: &str, stream: &[u8]) -> bool {
    let Ok(header) = zarr_jpeg::testing::read_header(stream) else {
        return false;
    };
    let n = header.components.len();
    let shape: Vec<u64> = if n == 1 {
        vec![header.height.into(), header.width.into()]
    } else {
        vec![header.height.into(), header.width.into(), 3]
    };
    let mut all_accepted = true;
    for (decoded, json) in configs(n) {
        let config = config(&json);
        zarr_jpeg::testing::set_baseline_for_tests(false);
        let off = zarr_jpeg::decode(&config, stream, &shape).map_err(|e| e.to_string());
        zarr_jpeg::testing::set_baseline_for_tests(true);
        let on = zarr_jpeg::decode(&config, stream, &shape).map_err(|e| e.to_string());
        assert!(
            on == off,
            "{name} ({decoded}): differs with the baseline decoder on and off"
        );
        // the baseline decoder alone, for the acceptance count
        let layout = ChunkLayout::for_config(&shape, &config);
        let ok = match layout {
            Ok(layout) if zarr_jpeg::testing::check_stream(stream, &layout).is_ok() => {
                let sees_rgb =
                    n == 3 && (header.adobe_transform == Some(0) || header.ids_are_rgb());
                let output = match (n, decoded) {
                    (1, _) => Output::Luma,
                    (_, "rgb") if !sees_rgb => Output::YcbcrToRgb,
                    _ => Output::Copy,
                };
                let mut out = vec![0; layout.sample_count()];
                baseline::decode(stream, output, &mut out).is_ok()
            }
            _ => false,
        };
        all_accepted &= ok;
    }
    all_accepted
}

#[wasm_bindgen_test]
fn baseline_decoder_matches_zune_in_wasm() {
    let mut clean = 0;
    let mut streams: Vec<(String, Vec<u8>)> = Vec::new();
    for (name, bytes) in FIXTURES {
        let clean_baseline = !name.starts_with("reject_")
            && !name.contains("progressive")
            && !name.starts_with("ycc_cb2x2")
            && !name.starts_with("ycc_y3x1");
        let ok = check(name, bytes);
        if clean_baseline {
            assert!(
                ok,
                "{name}: the baseline decoder deferred a clean baseline stream"
            );
            clean += 1;
        }
        streams.push((name.to_string(), bytes.to_vec()));
    }
    for (h, w) in [(1, 1), (7, 13), (9, 17), (17, 33), (61, 47), (37, 130)] {
        for quality in [10, 95] {
            for (label, json, c) in encoder_configs(quality) {
                let samples = pattern_image(6 + quality % 3, h, w, c, (h * w) as u64);
                let shape: Vec<u64> = if c == 1 {
                    vec![h as u64, w as u64]
                } else {
                    vec![h as u64, w as u64, 3]
                };
                let stream = zarr_jpeg::encode(&config(&json), &samples, &shape).unwrap();
                let name = format!("encode {label} q{quality} {h}x{w}");
                assert!(
                    check(&name, &stream),
                    "{name}: the baseline decoder deferred it"
                );
                clean += 1;
                streams.push((name, stream));
            }
        }
    }
    assert!(clean > 150);
    // mutations in the second half of each stream (mostly entropy-coded data)
    let mut seed = 0x9E37_79B9_7F4A_7C15_u64;
    for (name, stream) in &streams {
        for k in 0..8 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let mut s = stream.clone();
            let at = s.len() / 2 + (seed as usize) % (s.len() / 2 + 1);
            let at = at.min(s.len().saturating_sub(1));
            match k % 4 {
                0 => s.truncate(at),
                1 => s[at] ^= 1 << ((seed >> 40) % 8),
                2 => s[at] = 0xFF,
                _ => s[at] = (seed >> 32) as u8,
            }
            check(&format!("{name} mutation {k}"), &s);
        }
    }
}
