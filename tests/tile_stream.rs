//! `complete_tile_stream`: TIFF-style abbreviated tiles (tables in a separate tables-only
//! stream, colour stated by the container, not by markers) made complete. Streams come
//! from libjpeg-turbo's `cjpeg`; libjpeg-turbo's `djpeg` is the reference decoder.
mod common;

use common::{cell, cjpeg, config, djpeg, ihc, max_abs_diff};
use zarr_jpeg::{complete_tile_stream, decode, ErrorKind, StoredColorSpace};

/// A stream's segments up to its first scan: (marker, whole segment bytes), then the rest
/// (SOS onwards).
fn split(stream: &[u8]) -> (Vec<(u8, Vec<u8>)>, Vec<u8>) {
    assert_eq!(&stream[..2], &[0xFF, 0xD8]);
    let mut pos = 2;
    let mut segments = Vec::new();
    loop {
        assert_eq!(stream[pos], 0xFF);
        let marker = stream[pos + 1];
        if marker == 0xDA {
            return (segments, stream[pos..].to_vec());
        }
        let len = usize::from(u16::from_be_bytes([stream[pos + 2], stream[pos + 3]]));
        segments.push((marker, stream[pos..pos + 2 + len].to_vec()));
        pos += 2 + len;
    }
}

fn join(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

/// What a TIFF writer with JPEGTables stores: the tables-only stream (SOI, DQT, DHT, EOI)
/// and the abbreviated tile (SOI, the other segments, the scan), as libtiff splits them.
fn abbreviate(stream: &[u8], keep: impl Fn(u8, &[u8]) -> bool) -> (Vec<u8>, Vec<u8>) {
    let (segments, scan) = split(stream);
    let mut tables = vec![0xFF, 0xD8];
    let mut tile = vec![0xFF, 0xD8];
    for (marker, bytes) in &segments {
        match marker {
            0xDB | 0xC4 => tables.extend_from_slice(bytes),
            _ if keep(*marker, bytes) => tile.extend_from_slice(bytes),
            _ => {}
        }
    }
    tables.extend_from_slice(&[0xFF, 0xD9]);
    tile.extend_from_slice(&scan);
    (tables, tile)
}

/// Component ids 'R','G','B' → 0, 1, 2 in the frame and scan headers (Aperio's tiles).
fn ids_to_012(stream: &mut [u8]) {
    for (from, to) in [(b'R', 0u8), (b'G', 1), (b'B', 2)] {
        let mut pos = 2;
        while pos + 4 < stream.len() {
            let marker = stream[pos + 1];
            let len = usize::from(u16::from_be_bytes([stream[pos + 2], stream[pos + 3]]));
            let body = pos + 4;
            if marker == 0xC0 {
                for c in 0..usize::from(stream[body + 5]) {
                    let at = body + 6 + 3 * c;
                    if stream[at] == from {
                        stream[at] = to;
                    }
                }
            } else if marker == 0xDA {
                for c in 0..usize::from(stream[body]) {
                    let at = body + 1 + 2 * c;
                    if stream[at] == from {
                        stream[at] = to;
                    }
                }
                break;
            }
            pos += 2 + len;
        }
    }
}

#[test]
fn spliced_tables_decode_as_the_complete_stream_does() {
    let image = ihc().tile(61, 47, 180, 212);
    for args in [
        &["-quality", "85"][..],
        &["-quality", "90", "-sample", "2x2"],
        &["-quality", "95", "-sample", "1x1", "-restart", "1"],
    ] {
        let original = cjpeg(&image, args);
        let (tables, tile) = abbreviate(&original, |_, _| true);
        let complete = complete_tile_stream(&tile, Some(&tables), None).unwrap();
        assert_eq!(
            djpeg(&complete).samples,
            djpeg(&original).samples,
            "cjpeg {args:?}"
        );
        // the scan is copied unchanged
        assert!(complete.ends_with(&split(&original).1));
    }
}

#[test]
fn an_aperio_tile_declared_rgb_decodes_as_rgb_by_the_marker_rules() {
    // RGB samples coded without colour transform (cjpeg -rgb), stored as Aperio does: ids
    // 0, 1, 2, no JFIF or Adobe marker, tables in JPEGTables.
    let image = ihc().tile(64, 64, 256, 128);
    let original = cjpeg(&image, &["-quality", "90", "-rgb"]);
    let (tables, mut tile) = abbreviate(&original, |marker, _| marker != 0xEE && marker != 0xE0);
    ids_to_012(&mut tile);
    let truth = djpeg(&original).samples;

    // By markers alone the tile reads as YCbCr: libjpeg-turbo returns other colours.
    let as_found = complete_tile_stream(&tile, Some(&tables), None).unwrap();
    assert!(max_abs_diff(&djpeg(&as_found).samples, &truth) > 40);

    let declared = complete_tile_stream(&tile, Some(&tables), Some(StoredColorSpace::Rgb)).unwrap();
    assert_eq!(djpeg(&declared).samples, truth, "libjpeg-turbo");
    let rgb = config(r#"{"quality": 90, "encoded_color_space": "rgb"}"#);
    let ours = decode(&rgb, &declared, &[64, 64, 3]).unwrap();
    assert!(
        max_abs_diff(&ours, &truth) <= 1,
        "ours against djpeg: {}",
        max_abs_diff(&ours, &truth)
    );
    assert!(
        declared.ends_with(&split(&tile).1),
        "entropy-coded data unchanged"
    );
}

#[test]
fn a_jfif_stream_declared_rgb_loses_its_jfif_marker() {
    // A JFIF marker would make the stream YCbCr whatever else it says.
    let image = ihc().tile(32, 32, 100, 100);
    let original = cjpeg(&image, &["-quality", "90", "-rgb"]);
    let (tables, tile) = abbreviate(&original, |marker, _| marker != 0xEE);
    let jfif: &[u8] = &[
        0xFF, 0xE0, 0, 16, b'J', b'F', b'I', b'F', 0, 1, 1, 0, 0, 1, 0, 1, 0, 0,
    ];
    let with_jfif = join(&[&tile[..2], jfif, &tile[2..]]);
    let declared =
        complete_tile_stream(&with_jfif, Some(&tables), Some(StoredColorSpace::Rgb)).unwrap();
    assert!(!declared.windows(5).any(|w| w == b"JFIF\0"));
    assert_eq!(djpeg(&declared).samples, djpeg(&original).samples);
}

#[test]
fn ycbcr_declared_over_an_adobe_transform_0_marker_becomes_transform_1() {
    let image = ihc().tile(32, 48, 10, 20);
    let ycc = cjpeg(&image, &["-quality", "90", "-sample", "1x1"]);
    // the same YCbCr data, mislabelled RGB by an Adobe transform-0 marker and no JFIF
    let (tables, tile) = abbreviate(&ycc, |marker, _| marker != 0xE0);
    let adobe0: &[u8] = &[
        0xFF, 0xEE, 0, 14, b'A', b'd', b'o', b'b', b'e', 0, 100, 0, 0, 0, 0, 0,
    ];
    let mislabelled = join(&[&tile[..2], adobe0, &tile[2..]]);
    let fixed =
        complete_tile_stream(&mislabelled, Some(&tables), Some(StoredColorSpace::Ycbcr)).unwrap();
    assert_eq!(djpeg(&fixed).samples, djpeg(&ycc).samples);
    // a stream whose markers already say YCbCr is left as it is
    let already =
        complete_tile_stream(&tile, Some(&tables), Some(StoredColorSpace::Ycbcr)).unwrap();
    assert_eq!(
        already,
        complete_tile_stream(&tile, Some(&tables), None).unwrap()
    );
}

#[test]
fn a_component_count_the_declared_colour_space_cannot_have_is_refused() {
    let gray = cjpeg(
        &cell().tile(16, 16, 0, 0),
        &["-quality", "90", "-grayscale"],
    );
    let e = complete_tile_stream(&gray, None, Some(StoredColorSpace::Rgb)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::StreamMismatch);
    assert!(
        e.message()
            .contains("declares the JPEG data RGB (3 components) but the tile's frame has 1"),
        "{}",
        e.message()
    );
    assert_eq!(
        complete_tile_stream(&gray, None, Some(StoredColorSpace::Grayscale)).unwrap(),
        gray
    );

    let colour = cjpeg(&ihc().tile(16, 16, 0, 0), &["-quality", "90"]);
    let e = complete_tile_stream(&colour, None, Some(StoredColorSpace::Grayscale)).unwrap_err();
    assert!(
        e.message()
            .contains("declares the JPEG data grayscale (1 component) but the tile's frame has 3"),
        "{}",
        e.message()
    );
}

#[test]
fn bad_tiles_and_tables_are_refused_by_name() {
    let original = cjpeg(&ihc().tile(16, 16, 0, 0), &["-quality", "90"]);
    let (tables, tile) = abbreviate(&original, |_, _| true);
    let cases: Vec<(Vec<u8>, Option<Vec<u8>>, &str)> = vec![
        (vec![], Some(tables.clone()), "the tile is empty"),
        (
            b"II*\0\x08\0\0\0".to_vec(),
            Some(tables.clone()),
            "does not start with the JPEG start-of-image marker",
        ),
        (
            tile.clone(),
            Some(tables[2..].to_vec()),
            "JPEGTables): they do not start with",
        ),
        (
            tile.clone(),
            Some(tables[..tables.len() - 2].to_vec()),
            "JPEGTables): the stream is truncated",
        ),
        (
            tile.clone(),
            Some(original.clone()),
            "is not a table definition",
        ),
        (
            tile.clone(),
            Some(vec![0xFF, 0xD8, 0xFF, 0xDB, 0xFF, 0xFF, 0xFF, 0xD9]),
            "claims 65535 bytes",
        ),
    ];
    for (tile, tables, expected) in cases {
        let e = complete_tile_stream(&tile, tables.as_deref(), None).unwrap_err();
        assert!(
            e.message().contains(expected),
            "expected {expected:?}, got {:?}",
            e.message()
        );
    }
    // libtiff writes an empty tables stream for complete tiles
    assert_eq!(
        complete_tile_stream(&original, Some(&[0xFF, 0xD8, 0xFF, 0xD9]), None).unwrap(),
        original
    );
}

#[test]
fn hostile_bytes_never_panic() {
    let original = cjpeg(&ihc().tile(16, 16, 0, 0), &["-quality", "90"]);
    let (tables, tile) = abbreviate(&original, |_, _| true);
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    for round in 0..3000 {
        let mut t = tile.clone();
        let mut q = tables.clone();
        for _ in 0..1 + round % 5 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let target = if seed & 1 == 0 { &mut t } else { &mut q };
            if target.is_empty() {
                continue;
            }
            let at = (seed >> 8) as usize % target.len();
            target[at] = (seed >> 40) as u8;
            if seed & 0x30 == 0 {
                target.truncate(at);
            }
        }
        for declared in [
            None,
            Some(StoredColorSpace::Rgb),
            Some(StoredColorSpace::Ycbcr),
            Some(StoredColorSpace::Grayscale),
        ] {
            let _ = complete_tile_stream(&t, Some(&q), declared);
        }
    }
}
