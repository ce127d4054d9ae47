//! The DICOM series reader on small instances written here element by element (explicit VR
//! little endian, native or encapsulated frames), and on hostile ones: lengths past the end,
//! claims of huge values, sequences nested without end, frame counts that disagree, each
//! refused by name, quickly, and without allocating what the file claims. The interop tests
//! against wsidicomizer, pydicom and OpenSlide are tests/python/test_convert_dicom.py.
#![cfg(all(not(target_arch = "wasm32"), feature = "converter"))]

use zarr_jpeg::convert::{Conversion, ConvertOptions, MemoryStore, Quiet, ReadAt};
use zarr_jpeg::ConfigValue;

const WSI: &str = "1.2.840.10008.5.1.4.1.1.77.1.6";
const EXPLICIT_LE: &str = "1.2.840.10008.1.2.1";
const JPEG_BASELINE: &str = "1.2.840.10008.1.2.4.50";

fn padded(value: &[u8], pad: u8) -> Vec<u8> {
    let mut v = value.to_vec();
    if v.len() % 2 == 1 {
        v.push(pad);
    }
    v
}

/// One explicit-VR little-endian element.
fn element(tag: u32, vr: &str, value: &[u8]) -> Vec<u8> {
    let mut out = ((tag >> 16) as u16).to_le_bytes().to_vec();
    out.extend_from_slice(&(tag as u16).to_le_bytes());
    out.extend_from_slice(vr.as_bytes());
    let value = padded(value, if vr == "UI" || vr == "OB" { 0 } else { b' ' });
    if ["OB", "OW", "OV", "SQ", "UN", "UT"].contains(&vr) {
        out.extend_from_slice(&[0, 0]);
        out.extend_from_slice(&(value.len() as u32).to_le_bytes());
    } else {
        out.extend_from_slice(&(value.len() as u16).to_le_bytes());
    }
    out.extend_from_slice(&value);
    out
}

fn text(tag: u32, vr: &str, value: &str) -> Vec<u8> {
    element(tag, vr, value.as_bytes())
}

fn us(tag: u32, value: u16) -> Vec<u8> {
    element(tag, "US", &value.to_le_bytes())
}

fn ul(tag: u32, value: u32) -> Vec<u8> {
    element(tag, "UL", &value.to_le_bytes())
}

/// A sequence of defined length holding one item of `item`.
fn sequence(tag: u32, item: &[u8]) -> Vec<u8> {
    let mut items = vec![0xFE, 0xFF, 0x00, 0xE0];
    items.extend_from_slice(&(item.len() as u32).to_le_bytes());
    items.extend_from_slice(item);
    element(tag, "SQ", &items)
}

/// The preamble, the file meta group and `body`.
fn file(transfer_syntax: &str, body: &[u8]) -> Vec<u8> {
    let mut meta = text(0x0002_0002, "UI", WSI);
    meta.extend(text(0x0002_0003, "UI", "1.2.3.4"));
    meta.extend(text(0x0002_0010, "UI", transfer_syntax));
    let mut out = vec![0u8; 128];
    out.extend_from_slice(b"DICM");
    out.extend(ul(0x0002_0000, meta.len() as u32));
    out.extend(meta);
    out.extend_from_slice(body);
    out
}

/// The data set of an 8-bit grayscale TILED_FULL volume: `columns` × `rows` in frames of
/// `frame` × `frame`, `frames` frames, followed by `pixel_data` (a whole element).
fn volume(columns: u32, rows: u32, frame: u16, frames: &str, pixel_data: &[u8]) -> Vec<u8> {
    volume_of(WSI, columns, rows, frame, frames, pixel_data)
}

fn volume_of(sop_class: &str, columns: u32, rows: u32, frame: u16, frames: &str, pixel_data: &[u8]) -> Vec<u8> {
    let mut body = text(0x0008_0008, "CS", "ORIGINAL\\PRIMARY\\VOLUME\\NONE");
    body.extend(text(0x0008_0016, "UI", sop_class));
    body.extend(text(0x0008_0018, "UI", "1.2.3.4"));
    body.extend(text(0x0020_000D, "UI", "1.2.3"));
    body.extend(text(0x0020_000E, "UI", "1.2.3.5"));
    body.extend(text(0x0020_9311, "CS", "TILED_FULL"));
    body.extend(us(0x0028_0002, 1));
    body.extend(text(0x0028_0004, "CS", "MONOCHROME2"));
    body.extend(text(0x0028_0008, "IS", frames));
    body.extend(us(0x0028_0010, frame));
    body.extend(us(0x0028_0011, frame));
    body.extend(us(0x0028_0100, 8));
    body.extend(us(0x0028_0101, 8));
    body.extend(us(0x0028_0102, 7));
    body.extend(us(0x0028_0103, 0));
    body.extend(ul(0x0048_0006, columns));
    body.extend(ul(0x0048_0007, rows));
    let spacing = sequence(0x0028_9110, &text(0x0028_0030, "DS", "0.0005\\0.0005"));
    body.extend(sequence(0x5200_9229, &spacing));
    body.extend_from_slice(pixel_data);
    body
}

/// Encapsulated Pixel Data: an empty basic offset table and one fragment per frame.
fn encapsulated(frames: &[&[u8]]) -> Vec<u8> {
    let mut out = vec![0xE0, 0x7F, 0x10, 0x00, b'O', b'B', 0, 0, 0xFF, 0xFF, 0xFF, 0xFF];
    out.extend_from_slice(&[0xFE, 0xFF, 0x00, 0xE0, 0, 0, 0, 0]);
    for f in frames {
        let f = padded(f, 0);
        out.extend_from_slice(&[0xFE, 0xFF, 0x00, 0xE0]);
        out.extend_from_slice(&(f.len() as u32).to_le_bytes());
        out.extend_from_slice(&f);
    }
    out.extend_from_slice(&[0xFE, 0xFF, 0xDD, 0xE0, 0, 0, 0, 0]);
    out
}

fn convert(files: &[(&str, &[u8])], options: &str) -> Result<(zarr_jpeg::convert::Summary, MemoryStore), String> {
    let value: serde_json::Value = serde_json::from_str(options).unwrap();
    let options = ConvertOptions::parse(&json(&value)).map_err(|e| e.message().to_string())?;
    let owned: Vec<(String, Vec<u8>)> = files.iter().map(|(n, b)| (n.to_string(), b.to_vec())).collect();
    let inputs: Vec<(String, &dyn ReadAt)> = owned.iter().map(|(n, b)| (n.clone(), b as &dyn ReadAt)).collect();
    let conversion = Conversion::open_folder(inputs, "slide", &options, None).map_err(|e| e.message().to_string())?;
    let mut store = MemoryStore::default();
    let summary = conversion.run(&mut store, &mut Quiet, "out.zarr").map_err(|e| e.message().to_string())?;
    Ok((summary, store))
}

fn json(v: &serde_json::Value) -> ConfigValue {
    match v {
        serde_json::Value::Null => ConfigValue::Null,
        serde_json::Value::Bool(b) => ConfigValue::Bool(*b),
        serde_json::Value::Number(n) => ConfigValue::Number(n.as_f64().unwrap()),
        serde_json::Value::String(s) => ConfigValue::String(s.clone()),
        serde_json::Value::Array(a) => ConfigValue::Array(a.iter().map(json).collect()),
        serde_json::Value::Object(o) => ConfigValue::Object(o.iter().map(|(k, v)| (k.clone(), json(v))).collect()),
    }
}

fn refused(files: &[(&str, &[u8])]) -> String {
    match convert(files, "{}") {
        Ok(_) => panic!("converted; expected a refusal"),
        Err(message) => message,
    }
}

fn native(samples: usize) -> Vec<u8> {
    let data: Vec<u8> = (0..samples).map(|i| (i * 7 % 251) as u8).collect();
    element(0x7FE0_0010, "OB", &data)
}

/// A 16 × 16 grayscale JPEG from the crate's own encoder (its bytes are what is checked:
/// they must reach the store unchanged).
fn jpeg_frame(seed: u8) -> Vec<u8> {
    let config = zarr_jpeg::JpegConfig::parse(&json(&serde_json::json!({"quality": 90, "encoded_color_space": "grayscale"}))).unwrap();
    let samples: Vec<u8> = (0..256).map(|i| (i as u8).wrapping_mul(seed)).collect();
    zarr_jpeg::encode(&config, &samples, &[16, 16]).unwrap()
}

#[test]
fn a_native_tiled_full_volume_converts_with_its_pixel_spacing() {
    let dcm = file(EXPLICIT_LE, &volume(32, 16, 16, "2", &native(2 * 256)));
    let (summary, store) = convert(&[("a.dcm", &dcm)], "{}").unwrap();
    assert_eq!(summary.input_shape, vec![16, 32]);
    let group: serde_json::Value = serde_json::from_slice(&store.values["zarr.json"]).unwrap();
    let multiscale = &group["attributes"]["ome"]["multiscales"][0];
    assert_eq!(multiscale["datasets"][0]["coordinateTransformations"][0]["scale"], serde_json::json!([0.5, 0.5]));
    assert_eq!(multiscale["axes"][0]["unit"], "micrometer");
}

#[test]
fn jpeg_frames_are_the_chunks_byte_for_byte_and_other_files_are_skipped() {
    let (a, b) = (jpeg_frame(3), jpeg_frame(5));
    let dcm = file(JPEG_BASELINE, &volume(32, 16, 16, "2", &encapsulated(&[&a, &b])));
    let mut label = dcm.clone();
    let at = label.windows(6).position(|w| w == b"VOLUME").unwrap();
    label[at..at + 6].copy_from_slice(b"LABEL ");
    let (summary, store) = convert(&[("a.dcm", &dcm), ("label.dcm", &label), ("notes.txt", b"not dicom")], "{}").unwrap();
    assert_eq!(store.values.get("0/c/0/0").map(Vec::as_slice), Some(&a[..]), "frame 0 is chunk (0, 0)");
    assert_eq!(store.values.get("0/c/0/1").map(Vec::as_slice), Some(&b[..]), "frame 1 is chunk (0, 1)");
    assert_eq!(summary.tiles.as_ref().map(|t| t.copied), Some(2));
}

#[test]
fn a_frame_count_that_disagrees_with_the_matrix_is_refused() {
    let dcm = file(EXPLICIT_LE, &volume(32, 16, 16, "3", &native(3 * 256)));
    let m = refused(&[("a.dcm", &dcm)]);
    assert!(m.contains("Number of Frames 3 disagrees with the matrix size"), "{m}");
    let huge = file(EXPLICIT_LE, &volume(32, 16, 16, "99999999999999", &native(2 * 256)));
    let m = refused(&[("a.dcm", &huge)]);
    assert!(m.contains("Number of Frames"), "{m}");
}

#[test]
fn a_matrix_of_too_many_frames_is_refused_before_its_index_is_allocated() {
    let dcm = file(EXPLICIT_LE, &volume(u32::MAX, u32::MAX >> 9, 1, "1", &native(1)));
    let m = refused(&[("a.dcm", &dcm)]);
    assert!(m.contains("larger than this converter accepts") || m.contains("more than this converter accepts"), "{m}");
}

#[test]
fn native_pixel_data_shorter_than_its_frames_is_refused() {
    let dcm = file(EXPLICIT_LE, &volume(32, 16, 16, "2", &native(300)));
    let m = refused(&[("a.dcm", &dcm)]);
    assert!(m.contains("a.dcm"), "names the file: {m}");
}

#[test]
fn a_length_past_the_end_is_refused_without_reading_it() {
    let mut body = volume(32, 16, 16, "2", &[]);
    // an unwanted element claiming 4 GiB, then nothing
    body.extend_from_slice(&[0x09, 0x00, 0x10, 0x00, b'O', b'B', 0, 0, 0xF0, 0xFF, 0xFF, 0xFF]);
    let m = refused(&[("a.dcm", &file(EXPLICIT_LE, &body))]);
    assert!(m.contains("past the end"), "{m}");
}

#[test]
fn sequences_nested_without_end_are_refused() {
    // undefined-length sequences, each holding an undefined-length item holding the next
    let mut nested = Vec::new();
    for _ in 0..10_000 {
        nested.extend_from_slice(&[0x09, 0x00, 0x10, 0x10, b'S', b'Q', 0, 0, 0xFF, 0xFF, 0xFF, 0xFF]);
        nested.extend_from_slice(&[0xFE, 0xFF, 0x00, 0xE0, 0xFF, 0xFF, 0xFF, 0xFF]);
    }
    let mut body = text(0x0008_0008, "CS", "ORIGINAL\\PRIMARY\\VOLUME\\NONE");
    body.extend(nested);
    let m = refused(&[("a.dcm", &file(EXPLICIT_LE, &body))]);
    assert!(m.contains("nest") || m.contains("deep"), "{m}");
}

#[test]
fn every_truncation_of_an_instance_is_refused_by_name_not_a_panic() {
    let (a, b) = (jpeg_frame(3), jpeg_frame(5));
    let dcm = file(JPEG_BASELINE, &volume(32, 16, 16, "2", &encapsulated(&[&a, &b])));
    for end in (0..dcm.len()).step_by(3) {
        if let Err(m) = convert(&[("a.dcm", &dcm[..end])], "{}") {
            assert!(!m.is_empty());
        }
    }
}

#[test]
fn a_file_that_is_not_a_whole_slide_image_is_refused_by_name() {
    let ct = file(EXPLICIT_LE, &volume_of("1.2.840.10008.5.1.4.1.1.2", 32, 16, 16, "2", &native(512)));
    let m = refused(&[("ct.dcm", &ct)]);
    assert!(m.contains("is not a whole-slide image"), "{m}");
    let m = refused(&[("notes.txt", b"hello")]);
    assert!(m.contains("is a directory with no DICOM file in it"), "{m}");
}

#[test]
fn an_endless_run_of_fragments_is_refused_before_the_index_grows_with_it() {
    let mut pixel_data = vec![0xE0, 0x7F, 0x10, 0x00, b'O', b'B', 0, 0, 0xFF, 0xFF, 0xFF, 0xFF];
    pixel_data.extend_from_slice(&[0xFE, 0xFF, 0x00, 0xE0, 0, 0, 0, 0]);
    for _ in 0..(1 << 20) + 4 {
        pixel_data.extend_from_slice(&[0xFE, 0xFF, 0x00, 0xE0, 0, 0, 0, 0]);
    }
    pixel_data.extend_from_slice(&[0xFE, 0xFF, 0xDD, 0xE0, 0, 0, 0, 0]);
    let dcm = file(JPEG_BASELINE, &volume(32, 16, 16, "2", &pixel_data));
    let m = refused(&[("a.dcm", &dcm)]);
    assert!(m.contains("fragments for 2 frame(s)"), "{m}");
}

#[test]
fn a_compressed_frame_too_large_to_decode_is_refused_before_it_is_read() {
    // RLE frames of 65535 × 65535: a few bytes each, billions of samples decoded
    let rle = file("1.2.840.10008.1.2.5", &volume(65535, 65535, 65535, "1", &encapsulated(&[&[0u8; 64]])));
    let m = refused(&[("a.dcm", &rle)]);
    assert!(m.contains("larger than this converter accepts"), "{m}");
}
