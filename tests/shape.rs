//! The spec's "Supported chunk shapes" table and the data-length rule.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::config;
use zarr_jpeg::{ChunkLayout, ErrorKind};

fn rejects(shape: &[u64], expected: &str) {
    let err = ChunkLayout::from_shape(shape).expect_err(&format!("{shape:?}"));
    assert_eq!(err.kind(), ErrorKind::InvalidShape);
    assert!(err.to_string().contains(expected), "{shape:?}: {err}");
}

#[test]
fn two_d_and_h_w_1_are_one_component() {
    assert_eq!(
        ChunkLayout::from_shape(&[4, 5]).unwrap(),
        ChunkLayout {
            height: 4,
            width: 5,
            components: 1
        }
    );
    assert_eq!(
        ChunkLayout::from_shape(&[4, 5, 1]).unwrap(),
        ChunkLayout {
            height: 4,
            width: 5,
            components: 1
        }
    );
}

#[test]
fn h_w_3_is_three_components() {
    assert_eq!(
        ChunkLayout::from_shape(&[4, 5, 3]).unwrap(),
        ChunkLayout {
            height: 4,
            width: 5,
            components: 3
        }
    );
}

#[test]
fn one_d_is_rejected_with_reshape_advice() {
    rejects(&[100], "1-D");
    rejects(&[100], "reshape");
    rejects(&[], "empty");
}

#[test]
fn two_or_four_plus_channels_are_rejected() {
    rejects(&[4, 5, 2], "2 channels");
    rejects(&[4, 5, 4], "4 channels");
    rejects(&[4, 5, 16], "16 channels");
}

#[test]
fn four_d_and_higher_are_rejected() {
    rejects(&[2, 4, 5, 3], "4-D");
    rejects(&[1, 1, 4, 5, 3], "5-D");
}

#[test]
fn dimensions_are_1_to_65535() {
    rejects(&[0, 5], "height (axis 0) is 0");
    rejects(&[5, 0, 3], "width (axis 1) is 0");
    rejects(&[65536, 5], "65535");
    rejects(&[5, 70000], "65535");
    ChunkLayout::from_shape(&[65535, 1]).unwrap();
    ChunkLayout::from_shape(&[1, 65535, 3]).unwrap();
}

#[test]
fn component_count_must_match_the_configuration() {
    let gray = config(r#"{"quality": 90, "encoded_color_space": "grayscale"}"#);
    let rgb = config(r#"{"quality": 90, "encoded_color_space": "rgb"}"#);
    let err = ChunkLayout::for_config(&[8, 8, 3], &gray).unwrap_err();
    assert!(err.to_string().contains("\"grayscale\" stores 1"), "{err}");
    let err = ChunkLayout::for_config(&[8, 8], &rgb).unwrap_err();
    assert!(err.to_string().contains("must be (H, W, 3)"), "{err}");
    ChunkLayout::for_config(&[8, 8, 1], &gray).unwrap();
}

#[test]
fn data_length_must_be_the_product_of_the_shape() {
    let layout = ChunkLayout::from_shape(&[4, 5, 3]).unwrap();
    layout.check_data_len(60).unwrap();
    let err = layout.check_data_len(59).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidData);
    assert!(
        err.to_string().contains("59 bytes") && err.to_string().contains("60"),
        "{err}"
    );
    let gray = config(r#"{"quality": 90, "encoded_color_space": "grayscale"}"#);
    let err = zarr_jpeg::encode(&gray, &[0; 19], &[4, 5]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidData);
}
