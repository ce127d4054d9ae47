//! dicom: arbitrary bytes as a folder of one or two DICOM files, read as a whole-slide series
//! and converted into a store in memory. Must never panic: every series is converted or
//! refused with a named error. The element reader, the frame index (basic and extended
//! offset tables, fragment scan), the series grouping and TILED_SPARSE placement all run.
//! Input layout: [selector, length of the first file (2 bytes, big-endian), first file,
//! second file]. Selector bit 0: a second file; bit 1: ask for the identifiers. Seeds
//! (fuzz/seeds/dicom): wsidicomizer's TILED_FULL instance and pydicom's sparse variants.
#![no_main]

use libfuzzer_sys::fuzz_target;
use zarr_jpeg::convert::{Conversion, ConvertOptions, MemoryStore, Quiet, ReadAt};
use zarr_jpeg::ConfigValue;

fuzz_target!(|data: &[u8]| {
    let [selector, a, b, rest @ ..] = data else { return };
    let first_len = (usize::from(*a) << 8 | usize::from(*b)).min(rest.len());
    let (first, second) = rest.split_at(first_len);
    let (first, second) = (first.to_vec(), second.to_vec());
    let mut files: Vec<(String, &dyn ReadAt)> = vec![("a.dcm".to_string(), &first)];
    if selector & 1 != 0 {
        files.push(("b.dcm".to_string(), &second));
    }
    let members = vec![("dicomIdentifiers".to_string(), ConfigValue::Bool(selector & 2 != 0))];
    let Ok(options) = ConvertOptions::parse(&ConfigValue::Object(members)) else { return };
    let Ok(conversion) = Conversion::open_folder(files, "fuzz", &options, None) else { return };
    let _ = conversion.run(&mut MemoryStore::default(), &mut Quiet, "fuzz.zarr");
});
