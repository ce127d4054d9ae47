//! decode: arbitrary bytes × every valid configuration × arbitrary shape.
//! Input layout: [config index, shape mode, h hi, h lo, w hi, w lo, stream...].
//! Shape mode picks whether the shape comes from the stream's own header (so most
//! inputs get past the size check and reach the decoder) or from the input bytes.
//! Must never panic; on success the output has exactly the chunk's length.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    if data.len() < 6 {
        return;
    }
    let config = common::config(data[0], 90);
    let mode = data[1];
    let stream = &data[6..];
    let (mut h, mut w) = (u64::from(u16::from_be_bytes([data[2], data[3]])), u64::from(u16::from_be_bytes([data[4], data[5]])));
    if mode % 4 != 0 {
        // Use the stream's own dimensions (capped so a fuzz run stays within memory).
        if let Ok(header) = zarr_jpeg::testing::read_header(stream) {
            h = u64::from(header.height);
            w = u64::from(header.width);
        }
    }
    if h * w > 4096 * 4096 {
        return;
    }
    let shape: Vec<u64> = match (config.components(), mode / 4 % 4) {
        (1, 0) => vec![h, w],
        (1, 1) => vec![h, w, 1],
        (3, _) if mode / 4 % 4 != 3 => vec![h, w, 3],
        (_, 2) => vec![h],
        _ => vec![h, w, u64::from(mode / 16)],
    };
    let expected = shape.iter().product::<u64>();
    if let Ok(out) = zarr_jpeg::decode(&config, stream, &shape) {
        assert_eq!(out.len() as u64, expected);
        // decode_into must agree with decode.
        let mut buf = vec![0u8; out.len()];
        zarr_jpeg::decode_into(&config, stream, &shape, &mut buf).expect("decode_into agrees with decode");
        assert!(buf == out);
    } else if expected <= 1 << 16 {
        let mut buf = vec![0u8; expected as usize];
        assert!(zarr_jpeg::decode_into(&config, stream, &shape, &mut buf).is_err());
    }
});
