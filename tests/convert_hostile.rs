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
        (b"not an image at all".to_vec(), "neither a PNG, a JPEG nor a TIFF"),
    ];
    for (bytes, message) in cases {
        let (_, text, store) = refused(&bytes);
        assert!(text.contains(message), "{text:?} should say {message:?}");
        assert!(store.values.keys().all(|k| k.ends_with("zarr.json")));
    }
}
