//! What our streams carry, read with a marker walker written here (independent of
//! src/markers.rs): baseline SOF0, sampling factors as configured, JFIF for YCbCr and
//! grayscale, and for `rgb` no JFIF, an Adobe APP14 with transform 0, component ids
//! 'R','G','B' and one quantisation table shared by all components; restart intervals of
//! whole MCU rows, 64 image rows each, in chunks taller than that.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::*;

#[derive(Debug)]
struct Segment {
    marker: u8,
    payload: Vec<u8>,
}

/// Every marker segment of a stream up to EOI, skipping entropy-coded data.
fn segments(stream: &[u8]) -> Vec<Segment> {
    assert_eq!(&stream[..2], &[0xFF, 0xD8], "SOI");
    let mut out = Vec::new();
    let mut pos = 2;
    loop {
        assert_eq!(stream[pos], 0xFF, "marker expected at {pos}");
        let marker = stream[pos + 1];
        if marker == 0xD9 {
            assert_eq!(pos + 2, stream.len(), "EOI ends the stream");
            return out;
        }
        let len = usize::from(u16::from_be_bytes([stream[pos + 2], stream[pos + 3]]));
        out.push(Segment {
            marker,
            payload: stream[pos + 4..pos + 2 + len].to_vec(),
        });
        pos += 2 + len;
        if marker == 0xDA {
            while !(stream[pos] == 0xFF
                && stream[pos + 1] != 0
                && !(0xD0..=0xD7).contains(&stream[pos + 1]))
            {
                pos += 1;
            }
        }
    }
}

fn of(segs: &[Segment], marker: u8) -> Vec<&Segment> {
    segs.iter().filter(|s| s.marker == marker).collect()
}

/// (id, h, v, quantisation table) per component of the single SOF0.
fn frame(segs: &[Segment]) -> Vec<(u8, u8, u8, u8)> {
    for bad in [0xC1, 0xC2, 0xC3, 0xC9, 0xCA] {
        assert!(of(segs, bad).is_empty(), "unexpected SOF {bad:02X}");
    }
    let sof = of(segs, 0xC0);
    assert_eq!(sof.len(), 1, "exactly one baseline SOF0");
    let p = &sof[0].payload;
    assert_eq!(p[0], 8, "8-bit precision");
    p[6..]
        .chunks(3)
        .map(|c| (c[0], c[1] >> 4, c[1] & 15, c[2]))
        .collect()
}

fn is_jfif(s: &Segment) -> bool {
    s.marker == 0xE0 && s.payload.starts_with(b"JFIF\0")
}

fn adobe_transform(segs: &[Segment]) -> Option<u8> {
    segs.iter()
        .find(|s| s.marker == 0xEE && s.payload.starts_with(b"Adobe"))
        .map(|s| s.payload[11])
}

/// The quantisation tables defined, by id.
fn quant_tables(segs: &[Segment]) -> Vec<(u8, Vec<u8>)> {
    let mut tables = Vec::new();
    for s in of(segs, 0xDB) {
        let mut p = &s.payload[..];
        while !p.is_empty() {
            assert_eq!(p[0] >> 4, 0, "8-bit tables (baseline)");
            tables.push((p[0] & 15, p[1..65].to_vec()));
            p = &p[65..];
        }
    }
    tables
}

fn encode(json: &str, image: &Image) -> Vec<u8> {
    zarr_jpeg::encode(&config(json), &image.samples, &image.shape()).unwrap()
}

#[test]
fn ycbcr_streams_are_jfif_with_the_configured_sampling() {
    let image = ihc().tile(40, 56, 0, 0);
    for (h, v) in BASELINE_SCHEMES {
        let segs = segments(&encode(
            &format!(
                r#"{{"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[{h}, {v}], [1, 1], [1, 1]]}}"#
            ),
            &image,
        ));
        assert!(segs.iter().any(is_jfif), "JFIF APP0");
        assert_eq!(adobe_transform(&segs), None, "no Adobe APP14");
        let comps = frame(&segs);
        assert_eq!(comps.len(), 3);
        assert_eq!((comps[0].1, comps[0].2), (h, v), "luma sampling");
        assert_eq!(
            (comps[1].1, comps[1].2, comps[2].1, comps[2].2),
            (1, 1, 1, 1),
            "chroma sampling"
        );
        assert_ne!(
            comps[0].3, comps[1].3,
            "luma and chroma use different tables"
        );
        let scans = of(&segs, 0xDA);
        assert_eq!(scans.len(), 1, "one interleaved scan");
        assert_eq!(scans[0].payload[0], 3);
    }
}

#[test]
fn rgb_streams_carry_adobe_transform_0_rgb_ids_and_one_table() {
    let image = ihc().tile(40, 56, 0, 0);
    for quality in [50, 90, 100] {
        let segs = segments(&encode(
            &format!(r#"{{"quality": {quality}, "encoded_color_space": "rgb"}}"#),
            &image,
        ));
        assert!(!segs.iter().any(is_jfif), "no JFIF APP0");
        assert_eq!(
            adobe_transform(&segs),
            Some(0),
            "Adobe APP14 with transform 0"
        );
        let adobe = segs.iter().find(|s| s.marker == 0xEE).unwrap();
        assert_eq!(
            adobe.payload.len(),
            12,
            "APP14 Adobe is 12 bytes of payload, as libjpeg writes it"
        );
        let comps = frame(&segs);
        let ids: Vec<u8> = comps.iter().map(|c| c.0).collect();
        assert_eq!(ids, b"RGB".to_vec(), "component ids 'R','G','B'");
        assert!(
            comps.iter().all(|c| (c.1, c.2, c.3) == (1, 1, 0)),
            "1×1 sampling, table 0: {comps:?}"
        );
        let tables = quant_tables(&segs);
        assert_eq!(tables.len(), 1, "one quantisation table");
        // libjpeg's scaling of the Annex K luminance table (IJG quality formula).
        let scale = if quality < 50 {
            5000 / quality
        } else {
            200 - 2 * quality
        };
        let dc = ((16 * scale + 50) / 100).clamp(1, 255) as u8;
        assert_eq!(tables[0].1[0], dc, "DC entry of the q{quality} table");
        let scans = of(&segs, 0xDA);
        let selectors: Vec<u8> = scans
            .iter()
            .flat_map(|s| {
                s.payload[1..1 + 2 * s.payload[0] as usize]
                    .chunks(2)
                    .map(|c| c[0])
            })
            .collect();
        assert_eq!(selectors, b"RGB".to_vec(), "scan selectors follow the ids");
    }
}

#[test]
fn rgb_streams_store_samples_without_colour_transform() {
    // A pure red image stays pure red in the stored components: libjpeg-turbo decodes
    // it without an inverse YCbCr transform.
    let mut red = Image {
        height: 16,
        width: 16,
        components: 3,
        samples: vec![0; 16 * 16 * 3],
    };
    red.samples.chunks_mut(3).for_each(|p| p[0] = 200);
    let stream = encode(r#"{"quality": 95, "encoded_color_space": "rgb"}"#, &red);
    let theirs = djpeg(&stream);
    assert!(max_abs_diff(&theirs.samples, &red.samples) <= 2);
}

#[test]
fn grayscale_streams_have_one_component_and_jfif() {
    let image = cell().tile(24, 40, 0, 0);
    let segs = segments(&encode(
        r#"{"quality": 90, "encoded_color_space": "grayscale"}"#,
        &image,
    ));
    assert!(segs.iter().any(is_jfif));
    assert_eq!(frame(&segs), vec![(frame(&segs)[0].0, 1, 1, 0)]);
    assert_eq!(quant_tables(&segs).len(), 1);
}

#[test]
fn quality_100_gives_unit_tables_and_quality_1_the_coarsest() {
    let image = cell().tile(16, 16, 0, 0);
    let fine = segments(&encode(
        r#"{"quality": 100, "encoded_color_space": "grayscale"}"#,
        &image,
    ));
    assert!(quant_tables(&fine)[0].1.iter().all(|&q| q == 1));
    let coarse = segments(&encode(
        r#"{"quality": 1, "encoded_color_space": "grayscale"}"#,
        &image,
    ));
    assert!(quant_tables(&coarse)[0].1.iter().all(|&q| q == 255));
}

/// Chunks taller than 64 rows carry a DRI of the MCUs in 64 image rows (rounded down to
/// whole MCU rows, at least one), with an RSTn (numbered 0 to 7 in turn) between each two
/// intervals; shorter chunks have neither. The decoder decodes such intervals two at a
/// time (src/baseline/scan.rs); djpeg reads them in tests/interop.rs.
#[test]
fn restart_intervals_of_whole_mcu_rows_in_tall_chunks() {
    for (label, json, c) in encoder_configs(90) {
        for (h, w) in [(1, 1), (64, 40), (65, 40), (200, 77), (300, 9)] {
            let samples = pattern_image(6, h, w, c, 3);
            let shape: Vec<u64> = if c == 1 {
                vec![h as u64, w as u64]
            } else {
                vec![h as u64, w as u64, 3]
            };
            let stream = zarr_jpeg::encode(&config(&json), &samples, &shape).unwrap();
            let segs = segments(&stream);
            let comps = frame(&segs);
            let (h_max, v_max) = if comps.len() == 1 {
                (1, 1)
            } else {
                let h_max = comps.iter().map(|c| usize::from(c.1)).max().unwrap();
                (h_max, comps.iter().map(|c| usize::from(c.2)).max().unwrap())
            };
            let (mcu_x, mcu_y) = (w.div_ceil(8 * h_max), h.div_ceil(8 * v_max));
            let rows = (64 / (8 * v_max)).max(1);
            let rst: Vec<u8> = stream
                .windows(2)
                .filter(|p| p[0] == 0xFF && (0xD0..=0xD7).contains(&p[1]))
                .map(|p| p[1] - 0xD0)
                .collect();
            let dri = of(&segs, 0xDD);
            let what = format!("{label} {h}x{w}");
            if h > 64 {
                assert_eq!(dri.len(), 1, "{what}: one DRI");
                let interval = u16::from_be_bytes([dri[0].payload[0], dri[0].payload[1]]);
                assert_eq!(
                    usize::from(interval),
                    rows * mcu_x,
                    "{what}: MCUs per interval"
                );
                assert_eq!(rst.len(), mcu_y.div_ceil(rows) - 1, "{what}: RSTn markers");
                assert!(
                    rst.iter()
                        .enumerate()
                        .all(|(i, &n)| usize::from(n) == i % 8),
                    "{what}: RSTn numbered in turn: {rst:?}"
                );
            } else {
                assert!(
                    dri.is_empty() && rst.is_empty(),
                    "{what}: no restart intervals"
                );
            }
        }
    }
}

/// `EncodeOptions { restart_intervals: false }` leaves them out of any chunk (the same
/// samples, as djpeg decodes both alike: tests/interop.rs), and `EncodeOptions::parse`
/// reads the JavaScript options object, naming what it refuses.
#[test]
fn restart_intervals_can_be_left_out() {
    use zarr_jpeg::{encode_from_with_options, EncodeOptions};
    let off = EncodeOptions {
        restart_intervals: false,
        ..EncodeOptions::default()
    };
    for (label, json, c) in encoder_configs(90) {
        let (h, w) = (200, 77);
        let samples = pattern_image(6, h, w, c, 3);
        let shape: Vec<u64> = if c == 1 {
            vec![h as u64, w as u64]
        } else {
            vec![h as u64, w as u64, 3]
        };
        let cfg = config(&json);
        let plain = encode_from_with_options(&cfg, &samples.as_slice(), &shape, &off).unwrap();
        let segs = segments(&plain);
        assert!(of(&segs, 0xDD).is_empty(), "{label}: a DRI");
        assert!(
            !plain
                .windows(2)
                .any(|p| p[0] == 0xFF && (0xD0..=0xD7).contains(&p[1])),
            "{label}: an RSTn"
        );
        let with = zarr_jpeg::encode(&cfg, &samples, &shape).unwrap();
        assert_eq!(
            of(&segments(&with), 0xDD).len(),
            1,
            "{label}: the default has a DRI"
        );
        assert_eq!(
            zarr_jpeg::decode(&cfg, &plain, &shape).unwrap(),
            zarr_jpeg::decode(&cfg, &with, &shape).unwrap(),
            "{label}: other samples"
        );
    }

    let parse = |json: &str| EncodeOptions::parse(&config_value(json));
    assert_eq!(parse("null").unwrap(), EncodeOptions::default());
    assert_eq!(parse("{}").unwrap(), EncodeOptions::default());
    assert!(EncodeOptions::default().restart_intervals);
    assert_eq!(parse(r#"{"restartIntervals": false}"#).unwrap(), off);
    assert!(!EncodeOptions::default().trellis);
    assert_eq!(
        parse(r#"{"trellis": true, "restartIntervals": false}"#).unwrap(),
        EncodeOptions {
            restart_intervals: false,
            trellis: true,
            ..EncodeOptions::default()
        }
    );
    assert_eq!(
        parse(r#"{"trellis": false}"#).unwrap(),
        EncodeOptions::default()
    );
    for (json, message) in [
        (
            r#"{"restartIntervals": 0}"#,
            "restartIntervals must be true or false, got 0",
        ),
        (
            r#"{"trellis": 1}"#,
            "the encode option trellis must be true or false, got 1",
        ),
        (
            r#"{"trellis": "yes"}"#,
            "the encode option trellis must be true or false, got \"yes\" (a string)",
        ),
        (
            r#"{"trellis": null}"#,
            "trellis must be true or false, got null",
        ),
        (
            r#"{"Trellis": true}"#,
            "unknown encode option \"Trellis\" (known: restartIntervals, trellis, quantTable)",
        ),
        (r#"{"restart": true}"#, "unknown encode option \"restart\""),
        ("[true]", "the encode options must be an object"),
    ] {
        let e = parse(json).unwrap_err();
        assert!(e.to_string().contains(message), "{json}: {e}");
        assert_eq!(
            e.kind(),
            zarr_jpeg::ErrorKind::InvalidConfiguration,
            "{json}"
        );
    }
}
