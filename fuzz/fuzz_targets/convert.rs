//! convert: arbitrary bytes as the converter's input file (PNG, JPEG, TIFF or anything else), with
//! options picked by the first byte, written into a store in memory. Must never panic: every
//! input is converted or refused with a named error, and a refusal leaves the store's
//! chunks unwritten only in the caller's temporary store (here: memory).
//! Input layout: [options selector, file bytes...]. Seeds (fuzz/seeds/convert): small TIFFs
//! (JPEG tiles, LZW, Deflate, PackBits 16-bit, planar BigTIFF), PNGs and a JPEG from tifffile
//! and Pillow.
#![no_main]

use libfuzzer_sys::fuzz_target;
use zarr_jpeg::convert::{Conversion, ConvertOptions, MemoryStore, Quiet};
use zarr_jpeg::ConfigValue;

fuzz_target!(|data: &[u8]| {
    let Some((&selector, file)) = data.split_first() else { return };
    let mut members = Vec::new();
    // (without a chunk option a JPEG-tiled TIFF's tiles are copied: with one it is refused)
    if selector & 16 == 0 {
        members.push(("chunk".to_string(), ConfigValue::Number(if selector & 1 == 0 { 64.0 } else { 48.0 })));
    }
    if selector & 2 != 0 {
        members.push(("shard".to_string(), ConfigValue::Number(128.0 * f64::from(1 + (selector & 1)) * 1.5)));
    }
    if selector & 4 != 0 {
        members.push(("rescale".to_string(), ConfigValue::String("auto".into())));
    }
    if selector & 8 != 0 {
        members.push(("color".to_string(), ConfigValue::String("grayscale".into())));
    }
    let Ok(options) = ConvertOptions::parse(&ConfigValue::Object(members)) else { return };
    let input = file.to_vec();
    let Ok(conversion) = Conversion::open(&input, "fuzz", &options) else { return };
    // (a header that claims a large image, whose data then runs out, is refused while read)
    let _ = conversion.run(&mut MemoryStore::default(), &mut Quiet, "fuzz.zarr");
});
