//! The configuration rules of the jpeg codec spec ("Configuration parameters"), one
//! case per rule, each checking that the error names the field and the rule.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::{config_value, BASELINE_SCHEMES};
use zarr_jpeg::{DecodedColorSpace, EncodedColorSpace, ErrorKind, JpegConfig, SamplingFactor};

fn reject(json: &str, expected: &[&str]) {
    let err = JpegConfig::parse(&config_value(json)).expect_err(json);
    assert_eq!(err.kind(), ErrorKind::InvalidConfiguration, "{json}");
    let message = err.to_string();
    for part in expected {
        assert!(
            message.contains(part),
            "{json}: message {message:?} lacks {part:?}"
        );
    }
}

fn accept(json: &str) -> JpegConfig {
    JpegConfig::parse(&config_value(json)).unwrap_or_else(|e| panic!("{json}: {e}"))
}

#[test]
fn quality_is_a_required_integer_from_1_to_100() {
    reject(
        r#"{"encoded_color_space": "grayscale"}"#,
        &["quality is required", "no default"],
    );
    for bad in ["0", "101", "90.5", "\"90\"", "-1", "null", "true", "[90]"] {
        let json = format!(r#"{{"quality": {bad}, "encoded_color_space": "grayscale"}}"#);
        reject(&json, &["quality must be an integer from 1 to 100", "got"]);
    }
    reject(
        r#"{"quality": "90", "encoded_color_space": "grayscale"}"#,
        &["got \"90\" (a string)"],
    );
    for good in [1, 50, 95, 100] {
        let c = accept(&format!(
            r#"{{"quality": {good}, "encoded_color_space": "grayscale"}}"#
        ));
        assert_eq!(c.quality, good);
    }
    // 90.0 is the integer 90 (JavaScript has one number type).
    assert_eq!(
        accept(r#"{"quality": 90.0, "encoded_color_space": "grayscale"}"#).quality,
        90
    );
}

#[test]
fn encoded_color_space_is_required_and_closed() {
    reject(r#"{"quality": 90}"#, &["encoded_color_space is required"]);
    reject(
        r#"{"quality": 90, "encoded_color_space": "cmyk"}"#,
        &["encoded_color_space must be", "\"cmyk\""],
    );
    reject(
        r#"{"quality": 90, "encoded_color_space": "RGB"}"#,
        &["encoded_color_space must be"],
    );
    reject(
        r#"{"quality": 90, "encoded_color_space": 3}"#,
        &["encoded_color_space must be", "got 3"],
    );
}

#[test]
fn decoded_color_space_defaults_depend_only_on_the_configuration() {
    let gray = accept(r#"{"quality": 90, "encoded_color_space": "grayscale"}"#);
    assert_eq!(gray.decoded_color_space, DecodedColorSpace::Grayscale);
    let rgb = accept(r#"{"quality": 90, "encoded_color_space": "rgb"}"#);
    assert_eq!(rgb.decoded_color_space, DecodedColorSpace::Rgb);
    let ycc = accept(
        r#"{"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[2, 2], [1, 1], [1, 1]]}"#,
    );
    assert_eq!(ycc.decoded_color_space, DecodedColorSpace::Rgb);
}

#[test]
fn only_the_four_color_space_combinations_of_the_table_are_valid() {
    let ss = r#""subsampling": [[1, 1], [1, 1], [1, 1]]"#;
    accept(
        r#"{"quality": 90, "encoded_color_space": "grayscale", "decoded_color_space": "grayscale"}"#,
    );
    accept(&format!(
        r#"{{"quality": 90, "encoded_color_space": "ycbcr", "decoded_color_space": "rgb", {ss}}}"#
    ));
    accept(r#"{"quality": 90, "encoded_color_space": "rgb", "decoded_color_space": "rgb"}"#);
    accept(&format!(
        r#"{{"quality": 90, "encoded_color_space": "ycbcr", "decoded_color_space": "ycbcr", {ss}}}"#
    ));
    for (decoded, encoded) in [
        ("grayscale", "rgb"),
        ("grayscale", "ycbcr"),
        ("rgb", "grayscale"),
        ("ycbcr", "grayscale"),
        ("ycbcr", "rgb"),
    ] {
        let sub = if encoded == "ycbcr" {
            format!(", {ss}")
        } else {
            String::new()
        };
        let json = format!(
            r#"{{"quality": 90, "encoded_color_space": "{encoded}", "decoded_color_space": "{decoded}"{sub}}}"#
        );
        reject(&json, &["cannot be combined", decoded, encoded]);
    }
    reject(
        r#"{"quality": 90, "encoded_color_space": "rgb", "decoded_color_space": "hsv"}"#,
        &["decoded_color_space must be"],
    );
}

#[test]
fn subsampling_is_required_for_ycbcr() {
    reject(
        r#"{"quality": 90, "encoded_color_space": "ycbcr"}"#,
        &["subsampling is required", "ycbcr"],
    );
}

#[test]
fn subsampling_has_one_pair_per_component() {
    reject(
        r#"{"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[2, 2], [1, 1]]}"#,
        &["one [horizontal, vertical] pair per component", "3"],
    );
    reject(
        r#"{"quality": 90, "encoded_color_space": "grayscale", "subsampling": [[1, 1], [1, 1], [1, 1]]}"#,
        &["one [horizontal, vertical] pair per component", "1"],
    );
    reject(
        r#"{"quality": 90, "encoded_color_space": "ycbcr", "subsampling": "4:2:0"}"#,
        &["subsampling must be an array"],
    );
    reject(
        r#"{"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[2, 2, 1], [1, 1], [1, 1]]}"#,
        &["subsampling[0] must be a [horizontal, vertical] pair"],
    );
}

#[test]
fn sampling_factors_are_integers_from_1_to_4() {
    for bad in ["0", "5", "1.5", "\"2\""] {
        let json = format!(
            r#"{{"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[2, {bad}], [1, 1], [1, 1]]}}"#
        );
        reject(
            &json,
            &["subsampling[0][1] must be an integer sampling factor from 1 to 4"],
        );
    }
}

#[test]
fn ycbcr_chroma_factors_must_be_1x1() {
    reject(
        r#"{"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[2, 2], [2, 2], [1, 1]]}"#,
        &["subsampling[1] must be [1, 1]"],
    );
    reject(
        r#"{"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[2, 2], [1, 1], [1, 2]]}"#,
        &["subsampling[2] must be [1, 1]"],
    );
}

#[test]
fn rgb_and_grayscale_subsampling_must_equal_the_default() {
    accept(
        r#"{"quality": 90, "encoded_color_space": "rgb", "subsampling": [[1, 1], [1, 1], [1, 1]]}"#,
    );
    accept(r#"{"quality": 90, "encoded_color_space": "grayscale", "subsampling": [[1, 1]]}"#);
    reject(
        r#"{"quality": 90, "encoded_color_space": "rgb", "subsampling": [[2, 2], [1, 1], [1, 1]]}"#,
        &["must be omitted or equal to its default", "rgb"],
    );
    reject(
        r#"{"quality": 90, "encoded_color_space": "grayscale", "subsampling": [[2, 1]]}"#,
        &["must be omitted or equal to its default", "[[1, 1]]"],
    );
}

#[test]
fn the_four_named_schemes_are_supported() {
    for (name, h, v) in [
        ("4:4:4", 1, 1),
        ("4:2:2", 2, 1),
        ("4:4:0", 1, 2),
        ("4:2:0", 2, 2),
    ] {
        let c = accept(&format!(
            r#"{{"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[{h}, {v}], [1, 1], [1, 1]]}}"#
        ));
        assert_eq!(
            c.luma_sampling(),
            SamplingFactor {
                horizontal: h,
                vertical: v
            },
            "{name}"
        );
    }
}

#[test]
fn every_allowed_factor_is_supported_or_rejected_by_name() {
    for h in 1..=4u8 {
        for v in 1..=4u8 {
            let json = format!(
                r#"{{"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[{h}, {v}], [1, 1], [1, 1]]}}"#
            );
            let result = JpegConfig::parse(&config_value(&json));
            let supported = BASELINE_SCHEMES;
            if !supported.contains(&(h, v)) {
                let message = result.expect_err(&json).to_string();
                if h * v + 2 > 10 {
                    assert!(
                        message.contains("ITU-T T.81 allows at most 10"),
                        "{message}"
                    );
                } else {
                    assert!(
                        message.contains("not supported by this implementation"),
                        "{message}"
                    );
                }
            } else {
                result.unwrap_or_else(|e| panic!("{json}: {e}"));
            }
        }
    }
}

#[test]
fn unknown_and_duplicate_members_are_rejected() {
    reject(
        r#"{"quality": 90, "encoded_color_space": "grayscale", "colorspace": "gray"}"#,
        &["unknown member \"colorspace\""],
    );
    reject(
        r#"{"quality": 90, "encoded_color_space": "grayscale", "quality": 80}"#,
        &["\"quality\" appears more than once"],
    );
    reject(r#"[90, "grayscale"]"#, &["must be an object"]);
    reject("null", &["must be an object"]);
}

#[test]
fn normalised_form_fills_defaults_and_omits_redundant_subsampling() {
    let c = accept(
        r#"{"quality": 80, "encoded_color_space": "rgb", "subsampling": [[1, 1], [1, 1], [1, 1]]}"#,
    );
    assert_eq!(
        c.to_value(),
        config_value(
            r#"{"quality": 80, "encoded_color_space": "rgb", "decoded_color_space": "rgb"}"#
        )
    );
    let y = accept(
        r#"{"quality": 90, "encoded_color_space": "ycbcr", "decoded_color_space": "ycbcr", "subsampling": [[2, 1], [1, 1], [1, 1]]}"#,
    );
    assert_eq!(
        y.to_value(),
        config_value(
            r#"{"quality": 90, "encoded_color_space": "ycbcr", "decoded_color_space": "ycbcr", "subsampling": [[2, 1], [1, 1], [1, 1]]}"#
        )
    );
    // The normalised form parses to the same configuration.
    assert_eq!(JpegConfig::parse(&y.to_value()).unwrap(), y);
    assert_eq!(y.encoded_color_space, EncodedColorSpace::Ycbcr);
}

#[test]
fn spec_examples_parse() {
    for json in [
        r#"{"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[2, 2], [1, 1], [1, 1]]}"#,
        r#"{"quality": 90, "encoded_color_space": "grayscale"}"#,
        r#"{"quality": 95, "encoded_color_space": "ycbcr", "subsampling": [[1, 1], [1, 1], [1, 1]]}"#,
        r#"{"quality": 90, "encoded_color_space": "rgb"}"#,
        r#"{"quality": 90, "encoded_color_space": "ycbcr", "decoded_color_space": "ycbcr", "subsampling": [[2, 2], [1, 1], [1, 1]]}"#,
    ] {
        accept(json);
    }
}

/// Strings from the configuration are shown cut after 40 characters and escaped as JSON
/// does: before, a 1 MB value or member name made a 1 MB message, and control characters
/// (a terminal escape, a newline that fakes a log line) were copied into it as they were.
#[test]
fn strings_in_messages_are_cut_and_escaped() {
    let long = "x".repeat(1_000_000);
    let quoted_long = format!("\"{}…\"", "x".repeat(40));
    for json in [
        format!(r#"{{"quality": 90, "encoded_color_space": "{long}"}}"#),
        format!(
            r#"{{"quality": 90, "encoded_color_space": "grayscale", "decoded_color_space": "{long}"}}"#
        ),
        format!(r#"{{"quality": 90, "encoded_color_space": "grayscale", "{long}": 1}}"#),
        format!(
            r#"{{"quality": 90, "encoded_color_space": "grayscale", "{long}": 1, "{long}": 2}}"#
        ),
    ] {
        let message = JpegConfig::parse(&config_value(&json))
            .unwrap_err()
            .to_string();
        assert!(message.len() < 300, "{} bytes", message.len());
        assert!(message.contains(&quoted_long), "{message}");
    }
    reject(
        r#"{"quality": 90, "encoded_color_space": "grayscale", "a\u001b[31m\n\"\\": 1}"#,
        &[r#"unknown member "a\u001B[31m\u000A\"\\";"#],
    );
    reject(
        r#"{"quality": 90, "encoded_color_space": "rgb\u0000"}"#,
        &[r#"got "rgb\u0000""#],
    );
}
