//! The converter on hostile and broken input files: every one is refused with an error that
//! names the problem, quickly and without allocating what the header claims, and no chunk is
//! written for an image that could not be read to its end.
#![cfg(all(not(target_arch = "wasm32"), feature = "converter"))]

use zarr_jpeg::convert::{Conversion, ConvertErrorKind, ConvertOptions, MemoryStore, Quiet};
use zarr_jpeg::ConfigValue;

fn chunk(kind: &[u8], data: &[u8]) -> Vec<u8> {
    let mut body = kind.to_vec();
    body.extend_from_slice(data);
    let mut out = (data.len() as u32).to_be_bytes().to_vec();
    out.extend_from_slice(&body);
    out.extend_from_slice(&crc32(&body).to_be_bytes());
    out
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 { 0xedb8_8320 ^ (crc >> 1) } else { crc >> 1 };
        }
    }
    !crc
}

/// A PNG of the given IHDR fields whose IDAT holds `rows` stored (zlib level 0) bytes.
fn png(width: u32, height: u32, depth: u8, colour: u8, interlace: u8, idat: &[u8]) -> Vec<u8> {
    let mut ihdr = width.to_be_bytes().to_vec();
    ihdr.extend_from_slice(&height.to_be_bytes());
    ihdr.extend_from_slice(&[depth, colour, 0, 0, interlace]);
    let mut out = vec![0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a];
    out.extend(chunk(b"IHDR", &ihdr));
    out.extend(chunk(b"IDAT", idat));
    out.extend(chunk(b"IEND", &[]));
    out
}

/// zlib's stored blocks of `data` (no compressor needed).
fn zlib_stored(data: &[u8]) -> Vec<u8> {
    let mut out = vec![0x78, 0x01];
    let blocks: Vec<&[u8]> = if data.is_empty() { vec![&[][..]] } else { data.chunks(65535).collect() };
    for (i, block) in blocks.iter().enumerate() {
        out.push(u8::from(i + 1 == blocks.len()));
        let n = block.len() as u16;
        out.extend_from_slice(&n.to_le_bytes());
        out.extend_from_slice(&(!n).to_le_bytes());
        out.extend_from_slice(block);
    }
    let (mut a, mut b) = (1u32, 0u32);
    for &x in data {
        a = (a + u32::from(x)) % 65521;
        b = (b + a) % 65521;
    }
    out.extend_from_slice(&((b << 16) | a).to_be_bytes());
    out
}

fn refused(bytes: &[u8]) -> (ConvertErrorKind, String, MemoryStore) {
    let options = ConvertOptions::parse(&ConfigValue::Object(vec![("chunk".into(), ConfigValue::Number(16.0))])).unwrap();
    let input = bytes.to_vec();
    let mut store = MemoryStore::default();
    let error = match Conversion::open(&input, "bad.png", &options) {
        Err(e) => e,
        Ok(conversion) => conversion.run(&mut store, &mut Quiet, "out.zarr").expect_err("refused"),
    };
    (error.kind(), error.message().to_string(), store)
}

#[test]
fn a_good_png_converts() {
    let rows: Vec<u8> = (0..20).flat_map(|y| std::iter::once(0).chain((0..20).map(move |x| (x * 12 + y) as u8))).collect();
    let options = ConvertOptions::parse(&ConfigValue::Object(vec![("chunk".into(), ConfigValue::Number(16.0))])).unwrap();
    let input = png(20, 20, 8, 0, 0, &zlib_stored(&rows));
    let mut store = MemoryStore::default();
    let summary = Conversion::open(&input, "good.png", &options).unwrap().run(&mut store, &mut Quiet, "out.zarr").unwrap();
    assert_eq!(summary.levels.len(), 2);
    assert!(store.values.contains_key("0/c/1/1") && store.values.contains_key("1/c/0/0"));
    assert_eq!(summary.bytes_written, store.values.values().map(|v| v.len() as u64).sum::<u64>());
}

#[test]
fn an_image_too_wide_for_bands_of_rows_is_refused_before_reading() {
    // 30 million pixels wide: a row fits the PNG decoder's bound, five bands of 16 rows do not fit 2 GiB
    let (kind, text, store) = refused(&png(30_000_000, 64, 8, 0, 0, &zlib_stored(&[0, 1, 2, 3])));
    assert_eq!(kind, ConvertErrorKind::InvalidInput, "{text}");
    assert!(text.contains("an image 30000000 pixels wide is converted a band of rows at a time"), "{text}");
    assert!(text.contains("more than this converter holds (2048 MiB); a smaller chunk holds less"), "{text}");
    assert!(store.values.is_empty());
}

#[test]
fn hostile_png_headers_are_refused_by_name() {
    let one_row = zlib_stored(&[0, 1, 2, 3]);
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (png(0, 12, 8, 2, 0, &one_row), "the image is 0 × 12 pixels (width × height); it needs at least 1 × 1"),
        (png(4, 4, 8, 5, 0, &one_row), "invalid PNG colour type 5"),
        (png(4, 4, 8, 3, 0, &one_row), "a palette PNG without a PLTE chunk"),
        (png(100_000_000, 1, 8, 2, 0, &one_row), "memory bound (64 MiB) is exceeded"),
        (png(u32::MAX >> 1, u32::MAX >> 1, 8, 2, 0, &one_row), "memory bound"),
        (png(1, 100_000_000, 8, 0, 0, &one_row), "of 100000000"),
        (png(60_000, 60_000, 8, 2, 1, &one_row), "bad.png"),
        (png(3, 3, 16, 0, 0, &one_row), "16-bit grayscale PNG"),
        (png(3, 3, 8, 0, 0, &one_row)[..45].to_vec(), "truncated PNG: chunk IDAT at byte 33 claims"),
        (png(3, 3, 8, 0, 0, &one_row)[..38].to_vec(), "truncated PNG: a chunk at byte 33 runs past the end of the file (38 bytes)"),
        (png(3, 3, 8, 0, 0, &one_row)[..20].to_vec(), "truncated PNG (no IHDR chunk)"),
    ];
    for (bytes, message) in cases {
        let (kind, text, store) = refused(&bytes);
        assert_eq!(kind, ConvertErrorKind::InvalidInput, "{text}");
        assert!(text.contains(message), "{text:?} should say {message:?}");
        assert!(store.values.keys().all(|k| k.ends_with("zarr.json")), "no chunk written: {:?}", store.values.keys());
    }
    // a chunk length of 2³²−1 right after IHDR, and an IEND before any IDAT
    let mut huge = png(3, 3, 8, 0, 0, &one_row)[..33].to_vec();
    huge.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, b't', b'E', b'X', b't', 0, 0, 0, 0]);
    assert!(refused(&huge).1.contains("chunk tEXt at byte 33 claims 4294967295 bytes past the end of the file"));
    let mut no_data = png(3, 3, 8, 0, 0, &one_row)[..33].to_vec();
    no_data.extend(chunk(b"IEND", &[]));
    assert!(refused(&no_data).1.contains("the PNG has no image data (no IDAT chunk)"));
}

#[test]
fn hostile_jpeg_headers_are_refused_by_name() {
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (vec![0xff, 0xd8, 0xff, 0xc0, 0, 20, 8, 0, 8, 0, 8, 4, 1, 0x11, 0, 2, 0x11, 0, 3, 0x11, 0, 4, 0x11, 0, 0xff, 0xd9], "4 colour components"),
        (vec![0xff, 0xd8, 0xff, 0xc1, 0, 11, 12, 0, 8, 0, 8, 1, 1, 0x11, 0, 0xff, 0xd9], "12-bit"),
        (vec![0xff, 0xd8, 0xff, 0xc0, 0, 11, 8, 0xff, 0xff, 0xff, 0xff, 1, 1, 0x11, 0, 0xff, 0xd9], "bad.png"),
        (vec![0xff, 0xd8, 0xff], "bad.png"),
        (b"not an image at all".to_vec(), "is not a PNG, JPEG, TIFF or DICOM file"),
    ];
    for (bytes, message) in cases {
        let (_, text, store) = refused(&bytes);
        assert!(text.contains(message), "{text:?} should say {message:?}");
        assert!(store.values.keys().all(|k| k.ends_with("zarr.json")));
    }
}

/// A little-endian TIFF whose one IFD (at byte 8) has `entries` (tag, type, count, value
/// field), followed by `tail`; `next` is the next-IFD offset.
fn tiff(entries: &[(u16, u16, u32, u32)], next: u32, tail: &[u8]) -> Vec<u8> {
    let mut out = b"II*\0".to_vec();
    out.extend_from_slice(&8u32.to_le_bytes());
    out.extend_from_slice(&(entries.len() as u16).to_le_bytes());
    for &(tag, kind, count, value) in entries {
        out.extend_from_slice(&tag.to_le_bytes());
        out.extend_from_slice(&kind.to_le_bytes());
        out.extend_from_slice(&count.to_le_bytes());
        out.extend_from_slice(&value.to_le_bytes());
    }
    out.extend_from_slice(&next.to_le_bytes());
    out.extend_from_slice(tail);
    out
}

#[test]
fn hostile_tiff_headers_are_refused_by_name() {
    // a 4 × 4 grey page of one uncompressed strip, its 16 bytes after the IFD
    let page = |width: u32, strip_offset: u32, strip_bytes: u32| {
        vec![(256, 4, 1, width), (257, 4, 1, 4), (258, 3, 1, 8), (262, 3, 1, 1), (273, 4, 1, strip_offset), (278, 4, 1, 4), (279, 4, 1, strip_bytes)]
    };
    let data = [7u8; 16];
    let data_at = 8 + 2 + 7 * 12 + 4;
    let good = tiff(&page(4, data_at, 16), 0, &data);
    let summary = {
        let options = ConvertOptions::parse(&ConfigValue::Null).unwrap();
        let mut store = MemoryStore::default();
        Conversion::open(&good, "good.tif", &options).unwrap().run(&mut store, &mut Quiet, "out.zarr").unwrap()
    };
    assert_eq!(summary.input_shape, vec![4, 4]);
    let mut claims = page(4, data_at, 16);
    claims[4] = (273, 4, u32::MAX, 200);
    let mut loop_ = tiff(&page(4, data_at, 16), 8, &data);
    let mut no_entries = tiff(&[], 0, &[]);
    no_entries.truncate(10);
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (tiff(&claims, 0, &data), "tag 273 claims 4294967295 values, more than this converter reads"),
        (tiff(&page(4, data_at, 16_000), 0, &data), "lies past the end of the file"),
        (tiff(&page(4, 1 << 30, 16), 0, &data), "at byte 1073741824 (16 bytes) lies past the end of the file"),
        (tiff(&page((1 << 31) + 1, data_at, 16), 0, &data), "strips of 2147483649 × 4 pixels are larger than this converter accepts"),
        (std::mem::take(&mut loop_), "its IFD offset 8 was already read (a loop of IFD offsets)"),
        (no_entries, "unreadable IFD at byte 8: it claims 0 entries"),
        (b"II\x2c\0\x08\0\0\0".to_vec(), "is not a PNG, JPEG, TIFF or DICOM file"),
        (b"II*\0\xff\xff\xff\x7f".to_vec(), "lies past the end of the file"),
    ];
    for (bytes, message) in cases {
        let started = std::time::Instant::now();
        let (kind, text, store) = refused(&bytes);
        assert!(started.elapsed().as_secs_f64() < 1.0, "{text}");
        assert!(matches!(kind, ConvertErrorKind::InvalidInput), "{text}");
        assert!(text.contains(message), "{text:?} should say {message:?}");
        assert!(store.values.keys().all(|k| k.ends_with("zarr.json")), "no chunk written: {:?}", store.values.keys());
    }
    // a JPEG-compressed page whose strip is not JPEG data
    let jpeg = tiff(&[(256, 4, 1, 4), (257, 4, 1, 4), (258, 3, 1, 8), (259, 3, 1, 7), (262, 3, 1, 1), (273, 4, 1, data_at), (278, 4, 1, 4), (279, 4, 1, 16)], 0, &data);
    let options = ConvertOptions::parse(&ConfigValue::Null).unwrap();
    let error = Conversion::open(&jpeg, "bad.tif", &options).err().expect("refused");
    assert!(error.message().starts_with("bad.tif: page 0 strip 0 (row 0, column 0): jpeg: "), "{}", error.message());
}
