//! The `full-decoder` feature: with it (the default, and the npm package's
//! `zarr_jpeg_full_decoder` module) progressive streams decode; without it (the package's
//! reader and writer modules) they fail with `ErrorKind::NeedsFullDecoder`, naming the
//! reason and what to do, while baseline and extended sequential streams still decode.
//! `cargo test` runs the first half; scripts/test.sh also runs
//! `cargo test --no-default-features --features encoder --test full_decoder` for the second.
#![cfg(not(target_arch = "wasm32"))]

use zarr_jpeg::{ConfigValue, ErrorKind, JpegConfig};

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(format!(
        "{}/tests/fixtures/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

fn config(color: &str) -> JpegConfig {
    let mut members = vec![
        ("quality".to_string(), ConfigValue::Number(90.0)),
        (
            "encoded_color_space".to_string(),
            ConfigValue::String(color.into()),
        ),
    ];
    if color == "ycbcr" {
        let factor = |h: f64, v: f64| {
            ConfigValue::Array(vec![ConfigValue::Number(h), ConfigValue::Number(v)])
        };
        members.push((
            "subsampling".into(),
            ConfigValue::Array(vec![factor(2.0, 2.0), factor(1.0, 1.0), factor(1.0, 1.0)]),
        ));
    }
    JpegConfig::parse(&ConfigValue::Object(members)).unwrap()
}

/// (fixture, encoded colour space, shape): 61 × 47 crops from tests/fixtures.
const PROGRESSIVE: &[(&str, &str, &[u64])] = &[
    (
        "gray_progressive_q90_cjpeg_61x47.jpg",
        "grayscale",
        &[47, 61],
    ),
    (
        "ycc420_progressive_q90_cjpeg_61x47.jpg",
        "ycbcr",
        &[47, 61, 3],
    ),
    (
        "ycc420_progressive_q90_pil_61x47.jpg",
        "ycbcr",
        &[47, 61, 3],
    ),
];
const SEQUENTIAL: &[(&str, &str, &[u64])] = &[
    ("gray_q90_cjpeg_61x47.jpg", "grayscale", &[47, 61]),
    ("ycc420_q90_pil_61x47.jpg", "ycbcr", &[47, 61, 3]),
    ("ycc420_sof1_q5_cjpeg_61x47.jpg", "ycbcr", &[47, 61, 3]),
    (
        "ycc420_restart3blocks_q90_cjpeg_61x47.jpg",
        "ycbcr",
        &[47, 61, 3],
    ),
];

#[test]
fn sequential_streams_decode_in_every_build() {
    for (file, color, shape) in SEQUENTIAL {
        let out = zarr_jpeg::decode(&config(color), &fixture(file), shape)
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(out.len() as u64, shape.iter().product::<u64>(), "{file}");
    }
}

#[cfg(feature = "full-decoder")]
#[test]
fn progressive_streams_decode_with_the_full_decoder() {
    for (file, color, shape) in PROGRESSIVE {
        let out = zarr_jpeg::decode(&config(color), &fixture(file), shape)
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(out.len() as u64, shape.iter().product::<u64>(), "{file}");
        let mut into = vec![0u8; out.len()];
        zarr_jpeg::decode_into(&config(color), &fixture(file), shape, &mut into).unwrap();
        assert_eq!(into, out, "{file}");
    }
}

#[cfg(not(feature = "full-decoder"))]
#[test]
fn progressive_streams_need_the_full_decoder_without_it() {
    for (file, color, shape) in PROGRESSIVE {
        let err = zarr_jpeg::decode(&config(color), &fixture(file), shape).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::NeedsFullDecoder, "{file}: {err}");
        let text = err.to_string();
        assert!(
            text == "jpeg: JPEG stream needs the full decoder: this module's baseline decoder \
                    leaves this stream to the full decoder (a progressive stream (SOF2))",
            "{text}"
        );
        // decode_into leaves the buffer alone.
        let mut into = vec![7u8; shape.iter().product::<u64>() as usize];
        let err =
            zarr_jpeg::decode_into(&config(color), &fixture(file), shape, &mut into).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::NeedsFullDecoder);
        assert!(
            into.iter().all(|&b| b == 7),
            "{file}: the output was written"
        );
    }
}

/// Header checks come first: a progressive stream for the wrong chunk is a mismatch in
/// every build, not a reason to fetch the full decoder.
#[test]
fn header_checks_come_before_deferring() {
    let (file, color, _) = PROGRESSIVE[1];
    let err = zarr_jpeg::decode(&config(color), &fixture(file), &[48, 61, 3]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::StreamMismatch, "{err}");
}

/// An `rgb` stream (Adobe transform 0) decoded to `decoded_color_space: "ycbcr"` needs a
/// conversion after decoding, which only the full decoder carries: the small modules leave
/// it there, before any output is written; with the full decoder it decodes to the
/// converted samples.
#[test]
fn streams_needing_a_colour_conversion_go_to_the_full_decoder() {
    let rgb_config = JpegConfig::parse(&ConfigValue::Object(vec![
        ("quality".to_string(), ConfigValue::Number(90.0)),
        (
            "encoded_color_space".to_string(),
            ConfigValue::String("rgb".into()),
        ),
    ]))
    .unwrap();
    let shape = [16u64, 24, 3];
    let samples: Vec<u8> = (0..16 * 24 * 3).map(|i| (i * 7 % 251) as u8).collect();
    let stream = zarr_jpeg::encode(&rgb_config, &samples, &shape).unwrap();
    let factor =
        |h: f64, v: f64| ConfigValue::Array(vec![ConfigValue::Number(h), ConfigValue::Number(v)]);
    let ycbcr_out = JpegConfig::parse(&ConfigValue::Object(vec![
        ("quality".to_string(), ConfigValue::Number(90.0)),
        (
            "encoded_color_space".to_string(),
            ConfigValue::String("ycbcr".into()),
        ),
        (
            "decoded_color_space".to_string(),
            ConfigValue::String("ycbcr".into()),
        ),
        (
            "subsampling".to_string(),
            ConfigValue::Array(vec![factor(1.0, 1.0), factor(1.0, 1.0), factor(1.0, 1.0)]),
        ),
    ]))
    .unwrap();
    let result = zarr_jpeg::decode(&ycbcr_out, &stream, &shape);
    #[cfg(feature = "full-decoder")]
    {
        let ycbcr = result.unwrap();
        let rgb = zarr_jpeg::decode(&rgb_config, &stream, &shape).unwrap();
        let mut expected = rgb.clone();
        zarr_jpeg::testing::rgb_to_ycbcr_in_place(&mut expected);
        assert_eq!(ycbcr, expected);
    }
    #[cfg(not(feature = "full-decoder"))]
    {
        let err = result.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::NeedsFullDecoder, "{err}");
        assert!(
            err.to_string()
                .contains("a colour conversion after decoding"),
            "{err}"
        );
        let mut into = vec![7u8; 16 * 24 * 3];
        let err = zarr_jpeg::decode_into(&ycbcr_out, &stream, &shape, &mut into).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::NeedsFullDecoder);
        assert!(into.iter().all(|&b| b == 7), "the output was written");
    }
}
