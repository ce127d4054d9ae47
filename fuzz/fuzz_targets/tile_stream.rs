//! tile_stream: arbitrary tile bytes × arbitrary JPEGTables × every declared colour space.
//! Input layout: [declared, tables length hi, tables length lo, tables..., tile...].
//! Must never panic; a completed stream declared with a colour space reads as that one by
//! the decoder's marker rules, and its tail from the first scan on is the tile's.
#![no_main]

use libfuzzer_sys::fuzz_target;
use zarr_jpeg::{complete_tile_stream, StoredColorSpace};

fuzz_target!(|data: &[u8]| {
    if data.len() < 3 {
        return;
    }
    let declared = match data[0] % 4 {
        0 => None,
        1 => Some(StoredColorSpace::Grayscale),
        2 => Some(StoredColorSpace::Rgb),
        _ => Some(StoredColorSpace::Ycbcr),
    };
    let split = usize::from(u16::from_be_bytes([data[1], data[2]])).min(data.len() - 3);
    let (tables, tile) = data[3..].split_at(split);
    let tables = if tables.is_empty() { None } else { Some(tables) };
    if let (Ok(stream), Some(declared)) = (complete_tile_stream(tile, tables, declared), declared) {
        let header = zarr_jpeg::markers::read_header(&stream).expect("a completed stream has a header");
        if let Ok(stored) = zarr_jpeg::decode::stored_color_space(&header) {
            assert_eq!(stored, declared);
        }
    }
});
