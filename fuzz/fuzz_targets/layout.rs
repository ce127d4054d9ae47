//! layout: ChunkLayout::from_shape / for_config on arbitrary shapes. Must never panic;
//! an accepted layout matches the spec's shape table.
#![no_main]

use libfuzzer_sys::fuzz_target;
use zarr_jpeg::ChunkLayout;

#[path = "common.rs"]
mod common;

fuzz_target!(|input: (u8, Vec<u64>)| {
    let (index, shape) = input;
    if let Ok(layout) = ChunkLayout::from_shape(&shape) {
        assert!(shape.len() == 2 || shape.len() == 3);
        assert_eq!(u64::from(layout.height), shape[0]);
        assert_eq!(u64::from(layout.width), shape[1]);
        assert!(shape[0] >= 1 && shape[0] <= 65535 && shape[1] >= 1 && shape[1] <= 65535);
        let c = if shape.len() == 3 { shape[2] } else { 1 };
        assert!(c == 1 || c == 3);
        assert_eq!(u64::from(layout.components), c);
        assert_eq!(layout.sample_count() as u64, shape.iter().product::<u64>());
        assert!(layout.check_data_len(layout.sample_count()).is_ok());
        assert!(layout.check_data_len(layout.sample_count() + 1).is_err());
    } else {
        let _ = shape.iter().map(|&n| n).collect::<Vec<_>>();
    }
    let config = common::config(index, 50);
    if let Ok(layout) = ChunkLayout::for_config(&shape, &config) {
        assert_eq!(usize::from(layout.components), config.components());
    }
});
