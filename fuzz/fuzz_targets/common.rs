//! Shared by the fuzz targets: every valid configuration, picked by an index.
#![allow(dead_code)]

use zarr_jpeg::{ConfigValue, JpegConfig};

/// (encoded_color_space, decoded_color_space, subsampling) of every configuration this
/// implementation accepts.
pub const CONFIGS: [(&str, &str, Option<(u8, u8)>); 13] = [
    ("grayscale", "grayscale", None),
    ("rgb", "rgb", None),
    ("ycbcr", "rgb", Some((1, 1))),
    ("ycbcr", "rgb", Some((2, 1))),
    ("ycbcr", "rgb", Some((1, 2))),
    ("ycbcr", "rgb", Some((2, 2))),
    ("ycbcr", "rgb", Some((4, 1))),
    ("ycbcr", "ycbcr", Some((1, 1))),
    ("ycbcr", "ycbcr", Some((2, 1))),
    ("ycbcr", "ycbcr", Some((1, 2))),
    ("ycbcr", "ycbcr", Some((2, 2))),
    ("ycbcr", "ycbcr", Some((4, 1))),
    ("grayscale", "grayscale", Some((1, 1))),
];

/// The configuration at `index` (modulo the table); entries the implementation rejects
/// (the supported set may shrink) fall back to the first one.
pub fn config(index: u8, quality: u8) -> JpegConfig {
    try_config(usize::from(index) % CONFIGS.len(), quality).unwrap_or_else(|| try_config(0, quality).expect("grayscale is valid"))
}

fn try_config(index: usize, quality: u8) -> Option<JpegConfig> {
    let (encoded, decoded, sub) = CONFIGS[index];
    let quality = 1 + quality % 100;
    let mut members = vec![
        ("quality".to_string(), ConfigValue::Number(f64::from(quality))),
        ("encoded_color_space".to_string(), ConfigValue::String(encoded.into())),
        ("decoded_color_space".to_string(), ConfigValue::String(decoded.into())),
    ];
    if let Some((h, v)) = sub {
        let pair = |h: u8, v: u8| ConfigValue::Array(vec![ConfigValue::Number(h.into()), ConfigValue::Number(v.into())]);
        let list = if encoded == "grayscale" { vec![pair(1, 1)] } else { vec![pair(h, v), pair(1, 1), pair(1, 1)] };
        members.push(("subsampling".to_string(), ConfigValue::Array(list)));
    }
    JpegConfig::parse(&ConfigValue::Object(members)).ok()
}
