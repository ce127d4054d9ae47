//! `RowDecoder`: a whole image decoded a band of rows at a time, pulled by the caller (the
//! converter's JPEG input). Its rows are exactly `decode`'s samples (the same baseline
//! decoder) and within the interop bound of libjpeg-turbo's `djpeg`, for streams from
//! `cjpeg` in every sampling the baseline decoder takes, odd sizes, restart intervals (of
//! whole MCU rows, decoded in pairs, and of a few blocks), RGB and grayscale; streams it
//! leaves to a whole-image decode (progressive) say so with the memory that takes; its
//! memory does not grow with the image; hostile streams never panic.
mod common;
#[path = "common/heap_peak.rs"]
mod heap_peak;

use common::{cell, cjpeg, config, djpeg, ihc, max_abs_diff, mean_abs_diff, Image};
use heap_peak::peak_during;
use zarr_jpeg::{decode, ErrorKind, JpegConfig, RowDecoder, Rows};

// ------------------------------------------------------------ helpers

/// The converter's configuration for an image of `components` (src/convert/jpeg.rs).
fn input_config(components: usize) -> JpegConfig {
    if components == 1 {
        config(r#"{"quality": 95, "encoded_color_space": "grayscale"}"#)
    } else {
        config(r#"{"quality": 95, "encoded_color_space": "rgb"}"#)
    }
}

fn shape_of(stream: &[u8]) -> Vec<u64> {
    let header = zarr_jpeg::testing::read_header(stream).unwrap();
    let (h, w) = (u64::from(header.height), u64::from(header.width));
    if header.components.len() == 1 {
        vec![h, w]
    } else {
        vec![h, w, 3]
    }
}

/// Every row of `stream` through a `RowDecoder`, and the sizes of the bands it gave.
fn rows_of(config: &JpegConfig, stream: &[u8], shape: &[u64]) -> (Vec<u8>, Vec<usize>) {
    let Rows::Bands(mut rows) = RowDecoder::new(config, stream.to_vec(), shape).unwrap() else {
        panic!("decoded whole, not in bands")
    };
    let row_bytes = rows.row_bytes();
    let mut all = Vec::new();
    let mut bands = Vec::new();
    while let Some(band) = rows.next_rows().unwrap() {
        assert!(
            !band.is_empty() && band.len() % row_bytes == 0,
            "a band of whole rows"
        );
        bands.push(band.len());
        all.extend_from_slice(band);
    }
    assert_eq!(rows.rows_done() as u64, shape[0]);
    // and after the end, still the end
    assert!(rows.next_rows().unwrap().is_none());
    (all, bands)
}

fn check_against_decode_and_djpeg(label: &str, stream: &[u8]) {
    let shape = shape_of(stream);
    let config = input_config(shape.get(2).map_or(1, |&c| c as usize));
    let (rows, bands) = rows_of(&config, stream, &shape);
    let whole = decode(&config, stream, &shape).unwrap();
    assert!(
        rows == whole,
        "{label}: the rows differ from decode()'s samples"
    );
    let theirs = djpeg(stream).samples;
    let (max, mean) = (max_abs_diff(&rows, &theirs), mean_abs_diff(&rows, &theirs));
    // tests/interop.rs's bound (zune-jpeg's chroma up-sampling rounds otherwise)
    assert!(
        max <= 4 && mean <= 0.4,
        "{label}: |rows - djpeg| max {max}, mean {mean:.3}"
    );
    let row_bytes = (whole.len() as u64 / shape[0]) as usize;
    let largest = bands.iter().max().copied().unwrap_or(0);
    assert!(
        largest <= (64 << 10).max(row_bytes) * 64,
        "{label}: a band of {largest} bytes"
    );
    eprintln!(
        "{label}: {} × {}, {} bands, largest {largest} B",
        shape[0],
        shape[1],
        bands.len()
    );
}

// ------------------------------------------------------------ the rows

#[test]
fn rows_are_decodes_samples_and_djpegs_for_cjpeg_streams() {
    let colour = ihc().tile(389, 509, 3, 5);
    let gray = cell().tile(301, 277, 0, 0);
    let cases: Vec<(&str, &Image, Vec<&str>)> = vec![
        ("grayscale", &gray, vec!["-quality", "90", "-grayscale"]),
        (
            "colour to grayscale",
            &colour,
            vec!["-quality", "85", "-grayscale"],
        ),
        ("4:2:0", &colour, vec!["-quality", "90", "-sample", "2x2"]),
        ("4:4:4", &colour, vec!["-quality", "90", "-sample", "1x1"]),
        ("4:2:2", &colour, vec!["-quality", "90", "-sample", "2x1"]),
        ("4:4:0", &colour, vec!["-quality", "90", "-sample", "1x2"]),
        ("4:1:1", &colour, vec!["-quality", "90", "-sample", "4x1"]),
        (
            "RGB (Adobe transform 0)",
            &colour,
            vec!["-quality", "90", "-rgb"],
        ),
        (
            "optimised tables",
            &colour,
            vec!["-quality", "75", "-optimize"],
        ),
        (
            "restart every MCU row, 4:2:0",
            &colour,
            vec!["-quality", "90", "-restart", "1"],
        ),
        (
            "restart every 2 MCU rows, 4:4:4",
            &colour,
            vec!["-sample", "1x1", "-restart", "2"],
        ),
        (
            "restart every 5 MCUs, 4:2:0",
            &colour,
            vec!["-quality", "90", "-restart", "5B"],
        ),
        (
            "restart every 3 blocks, gray",
            &gray,
            vec!["-restart", "3B"],
        ),
    ];
    for (label, image, args) in &cases {
        check_against_decode_and_djpeg(label, &cjpeg(image, args));
    }
    // odd and tiny sizes
    for (h, w) in [(1, 1), (1, 300), (300, 1), (7, 9), (17, 33), (47, 61)] {
        for args in [
            &["-sample", "2x2"][..],
            &["-sample", "2x1"],
            &["-grayscale"],
            &["-sample", "1x2"],
        ] {
            let label = format!("{h} × {w} {args:?}");
            check_against_decode_and_djpeg(&label, &cjpeg(&ihc().tile(h, w, 40, 40), args));
        }
    }
}

/// Our encoder's streams: restart intervals of 64 rows, decoded two at a time.
#[test]
fn rows_of_streams_with_restart_intervals_of_whole_mcu_rows_decoded_in_pairs() {
    let image = ihc().tile(700, 530, 0, 0);
    for (json, shape) in [
        (
            r#"{"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[2, 2], [1, 1], [1, 1]]}"#,
            vec![700u64, 530, 3],
        ),
        (
            r#"{"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[1, 1], [1, 1], [1, 1]]}"#,
            vec![700, 530, 3],
        ),
        (
            r#"{"quality": 90, "encoded_color_space": "rgb"}"#,
            vec![700, 530, 3],
        ),
    ] {
        let stream = zarr_jpeg::encode(&config(json), &image.samples, &shape).unwrap();
        assert!(
            stream.windows(2).any(|w| w == [0xFF, 0xD0]),
            "{json}: restart markers"
        );
        check_against_decode_and_djpeg(json, &stream);
        // and decoded to YCbCr (a stream stored as YCbCr, not converted)
        if json.contains("ycbcr") {
            let ycc =
                config(&json.replace(r#""ycbcr","#, r#""ycbcr", "decoded_color_space": "ycbcr","#));
            let (rows, _) = rows_of(&ycc, &stream, &shape);
            assert!(
                rows == decode(&ycc, &stream, &shape).unwrap(),
                "{json} as YCbCr"
            );
        }
    }
}

/// What the baseline decoder leaves to the full decoder is not decoded in bands: the
/// caller is told why and how much memory a whole decode takes.
#[test]
fn streams_for_the_full_decoder_are_left_whole_with_their_memory() {
    let image = ihc().tile(61, 47, 0, 0);
    for (args, coefficients) in [
        (&["-progressive"][..], true),
        (&["-progressive", "-sample", "1x1"], true),
        (&["-progressive", "-grayscale"], true),
    ] {
        let stream = cjpeg(&image, args);
        let shape = shape_of(&stream);
        let config = input_config(shape.get(2).map_or(1, |&c| c as usize));
        match RowDecoder::new(&config, stream.clone(), &shape).unwrap() {
            Rows::Whole { reason, bytes } => {
                assert!(reason.contains("progressive"), "{args:?}: {reason}");
                let samples: u64 = shape.iter().product();
                assert!(
                    bytes >= samples + if coefficients { 2 * 61 * 47 } else { 0 },
                    "{args:?}: {bytes}"
                );
            }
            Rows::Bands(_) => panic!("{args:?}: a progressive stream in bands"),
        }
        // the whole decode it points to works
        assert_eq!(
            decode(&config, &stream, &shape).unwrap().len() as u64,
            shape.iter().product::<u64>()
        );
    }
}

/// The same checks as decode(): the stream against the shape, the colour rules, truncation.
#[test]
fn bad_streams_are_refused_as_decode_refuses_them() {
    let stream = cjpeg(&ihc().tile(40, 56, 0, 0), &["-quality", "90"]);
    let rgb = input_config(3);
    let cases: Vec<(Vec<u8>, Vec<u64>, &str)> = vec![
        (
            stream[..stream.len() - 100].to_vec(),
            vec![40, 56, 3],
            "truncated",
        ),
        (stream.clone(), vec![40, 57, 3], "56"),
        (stream.clone(), vec![40, 56], "component"),
        (vec![], vec![40, 56, 3], "empty"),
    ];
    for (bytes, shape, expected) in cases {
        let config = if shape.len() == 2 {
            input_config(1)
        } else {
            rgb.clone()
        };
        let Err(e) = RowDecoder::new(&config, bytes.clone(), &shape) else {
            panic!("{expected}: accepted")
        };
        let theirs = decode(&config, &bytes, &shape).unwrap_err();
        assert_eq!(e, theirs, "{expected}");
        assert!(
            e.message().contains(expected),
            "{expected}: {}",
            e.message()
        );
    }
    // YCCK: refused by name
    let adobe2 = [
        0xFF, 0xEE, 0, 14, b'A', b'd', b'o', b'b', b'e', 0, 100, 0, 0, 0, 0, 2,
    ];
    let jfif_end = 4 + usize::from(u16::from_be_bytes([stream[4], stream[5]]));
    let ycck = [&stream[..2], &adobe2[..], &stream[jfif_end..]].concat();
    let Err(e) = RowDecoder::new(&rgb, ycck, &[40, 56, 3]) else {
        panic!("YCCK accepted")
    };
    assert!(e.message().contains("YCCK"), "{}", e.message());
}

/// Corrupt entropy-coded data the baseline decoder stops at, part-way down: the rows
/// before it, then an error naming the row, of kind NeedsFullDecoder (the caller decodes
/// the stream whole, as decode() does).
#[test]
fn corrupt_data_part_way_is_an_error_naming_the_row() {
    let stream = cjpeg(&ihc().tile(256, 256, 0, 0), &["-quality", "90"]);
    let scan = stream.windows(2).position(|w| w == [0xFF, 0xDA]).unwrap();
    let mut bad = stream.clone();
    let from = scan + (stream.len() - scan) * 2 / 3;
    for pair in bad[from..from + 200].chunks_exact_mut(2) {
        pair.copy_from_slice(&[0xFF, 0x00]); // (destuffed: 0xFF bytes, codes no table has)
    }
    let Rows::Bands(mut rows) = RowDecoder::new(&input_config(3), bad, &[256, 256, 3]).unwrap()
    else {
        panic!("decoded whole")
    };
    let e = loop {
        match rows.next_rows() {
            Ok(Some(_)) => continue,
            Ok(None) => panic!("decoded to the end"),
            Err(e) => break e,
        }
    };
    assert_eq!(e.kind(), ErrorKind::NeedsFullDecoder);
    assert!(
        rows.rows_done() > 64 && rows.rows_done() < 256,
        "{}",
        rows.rows_done()
    );
    assert!(
        e.message()
            .contains(&format!("after row {} of 256", rows.rows_done())),
        "{}",
        e.message()
    );
    assert!(rows.next_rows().is_err(), "after an error, errors");
}

// ------------------------------------------------------------ memory

fn segment(out: &mut Vec<u8>, marker: u8, payload: &[u8]) {
    out.extend_from_slice(&[0xFF, marker]);
    out.extend_from_slice(&((payload.len() + 2) as u16).to_be_bytes());
    out.extend_from_slice(payload);
}

/// A flat grey baseline stream of `height` × `width` whose every block is two bits (DC
/// difference 0, end of block), so that a large image is a small stream.
fn flat_gray(height: u16, width: u16) -> Vec<u8> {
    let mut s = vec![0xFF, 0xD8];
    let mut dqt = vec![0u8];
    dqt.extend_from_slice(&[1u8; 64]);
    segment(&mut s, 0xDB, &dqt);
    let mut counts = [0u8; 16];
    counts[0] = 1;
    for class in [0x00u8, 0x10] {
        let mut dht = vec![class];
        dht.extend_from_slice(&counts);
        dht.push(0x00);
        segment(&mut s, 0xC4, &dht);
    }
    let [h0, h1] = height.to_be_bytes();
    let [w0, w1] = width.to_be_bytes();
    segment(&mut s, 0xC0, &[8, h0, h1, w0, w1, 1, 1, 0x11, 0]);
    segment(&mut s, 0xDA, &[1, 1, 0x00, 0, 63, 0]);
    let blocks = usize::from(height).div_ceil(8) * usize::from(width).div_ceil(8);
    s.resize(s.len() + (2 * blocks).div_ceil(8), 0);
    s.extend_from_slice(&[0xFF, 0xD9]);
    s
}

/// The peak heap of a decode in bands is the stream (destuffed in place, not copied)
/// and a few rows: an 8,192² image (64 MiB of samples) takes less than 1 MiB more than
/// its stream, where decode() takes the image.
#[test]
fn memory_does_not_grow_with_the_image() {
    let (h, w) = (8192u16, 8192u16);
    let stream = flat_gray(h, w);
    let shape = [u64::from(h), u64::from(w)];
    let config = input_config(1);
    let len = stream.len();
    let ((rows, largest), peak) = peak_during(|| {
        let Rows::Bands(mut rows) = RowDecoder::new(&config, stream, &shape).unwrap() else {
            panic!("decoded whole")
        };
        let mut largest = 0;
        while let Some(band) = rows.next_rows().unwrap() {
            assert!(band.iter().all(|&v| v == 128));
            largest = largest.max(band.len());
        }
        (rows.rows_done(), largest)
    });
    assert_eq!(rows, usize::from(h));
    eprintln!("{h} × {w}: stream {len} B, peak heap {peak} B beyond it, largest band {largest} B");
    assert!(
        peak < len + (1 << 20),
        "peak heap {peak} B for a stream of {len} B"
    );
}

/// A few bytes claiming 65535² are refused before anything is allocated for the image.
#[test]
fn a_tiny_stream_claiming_a_huge_image_is_refused_before_allocating() {
    let mut stream = flat_gray(65535, 65535);
    let header = stream.windows(2).position(|w| w == [0xFF, 0xDA]).unwrap() + 10;
    stream.truncate(header + 100);
    stream.extend_from_slice(&[0xFF, 0xD9]);
    let (result, peak) = peak_during(|| {
        RowDecoder::new(&input_config(1), stream.clone(), &[65535, 65535]).map(|_| ())
    });
    let e = result.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::CorruptStream);
    assert!(e.message().contains("too short"), "{}", e.message());
    assert!(peak < 64 << 10, "peak heap {peak} B");
}

// ------------------------------------------------------------ hostile input

/// Mutated streams (bytes changed, cut short) of every kind the decoder takes in bands:
/// never a panic; a decode in bands that reaches the end gives decode()'s samples.
#[test]
fn mutated_streams_never_panic() {
    let colour = ihc().tile(48, 72, 10, 10);
    let bases: Vec<Vec<u8>> = vec![
        cjpeg(&colour, &["-quality", "90", "-sample", "2x2"]),
        cjpeg(&colour, &["-quality", "90", "-sample", "1x2", "-restart", "1"]),
        cjpeg(&colour, &["-quality", "90", "-rgb", "-restart", "4B"]),
        cjpeg(&colour, &["-quality", "90", "-grayscale"]),
        cjpeg(&colour, &["-quality", "90", "-sample", "4x1"]),
        zarr_jpeg::encode(
            &config(r#"{"quality": 80, "encoded_color_space": "ycbcr", "subsampling": [[2, 2], [1, 1], [1, 1]]}"#),
            &ihc().tile(160, 64, 0, 0).samples,
            &[160, 64, 3],
        )
        .unwrap(),
    ];
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let (mut bands, mut whole, mut refused, mut stopped, mut same) = (0, 0, 0, 0, 0);
    for round in 0..3000 {
        let base = &bases[round % bases.len()];
        let mut s = base.clone();
        for _ in 0..1 + round % 4 {
            if s.is_empty() {
                break;
            }
            let r = next();
            let at = (r >> 8) as usize % s.len();
            s[at] = (r >> 40) as u8;
            if r & 0x70 == 0 {
                s.truncate(at);
            }
        }
        let shape = shape_of(base);
        let config = input_config(shape.get(2).map_or(1, |&c| c as usize));
        match RowDecoder::new(&config, s.clone(), &shape) {
            Err(_) => refused += 1,
            Ok(Rows::Whole { .. }) => whole += 1,
            Ok(Rows::Bands(mut rows)) => {
                bands += 1;
                let mut all = Vec::new();
                let finished = loop {
                    match rows.next_rows() {
                        Ok(Some(band)) => all.extend_from_slice(band),
                        Ok(None) => break true,
                        Err(e) => {
                            assert_eq!(e.kind(), ErrorKind::NeedsFullDecoder);
                            break false;
                        }
                    }
                };
                if finished {
                    assert_eq!(all, decode(&config, &s, &shape).unwrap(), "round {round}");
                    same += 1;
                } else {
                    stopped += 1;
                }
            }
        }
    }
    eprintln!("3000 mutated streams: {refused} refused, {whole} whole, {bands} in bands ({same} to the end, as decode(); {stopped} stopped)");
    assert!(refused > 0 && bands > 0 && same > 0 && stopped > 0);
}
