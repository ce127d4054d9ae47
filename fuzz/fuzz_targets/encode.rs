//! encode: arbitrary shape, configuration, data and encode options (trellis quantisation,
//! restart intervals, quantisation tables). Must never panic; on success the
//! stream must decode back (same configuration and shape) to the right length, and
//! must be rejected whenever the data length does not fit the shape.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;

#[derive(Arbitrary, Debug)]
struct Input {
    config: u8,
    quality: u8,
    shape: Vec<u16>,
    channels_hint: u8,
    data: Vec<u8>,
    pad_or_cut: i8,
    /// bit 0: trellis quantisation; bit 1: no restart intervals; bits 4–7: the
    /// quantisation table (of `QuantTable::ALL`, modulo its length)
    options: u8,
}

fuzz_target!(|input: Input| {
    let config = common::config(input.config, input.quality);
    let mut shape: Vec<u64> = input.shape.iter().take(5).map(|&n| u64::from(n % 300)).collect();
    if shape.len() == 3 && input.channels_hint % 2 == 0 {
        shape[2] = config.components() as u64;
    }
    let needed = shape.iter().product::<u64>();
    if needed > 300 * 300 * 3 {
        return;
    }
    // Mostly the exact length (to reach the encoder), sometimes off by a little.
    let mut data = input.data.clone();
    let target = (needed as i64 + if input.pad_or_cut % 8 == 0 { i64::from(input.pad_or_cut / 8) } else { 0 }).max(0) as usize;
    let fill = data.first().copied().unwrap_or(0);
    data.resize(target, fill);
    let before = data.clone();
    let options = zarr_jpeg::EncodeOptions {
        trellis: input.options & 1 != 0,
        restart_intervals: input.options & 2 == 0,
        quant_table: zarr_jpeg::QuantTable::ALL[usize::from(input.options >> 4) % zarr_jpeg::QuantTable::ALL.len()].1,
    };
    match zarr_jpeg::encode_from_with_options(&config, &data.as_slice(), &shape, &options) {
        Ok(stream) => {
            assert_eq!(data.len() as u64, needed, "encode accepted data of the wrong length");
            let back = zarr_jpeg::decode(&config, &stream, &shape).expect("our own stream decodes");
            assert_eq!(back.len(), data.len());
        }
        Err(_) => {}
    }
    assert_eq!(data, before);
});
