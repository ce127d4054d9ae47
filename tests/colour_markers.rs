//! The decoder's colour-space rules (src/decode/colour.rs `stored_color_space`, src/markers.rs
//! `read_header`), on streams made by libjpeg-turbo's `cjpeg` whose JFIF / Adobe markers
//! and component ids are edited here, each compared with libjpeg-turbo's `djpeg` or with
//! the rule the code and the spec give where libjpeg-turbo and this codec differ:
//! - an Adobe APP14 marker decides first: transform 0 → RGB, 1 → YCbCr, 2 (YCCK) and
//!   unknown transforms are rejected (the spec: a decoder that cannot honour the stored
//!   transform MUST reject the chunk), and JFIF beside transform 0 is rejected (libjpeg
//!   lets JFIF win, zune-jpeg the Adobe marker: decoders disagree);
//! - else JFIF → YCbCr; else component ids 'R','G','B' → RGB; else YCbCr;
//! - as in libjpeg-turbo's `examine_app0` / `examine_app14`, a JFIF APP0 needs at least 14
//!   bytes of data and an Adobe APP14 at least 12, or the marker is ignored;
//! - decoding does not depend on the configuration's `quality`.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::*;
use zarr_jpeg::{ErrorKind, JpegConfig};

const H: usize = 40;
const W: usize = 56;

fn image() -> Image {
    ihc().tile(H, W, 8, 24)
}

fn rgb_config(quality: u32) -> JpegConfig {
    config(&format!(
        r#"{{"quality": {quality}, "encoded_color_space": "rgb"}}"#
    ))
}

fn shape() -> Vec<u64> {
    vec![H as u64, W as u64, 3]
}

/// The marker segments before the first scan (marker, payload without its length) and
/// the bytes from the first scan's marker on.
fn split(stream: &[u8]) -> (Vec<(u8, Vec<u8>)>, Vec<u8>) {
    let mut pos = 2;
    let mut segs = Vec::new();
    loop {
        assert_eq!(stream[pos], 0xFF);
        let marker = stream[pos + 1];
        if marker == 0xDA {
            return (segs, stream[pos..].to_vec());
        }
        let len = usize::from(u16::from_be_bytes([stream[pos + 2], stream[pos + 3]]));
        segs.push((marker, stream[pos + 4..pos + 2 + len].to_vec()));
        pos += 2 + len;
    }
}

fn join(segs: &[(u8, Vec<u8>)], rest: &[u8]) -> Vec<u8> {
    let mut out = vec![0xFF, 0xD8];
    for (marker, payload) in segs {
        out.extend([0xFF, *marker]);
        out.extend(u16::try_from(payload.len() + 2).unwrap().to_be_bytes());
        out.extend(payload);
    }
    out.extend(rest);
    out
}

/// `stream` with its JFIF and Adobe markers replaced by `markers` (placed first).
fn with_markers(stream: &[u8], markers: &[(u8, Vec<u8>)]) -> Vec<u8> {
    let (segs, rest) = split(stream);
    let mut out: Vec<(u8, Vec<u8>)> = markers.to_vec();
    out.extend(segs.into_iter().filter(|(m, p)| {
        let colour_marker =
            (*m == 0xE0 && p.starts_with(b"JFIF")) || (*m == 0xEE && p.starts_with(b"Adobe"));
        !colour_marker
    }));
    join(&out, &rest)
}

/// `stream` with the component ids of the frame header and scan header set to `ids`.
fn with_ids(stream: &[u8], ids: [u8; 3]) -> Vec<u8> {
    let (mut segs, mut rest) = split(stream);
    for (marker, payload) in &mut segs {
        if *marker == 0xC0 {
            for k in 0..3 {
                payload[6 + 3 * k] = ids[k];
            }
        }
    }
    // one interleaved scan: FF DA, length (2), count, then (selector, tables) pairs
    assert_eq!(rest[4], 3, "one interleaved scan");
    for k in 0..3 {
        rest[5 + 2 * k] = ids[k];
    }
    join(&segs, &rest)
}

fn jfif() -> (u8, Vec<u8>) {
    (0xE0, b"JFIF\0\x01\x01\0\0\x01\0\x01\0\0".to_vec())
}

fn adobe(transform: u8) -> (u8, Vec<u8>) {
    (
        0xEE,
        [b"Adobe\0\x64\0\0\0\0".as_slice(), &[transform]].concat(),
    )
}

/// cjpeg -rgb: Adobe transform 0, ids 'R','G','B', no JFIF.
fn cjpeg_rgb() -> Vec<u8> {
    cjpeg(&image(), &["-quality", "90", "-rgb"])
}

/// cjpeg's default: JFIF, ids 1, 2, 3, YCbCr (4:4:4, so RGB ids fit the same scan).
fn cjpeg_ycbcr() -> Vec<u8> {
    cjpeg(&image(), &["-quality", "90", "-sample", "1x1"])
}

/// Our samples for `stream` (decoded to RGB) against djpeg's, which follows the markers.
fn assert_decodes_as_djpeg(stream: &[u8], what: &str) {
    let ours = zarr_jpeg::decode(&rgb_config(90), stream, &shape())
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let theirs = djpeg(stream);
    assert_eq!(theirs.components, 3);
    let max = max_abs_diff(&ours, &theirs.samples);
    assert!(max <= 3, "{what}: |ours - djpeg| up to {max}");
}

/// The same stream with the inverse YCbCr transform applied or not differs by far more
/// than the decoders' rounding: the comparisons above tell the colour spaces apart.
fn assert_transform_matters(stream: &[u8]) {
    let raw = djpeg(stream).samples;
    let converted: Vec<u8> = raw
        .chunks(3)
        .flat_map(|p| {
            let (y, cb, cr) = (
                f64::from(p[0]),
                f64::from(p[1]) - 128.0,
                f64::from(p[2]) - 128.0,
            );
            [
                (y + 1.402 * cr).round().clamp(0.0, 255.0) as u8,
                (y - 0.344136 * cb - 0.714136 * cr)
                    .round()
                    .clamp(0.0, 255.0) as u8,
                (y + 1.772 * cb).round().clamp(0.0, 255.0) as u8,
            ]
        })
        .collect();
    assert!(max_abs_diff(&raw, &converted) > 30);
}

fn rejection(stream: &[u8]) -> zarr_jpeg::CodecError {
    match zarr_jpeg::decode(&rgb_config(90), stream, &shape()) {
        Ok(_) => panic!("decoded a stream that must be rejected"),
        Err(e) => e,
    }
}

#[test]
fn adobe_transform_0_is_rgb() {
    let stream = cjpeg_rgb();
    assert_transform_matters(&stream);
    assert_decodes_as_djpeg(&stream, "cjpeg -rgb");
    // the same with ids 1, 2, 3: the Adobe marker alone says RGB
    assert_decodes_as_djpeg(&with_ids(&stream, [1, 2, 3]), "Adobe 0, ids 1,2,3");
}

#[test]
fn adobe_transform_1_is_ycbcr() {
    // over ids 'R','G','B', which alone would mean RGB
    let stream = with_markers(&cjpeg_rgb(), &[adobe(1)]);
    assert_decodes_as_djpeg(&stream, "Adobe 1, ids R,G,B");
    let stream = with_markers(&cjpeg_ycbcr(), &[adobe(1)]);
    assert_decodes_as_djpeg(&stream, "Adobe 1, ids 1,2,3");
}

#[test]
fn adobe_transform_2_ycck_is_rejected() {
    let e = rejection(&with_markers(&cjpeg_ycbcr(), &[adobe(2)]));
    assert_eq!(e.kind(), ErrorKind::UnsupportedStream, "{e}");
    assert!(e.message().contains("transform 2 (YCCK)"), "{e}");
}

#[test]
fn unknown_adobe_transforms_are_rejected() {
    for t in [3u8, 7, 255] {
        let e = rejection(&with_markers(&cjpeg_ycbcr(), &[adobe(t)]));
        assert_eq!(e.kind(), ErrorKind::UnsupportedStream, "transform {t}: {e}");
        assert!(
            e.message()
                .contains(&format!("unknown colour transform {t}")),
            "{e}"
        );
    }
}

#[test]
fn jfif_beside_adobe_transform_0_is_rejected() {
    // libjpeg-turbo lets JFIF win (YCbCr), zune-jpeg the Adobe marker (RGB): the code
    // rejects the contradiction rather than pick one (src/decode/colour.rs stored_color_space).
    for stream in [
        with_markers(&cjpeg_ycbcr(), &[jfif(), adobe(0)]),
        with_markers(&cjpeg_rgb(), &[jfif(), adobe(0)]),
    ] {
        let e = rejection(&stream);
        assert_eq!(e.kind(), ErrorKind::UnsupportedStream, "{e}");
        assert!(e.message().contains("JFIF marker"), "{e}");
    }
    // JFIF beside transform 1 agrees: YCbCr
    assert_decodes_as_djpeg(
        &with_markers(&cjpeg_ycbcr(), &[jfif(), adobe(1)]),
        "JFIF + Adobe 1",
    );
}

#[test]
fn rgb_ids_without_markers_are_rgb() {
    let stream = with_markers(&cjpeg_rgb(), &[]);
    assert_transform_matters(&stream);
    assert_decodes_as_djpeg(&stream, "ids R,G,B, no JFIF, no Adobe");
}

#[test]
fn ids_1_2_3_without_markers_are_ycbcr() {
    assert_decodes_as_djpeg(&with_markers(&cjpeg_ycbcr(), &[]), "ids 1,2,3, no markers");
}

#[test]
fn jfif_beside_rgb_ids_is_ycbcr() {
    assert_decodes_as_djpeg(&with_markers(&cjpeg_rgb(), &[jfif()]), "JFIF, ids R,G,B");
}

#[test]
fn a_jfif_app0_shorter_than_14_bytes_is_ignored_as_libjpeg_turbo_does() {
    // jdmarker.c examine_app0: JFIF needs APP0_DATA_LEN = 14 bytes; a shorter one does
    // not count, so ids 'R','G','B' decide (RGB).
    for len in [5, 7, 13] {
        let short = (0xE0, jfif().1[..len].to_vec());
        let stream = with_markers(&cjpeg_rgb(), &[short]);
        let header = zarr_jpeg::testing::read_header(&stream).unwrap();
        assert!(!header.jfif, "{len}-byte JFIF APP0 counted as JFIF");
        assert_decodes_as_djpeg(&stream, &format!("{len}-byte JFIF APP0, ids R,G,B"));
    }
    // 14 bytes and more count (trailing thumbnail data allowed)
    for extra in [0usize, 3] {
        let mut long = jfif();
        long.1.extend(vec![0; extra]);
        let stream = with_markers(&cjpeg_rgb(), &[long]);
        assert!(zarr_jpeg::testing::read_header(&stream).unwrap().jfif);
        assert_decodes_as_djpeg(&stream, "JFIF APP0 of 14+ bytes, ids R,G,B");
    }
}

#[test]
fn an_adobe_app14_shorter_than_12_bytes_is_ignored_as_libjpeg_turbo_does() {
    // jdmarker.c examine_app14: APP14_DATA_LEN = 12 bytes, else the marker is ignored.
    for len in [5, 11] {
        let short = (0xEE, adobe(1).1[..len].to_vec());
        let stream = with_markers(&cjpeg_rgb(), &[short]);
        let header = zarr_jpeg::testing::read_header(&stream).unwrap();
        assert_eq!(header.adobe_transform, None, "{len}-byte Adobe APP14");
    }
    let stream = with_markers(&cjpeg_rgb(), &[adobe(1)]);
    assert_eq!(
        zarr_jpeg::testing::read_header(&stream)
            .unwrap()
            .adobe_transform,
        Some(1)
    );
}

#[test]
fn decoding_ignores_quality() {
    for stream in [cjpeg_rgb(), cjpeg_ycbcr()] {
        let a = zarr_jpeg::decode(&rgb_config(90), &stream, &shape()).unwrap();
        let b = zarr_jpeg::decode(&rgb_config(3), &stream, &shape()).unwrap();
        assert_eq!(a, b);
        let ycbcr = |q: u32| {
            config(&format!(
                r#"{{"quality": {q}, "encoded_color_space": "ycbcr", "subsampling": [[2, 2], [1, 1], [1, 1]]}}"#
            ))
        };
        let c = zarr_jpeg::decode(&ycbcr(100), &stream, &shape()).unwrap();
        let d = zarr_jpeg::decode(&ycbcr(1), &stream, &shape()).unwrap();
        assert_eq!(c, d);
        assert_eq!(a, c, "encoded_color_space and subsampling are ignored too");
    }
}
