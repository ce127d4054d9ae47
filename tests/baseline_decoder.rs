//! Differential test of the baseline decoder (src/baseline/) against the zune-jpeg path
//! of `decode::full`: every fixture, streams from our encoder (all eight
//! sampling schemes, `rgb`, grayscale; 1×1 to 300×13, the taller ones with our restart
//! intervals, decoded two at a time), libjpeg-turbo streams with restart
//! intervals, and mutations of all of them (truncations, bit flips, bytes set to
//! 0xFF/0x00/marker values, markers inserted, restart markers renumbered or dropped).
//!
//! Two levels, for every stream and every output colour space: (1) `baseline::decode`
//! directly, on streams `check_stream` accepts: it either defers or gives exactly the
//! samples zune-jpeg gives when asked as `decode_checked` asks it; every clean baseline
//! stream must be accepted (counted). (2) `zarr_jpeg::decode`: identical samples or
//! identical error messages with the baseline decoder on and forced off
//! (`testing::set_baseline_for_tests`).

mod common;

use common::{cjpeg, config, encoder_configs, pattern_image, repo_path, Image};
use zarr_jpeg::testing::baseline::{self, Output};
use zarr_jpeg::{ChunkLayout, JpegConfig};
use zune_jpeg::zune_core::bytestream::ZCursor;
use zune_jpeg::zune_core::colorspace::ColorSpace;
use zune_jpeg::zune_core::options::DecoderOptions;
use zune_jpeg::JpegDecoder;

struct Case {
    name: String,
    stream: Vec<u8>,
    clean_baseline: bool,
}

/// The chunk configurations (one per decoded colour space) and shape for a stream.
fn chunks_for(stream: &[u8]) -> (Vec<JpegConfig>, Vec<u64>) {
    let colour = |decoded: &str| {
        config(&format!(
            r#"{{"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[2, 2], [1, 1], [1, 1]], "decoded_color_space": "{decoded}"}}"#
        ))
    };
    match zarr_jpeg::testing::read_header(stream) {
        Ok(h) if h.components.len() == 1 => (
            vec![config(
                r#"{"quality": 90, "encoded_color_space": "grayscale"}"#,
            )],
            vec![u64::from(h.height), u64::from(h.width)],
        ),
        Ok(h) => (
            vec![colour("rgb"), colour("ycbcr")],
            vec![u64::from(h.height), u64::from(h.width), 3],
        ),
        Err(_) => (vec![colour("rgb")], vec![8, 8, 3]),
    }
}

/// zune-jpeg as `decode_checked` runs it, asked for `out`.
fn zune(
    stream: &[u8],
    width: u16,
    height: u16,
    out: ColorSpace,
    len: usize,
) -> Result<Vec<u8>, String> {
    let options = DecoderOptions::default()
        .set_max_width(usize::from(width))
        .set_max_height(usize::from(height))
        .set_strict_mode(true)
        .jpeg_set_max_scans(zarr_jpeg::testing::MAX_SCANS)
        .jpeg_set_out_colorspace(out);
    let mut decoder = JpegDecoder::new_with_options(ZCursor::new(stream), options);
    decoder.decode_headers().map_err(|e| e.to_string())?;
    if decoder.output_buffer_size() != Some(len) {
        return Err("size".into());
    }
    let mut pixels = vec![0; len];
    decoder
        .decode_into(&mut pixels)
        .map_err(|e| e.to_string())?;
    Ok(pixels)
}

/// Level 1 for every output the stream can be asked for; returns (outputs tried,
/// outputs accepted).
fn direct(name: &str, stream: &[u8]) -> (usize, usize) {
    let (configs, shape) = chunks_for(stream);
    let Ok(layout) = ChunkLayout::for_config(&shape, &configs[0]) else {
        return (0, 0);
    };
    let Ok((header, _)) = zarr_jpeg::testing::check_stream(stream, &layout) else {
        return (0, 0);
    };
    let zune_sees_rgb =
        header.components.len() == 3 && (header.adobe_transform == Some(0) || header.ids_are_rgb());
    let outputs: Vec<(Output, ColorSpace)> = if header.components.len() == 1 {
        vec![(Output::Luma, ColorSpace::Luma)]
    } else if zune_sees_rgb {
        vec![(Output::Copy, ColorSpace::RGB)]
    } else {
        vec![
            (Output::Copy, ColorSpace::YCbCr),
            (Output::YcbcrToRgb, ColorSpace::RGB),
        ]
    };
    let (mut tried, mut accepted) = (0, 0);
    for (output, cs) in outputs {
        tried += 1;
        let len = layout.sample_count();
        let mut ours = vec![0xA5; len];
        if baseline::decode(stream, output, &mut ours).is_ok() {
            accepted += 1;
            let theirs = zune(stream, header.width, header.height, cs, len);
            assert!(
                theirs.as_ref() == Ok(&ours),
                "{name} ({output:?}): the baseline decoder gave {} but zune-jpeg {}{}",
                describe(&Ok(ours.clone())),
                describe(&theirs),
                match &theirs {
                    Ok(t) => format!(
                        "; first difference at sample {:?}",
                        ours.iter().zip(t).position(|(a, b)| a != b)
                    ),
                    Err(_) => String::new(),
                }
            );
        }
    }
    (tried, accepted)
}

/// Level 2: the codec with the baseline decoder on and off.
fn codec(name: &str, stream: &[u8]) {
    let (configs, shape) = chunks_for(stream);
    for config in configs {
        let run = |on: bool| {
            zarr_jpeg::testing::set_baseline_for_tests(on);
            let r = zarr_jpeg::decode(&config, stream, &shape).map_err(|e| e.to_string());
            zarr_jpeg::testing::set_baseline_for_tests(true);
            r
        };
        let (on, off) = (run(true), run(false));
        assert!(
            on == off,
            "{name}: zarr_jpeg::decode gave {} with the baseline decoder and {} without",
            describe(&on),
            describe(&off)
        );
    }
}

/// Returns whether the baseline decoder accepted every output of the stream.
fn check(name: &str, stream: &[u8]) -> bool {
    let (tried, accepted) = direct(name, stream);
    codec(name, stream);
    tried > 0 && tried == accepted
}

fn describe(r: &Result<Vec<u8>, String>) -> String {
    match r {
        Ok(p) => format!(
            "{} samples (sum {})",
            p.len(),
            p.iter().map(|&b| u64::from(b)).sum::<u64>()
        ),
        Err(e) => format!("error {e:?}"),
    }
}

fn fixtures() -> Vec<Case> {
    let mut out = Vec::new();
    let dir = repo_path("tests/fixtures");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .filter(|n| n.ends_with(".jpg"))
        .collect();
    names.sort();
    for name in names {
        let stream = std::fs::read(dir.join(&name)).unwrap();
        // baseline (SOF0/SOF1), every component in the first scan, fully decodable
        // (ycc_cb2x2: chroma sampled more finely than 1 × 1, left to zune-jpeg; ycc_y3x1
        // is rejected by check_sampling)
        let clean_baseline = !name.starts_with("reject_")
            && !name.contains("progressive")
            && !name.starts_with("ycc_cb2x2")
            && !name.starts_with("ycc_y3x1");
        out.push(Case {
            name,
            stream,
            clean_baseline,
        });
    }
    out
}

/// Our encoder's stream of `pattern_image(pattern, h, w, c, seed)` at `quality`.
fn encoded_case(
    (label, json, c): (String, String, usize),
    quality: u8,
    (h, w): (usize, usize),
    pattern: usize,
    seed: u64,
) -> Case {
    let samples = pattern_image(pattern, h, w, c, seed);
    let shape: Vec<u64> = if c == 1 {
        vec![h as u64, w as u64]
    } else {
        vec![h as u64, w as u64, c as u64]
    };
    Case {
        name: format!("encode {label} q{quality} {h}x{w} pattern {pattern}"),
        stream: zarr_jpeg::encode(&config(&json), &samples, &shape).unwrap(),
        clean_baseline: true,
    }
}

fn encoded() -> Vec<Case> {
    let mut out = Vec::new();
    let sizes = [(1, 1), (7, 13), (17, 33), (61, 47), (64, 48)];
    for (i, &size) in sizes.iter().enumerate() {
        for pattern in [0, 6, 7, 8] {
            for quality in [10, 90, 100] {
                for mode in encoder_configs(quality) {
                    let seed = (i * 31 + pattern) as u64;
                    out.push(encoded_case(mode, quality, size, pattern, seed));
                }
            }
        }
    }
    // taller than one restart interval (64 rows): restart intervals of whole MCU rows,
    // decoded two at a time, with rows left over after the pairs at every height here
    let tall = [(65, 9), (150, 37), (200, 20), (300, 13)];
    for (i, &size) in tall.iter().enumerate() {
        for pattern in [6, 7] {
            for mode in encoder_configs(75) {
                let seed = (i * 17 + pattern) as u64;
                out.push(encoded_case(mode, 75, size, pattern, seed));
            }
        }
    }
    out
}

/// libjpeg-turbo's `cjpeg` with restart intervals (in MCU rows and in MCUs).
fn restart_streams() -> Vec<Case> {
    let mut out = Vec::new();
    for (h, w) in [(61, 47), (40, 130), (16, 16)] {
        for (c, sample) in [(3, "2x2"), (3, "1x1"), (3, "2x1"), (1, "1x1")] {
            let image = Image {
                height: h,
                width: w,
                components: c,
                samples: pattern_image(6, h, w, c, 7),
            };
            for restart in ["1", "2", "1B", "3B", "7B"] {
                for quality in ["50", "95"] {
                    out.push(Case {
                        name: format!(
                            "cjpeg -restart {restart} -sample {sample} q{quality} {h}x{w} c{c}"
                        ),
                        stream: cjpeg(
                            &image,
                            &["-quality", quality, "-sample", sample, "-restart", restart],
                        ),
                        clean_baseline: true,
                    });
                }
            }
        }
    }
    out
}

/// xorshift
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Where the first scan's entropy-coded data starts (after the first SOS segment).
fn scan_start(stream: &[u8]) -> usize {
    let mut i = 2;
    while i + 4 <= stream.len() {
        if stream[i] != 0xFF {
            return 2;
        }
        let marker = stream[i + 1];
        let len = usize::from(stream[i + 2]) << 8 | usize::from(stream[i + 3]);
        if marker == 0xDA {
            return (i + 2 + len).min(stream.len());
        }
        i += 2 + len;
    }
    2
}

fn mutations(stream: &[u8], n: usize, seed: u64) -> Vec<Vec<u8>> {
    let mut rng = Rng(seed | 1);
    let start = scan_start(stream);
    let span = stream.len().saturating_sub(start).max(1);
    let mut out = Vec::with_capacity(n);
    for k in 0..n {
        let mut s = stream.to_vec();
        // mostly in the entropy-coded data, sometimes anywhere
        let at = if k % 8 == 0 {
            rng.below(s.len())
        } else {
            (start + rng.below(span)).min(s.len() - 1)
        };
        match k % 9 {
            0 => s.truncate(at),
            1 => {
                s.truncate(at);
                s.extend_from_slice(&[0xFF, 0xD9]);
            }
            2 => s[at] ^= 1 << rng.below(8),
            3 => s[at] = 0xFF,
            4 => s[at] = 0x00,
            5 => {
                let markers = [
                    0xD0, 0xD1, 0xD7, 0xD9, 0xDA, 0xC4, 0xDB, 0xDD, 0xFE, 0xE0, 0xFF, 0x01,
                ];
                s.insert(at, 0xFF);
                s.insert(at + 1, markers[rng.below(markers.len())]);
            }
            6 => {
                // renumber or drop a restart marker, or flip several bits
                if let Some(p) = s
                    .windows(2)
                    .position(|w| w[0] == 0xFF && (0xD0..=0xD7).contains(&w[1]))
                {
                    if rng.below(2) == 0 {
                        s[p + 1] = 0xD0 + (rng.below(8) as u8);
                    } else {
                        s.drain(p..p + 2);
                    }
                } else {
                    for _ in 0..4 {
                        let a = (start + rng.below(span)).min(s.len() - 1);
                        s[a] ^= 1 << rng.below(8);
                    }
                }
            }
            7 => {
                s.remove(at);
            }
            _ => {
                let end = (at + 1 + rng.below(16)).min(s.len());
                for b in &mut s[at..end] {
                    *b = rng.next() as u8;
                }
            }
        }
        out.push(s);
    }
    out
}

/// Marker segments before the first SOS (marker, whole segment bytes), and the rest.
fn split_segments(stream: &[u8]) -> (Vec<(u8, Vec<u8>)>, Vec<u8>) {
    let mut segments = Vec::new();
    let mut i = 2;
    while i + 4 <= stream.len() && stream[i] == 0xFF && stream[i + 1] != 0xDA {
        let len = usize::from(stream[i + 2]) << 8 | usize::from(stream[i + 3]);
        segments.push((stream[i + 1], stream[i..i + 2 + len].to_vec()));
        i += 2 + len;
    }
    (segments, stream[i..].to_vec())
}

fn segment(marker: u8, payload: &[u8]) -> Vec<u8> {
    let len = payload.len() + 2;
    let mut s = vec![0xFF, marker, (len >> 8) as u8, len as u8];
    s.extend_from_slice(payload);
    s
}

/// One segment per table of a DQT or DHT segment.
fn split_tables(marker: u8, seg: &[u8]) -> Vec<Vec<u8>> {
    let payload = &seg[4..];
    let mut out = Vec::new();
    let mut i = 0;
    while i < payload.len() {
        let n = if marker == 0xDB {
            1 + 64 * (usize::from(payload[i] >> 4) + 1)
        } else {
            17 + payload[i + 1..i + 17]
                .iter()
                .map(|&c| usize::from(c))
                .sum::<usize>()
        };
        out.push(segment(marker, &payload[i..i + n]));
        i += n;
    }
    out
}

/// The same image with its header rearranged in ways decoders must accept: tables after
/// the frame header, in reverse order and one per segment; tables merged into one
/// segment; COM, APP3 and APP15 segments and a DRI of 0 added.
fn header_variants(name: &str, stream: &[u8]) -> Vec<Case> {
    let (segments, rest) = split_segments(stream);
    let is_table = |m: u8| m == 0xDB || m == 0xC4;
    let mut out = Vec::new();
    let assemble = |parts: Vec<Vec<u8>>| {
        let mut s = vec![0xFF, 0xD8];
        for p in parts {
            s.extend_from_slice(&p);
        }
        s.extend_from_slice(&rest);
        s
    };
    // tables last, reversed, one per segment
    let mut parts: Vec<Vec<u8>> = segments
        .iter()
        .filter(|(m, _)| !is_table(*m))
        .map(|(_, s)| s.clone())
        .collect();
    let mut tables: Vec<Vec<u8>> = segments
        .iter()
        .filter(|(m, _)| is_table(*m))
        .flat_map(|(m, s)| split_tables(*m, s))
        .collect();
    tables.reverse();
    parts.extend(tables.clone());
    out.push(assemble(parts));
    // all DQT tables in one segment and all DHT tables in one, before everything
    let mut merged = Vec::new();
    for marker in [0xDB, 0xC4] {
        let payload: Vec<u8> = tables
            .iter()
            .rev()
            .filter(|t| t[1] == marker)
            .flat_map(|t| t[4..].to_vec())
            .collect();
        merged.push(segment(marker, &payload));
    }
    merged.extend(
        segments
            .iter()
            .filter(|(m, _)| !is_table(*m))
            .map(|(_, s)| s.clone()),
    );
    out.push(assemble(merged));
    // extra segments
    let mut extra = vec![segment(0xFE, b"a comment"), segment(0xE3, &[1, 2, 3, 0xFF])];
    extra.extend(segments.iter().map(|(_, s)| s.clone()));
    extra.push(segment(0xEF, b""));
    if segments.iter().all(|(m, _)| *m != 0xDD) {
        extra.push(segment(0xDD, &[0, 0])); // (a DRI of 0 where there are RSTn is not clean)
    }
    out.push(assemble(extra));
    out.into_iter()
        .enumerate()
        .map(|(k, stream)| Case {
            name: format!("{name} header variant {k}"),
            stream,
            clean_baseline: true,
        })
        .collect()
}

#[test]
fn baseline_decoder_matches_zune() {
    let mut cases = fixtures();
    cases.extend(encoded());
    cases.extend(restart_streams());
    let variants: Vec<Case> = cases
        .iter()
        .filter(|c| c.clean_baseline)
        .step_by(7)
        .flat_map(|c| header_variants(&c.name, &c.stream))
        .collect();
    cases.extend(variants);
    let (mut accepted, mut clean) = (0, 0);
    for case in &cases {
        let ok = check(&case.name, &case.stream);
        if case.clean_baseline {
            clean += 1;
            assert!(
                ok,
                "{}: the baseline decoder deferred a clean baseline stream",
                case.name
            );
        }
        accepted += usize::from(ok);
    }
    eprintln!(
        "{} streams, {clean} clean baseline, {accepted} accepted by the baseline decoder",
        cases.len()
    );
    assert!(clean > 1000);

    // BASELINE_MUTATIONS=k runs k times as many (and other ones)
    let scale: usize = std::env::var("BASELINE_MUTATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let (mut mutated, mut mutated_accepted) = (0, 0);
    for (i, case) in cases.iter().enumerate() {
        let n = scale
            * if case.name.starts_with("encode") {
                6
            } else {
                60
            };
        let seed = 0xBA5E + i as u64 + 0x1_0000 * (scale as u64 - 1);
        for (k, m) in mutations(&case.stream, n, seed).iter().enumerate() {
            mutated += 1;
            mutated_accepted += usize::from(check(&format!("{} mutation {k}", case.name), m));
        }
    }
    eprintln!("{mutated} mutated streams, {mutated_accepted} accepted by the baseline decoder");
    assert!(mutated > 5000);
    assert!(mutated_accepted > 500);
}

/// Every sampling-factor byte of a one-component frame header. T.81 ignores the factors in a
/// one-component scan, but zune-jpeg first rejects a horizontal factor that is not a power of
/// two; the baseline decoder must defer those, or the small modules would decode a stream
/// the full decoder refuses (found by `BASELINE_MUTATIONS=10`: a horizontal factor of 3).
#[test]
fn one_component_sampling_factors_match_zune() {
    let gray = encoded()
        .into_iter()
        .find(|c| c.name.contains("gray") && c.clean_baseline)
        .expect("a grayscale encoder stream");
    let sof = gray
        .stream
        .windows(2)
        .position(|w| w == [0xFF, 0xC0])
        .expect("an SOF0 segment");
    // FF C0, length (2), precision, height (2), width (2), component count, id, then H|V
    let factors_at = sof + 2 + 2 + 1 + 2 + 2 + 1 + 1;
    assert_eq!(gray.stream[sof + 9], 1, "one component");
    let mut accepted = 0;
    for hv in 0..=255u8 {
        let mut stream = gray.stream.clone();
        stream[factors_at] = hv;
        accepted += usize::from(check(
            &format!("{} with factors {hv:#04x}", gray.name),
            &stream,
        ));
    }
    // H in {1, 2, 4} and V in 1..=4
    assert_eq!(accepted, 12);
}
