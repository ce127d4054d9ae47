//! Differential test of zune-jpeg's fast scan path (vendor/PATCHES.md, "Fast scan path")
//! against its standard path: every fixture, streams from our encoder (all sampling
//! schemes, `rgb`, grayscale), libjpeg-turbo streams with restart intervals, and
//! mutations of all of them (truncations, bit flips, bytes set to 0xFF/0x00/marker
//! values, restart markers renumbered or dropped).
//!
//! Two levels: (1) zune-jpeg directly, in strict mode: with the fast path the decoder must
//! either give up (`FastScanAbandoned`) or give exactly what the standard path gives (the
//! same pixels; it never reports an error of its own); clean baseline streams must not
//! be given up on, so the fast path is really tested. (2) zarr_jpeg::decode, which falls
//! back by itself: identical pixels or identical error messages with the fast path on
//! and forced off.

mod common;

use std::process::Command;

use common::{config, pattern_image, repo_path, BASELINE_SCHEMES};
use zarr_jpeg::JpegConfig;
use zune_jpeg::errors::DecodeErrors;
use zune_jpeg::zune_core::bytestream::ZCursor;
use zune_jpeg::zune_core::colorspace::ColorSpace;
use zune_jpeg::zune_core::options::DecoderOptions;
use zune_jpeg::JpegDecoder;

/// A stream, whether the fast path must accept it, and how to decode it.
struct Case {
    name: String,
    stream: Vec<u8>,
    clean_baseline: bool,
}

/// zune-jpeg in strict mode, to RGB (or luma for one component), fast path on or off.
fn zune(stream: &[u8], fast: bool) -> Result<Vec<u8>, String> {
    let mut probe = JpegDecoder::new(ZCursor::new(stream));
    let out = match probe.decode_headers() {
        Ok(()) if probe.info().map(|i| i.components) == Some(1) => ColorSpace::Luma,
        _ => ColorSpace::RGB,
    };
    let options = DecoderOptions::default()
        .set_strict_mode(true)
        .set_max_width(4096)
        .set_max_height(4096)
        .jpeg_set_out_colorspace(out);
    let mut decoder = JpegDecoder::new_with_options(ZCursor::new(stream), options);
    decoder.set_fast_scan(fast);
    match decoder.decode() {
        Ok(pixels) => Ok(pixels),
        Err(DecodeErrors::FastScanAbandoned) => Err("ABANDONED".to_string()),
        Err(e) => Err(format!("{e}")),
    }
}

/// The chunk configuration and shape `zarr_jpeg::decode` needs for a stream (from its
/// header; a made-up one when the header does not parse).
fn chunk_for(stream: &[u8]) -> (JpegConfig, Vec<u64>) {
    match zarr_jpeg::markers::read_header(stream) {
        Ok(h) if h.components.len() == 1 => (
            config(r#"{"quality": 90, "encoded_color_space": "grayscale"}"#),
            vec![u64::from(h.height), u64::from(h.width)],
        ),
        Ok(h) => (
            config(
                r#"{"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[2, 2], [1, 1], [1, 1]]}"#,
            ),
            vec![u64::from(h.height), u64::from(h.width), 3],
        ),
        Err(_) => (
            config(
                r#"{"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[2, 2], [1, 1], [1, 1]]}"#,
            ),
            vec![8, 8, 3],
        ),
    }
}

fn codec(stream: &[u8], fast: bool) -> Result<Vec<u8>, String> {
    let (config, shape) = chunk_for(stream);
    zarr_jpeg::decode::set_fast_scan_for_tests(fast);
    let result = zarr_jpeg::decode(&config, stream, &shape).map_err(|e| e.to_string());
    zarr_jpeg::decode::set_fast_scan_for_tests(true);
    result
}

/// Returns whether the fast path accepted the stream.
fn check(name: &str, stream: &[u8]) -> bool {
    let slow = zune(stream, false);
    let fast = zune(stream, true);
    let accepted = match &fast {
        Err(e) if e == "ABANDONED" => false,
        _ => {
            assert!(
                fast == slow,
                "{name}: the fast path gave {} but the standard path {}",
                describe(&fast),
                describe(&slow)
            );
            true
        }
    };
    let on = codec(stream, true);
    let off = codec(stream, false);
    assert!(
        on == off,
        "{name}: zarr_jpeg::decode gave {} with the fast path and {} without",
        describe(&on),
        describe(&off)
    );
    accepted
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
        let clean_baseline = !name.starts_with("reject_") && !name.contains("progressive");
        out.push(Case {
            name,
            stream,
            clean_baseline,
        });
    }
    out
}

fn encoded() -> Vec<Case> {
    let mut out = Vec::new();
    let sizes = [(1, 1), (7, 13), (17, 33), (61, 47), (64, 48)];
    for (i, &(h, w)) in sizes.iter().enumerate() {
        for pattern in [0, 6, 7, 8] {
            for quality in [10, 90, 100] {
                let mut configs: Vec<(String, String, usize)> = BASELINE_SCHEMES
                    .iter()
                    .map(|&(fh, fv)| {
                        (
                            format!("ycbcr{fh}x{fv}"),
                            format!(
                                r#"{{"quality": {quality}, "encoded_color_space": "ycbcr", "subsampling": [[{fh}, {fv}], [1, 1], [1, 1]]}}"#
                            ),
                            3,
                        )
                    })
                    .collect();
                configs.push((
                    "rgb".into(),
                    format!(r#"{{"quality": {quality}, "encoded_color_space": "rgb"}}"#),
                    3,
                ));
                configs.push((
                    "gray".into(),
                    format!(r#"{{"quality": {quality}, "encoded_color_space": "grayscale"}}"#),
                    1,
                ));
                for (label, json, c) in configs {
                    let samples = pattern_image(pattern, h, w, c, (i * 31 + pattern) as u64);
                    let shape: Vec<u64> = if c == 1 {
                        vec![h as u64, w as u64]
                    } else {
                        vec![h as u64, w as u64, c as u64]
                    };
                    let stream = zarr_jpeg::encode(&config(&json), &samples, &shape).unwrap();
                    out.push(Case {
                        name: format!("encode {label} q{quality} {h}x{w} pattern {pattern}"),
                        stream,
                        clean_baseline: true,
                    });
                }
            }
        }
    }
    out
}

/// libjpeg-turbo's `cjpeg` with restart intervals (in MCU rows and in MCUs).
fn restart_streams() -> Vec<Case> {
    let mut out = Vec::new();
    let dir = std::env::temp_dir().join(format!("zarr-jpeg-fast-scan-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (h, w) in [(61, 47), (40, 130), (16, 16)] {
        for (c, sample) in [(3, "2x2"), (3, "1x1"), (3, "2x1"), (1, "1x1")] {
            let samples = pattern_image(6, h, w, c, 7);
            let mut ppm = format!("P{}\n{w} {h}\n255\n", if c == 1 { 5 } else { 6 }).into_bytes();
            ppm.extend_from_slice(&samples);
            let input = dir.join("in.pnm");
            std::fs::write(&input, &ppm).unwrap();
            for restart in ["1", "2", "1B", "3B", "7B"] {
                for quality in ["50", "95"] {
                    let output = Command::new("cjpeg")
                        .args(["-quality", quality, "-sample", sample, "-restart", restart])
                        .arg(&input)
                        .output()
                        .expect(
                            "cjpeg (libjpeg-turbo) is needed: apt-get install libjpeg-turbo-progs",
                        );
                    assert!(output.status.success(), "cjpeg failed");
                    out.push(Case {
                        name: format!(
                            "cjpeg -restart {restart} -sample {sample} q{quality} {h}x{w} c{c}"
                        ),
                        stream: output.stdout,
                        clean_baseline: true,
                    });
                }
            }
        }
    }
    std::fs::remove_dir_all(&dir).ok();
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

#[test]
fn fast_scan_matches_the_standard_path() {
    let mut cases = fixtures();
    cases.extend(encoded());
    cases.extend(restart_streams());
    let (mut accepted, mut clean) = (0, 0);
    for case in &cases {
        let ok = check(&case.name, &case.stream);
        if case.clean_baseline {
            clean += 1;
            assert!(
                ok,
                "{}: the fast path gave up on a clean baseline stream",
                case.name
            );
        }
        accepted += usize::from(ok);
    }
    eprintln!(
        "{} streams, {clean} clean baseline, {accepted} not given up on by the fast path",
        cases.len()
    );
    assert!(clean > 600);

    // mutations: more of each fixture and restart stream, fewer of each encoded one;
    // FAST_SCAN_MUTATIONS=k runs k times as many (and other ones)
    let scale: usize = std::env::var("FAST_SCAN_MUTATIONS")
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
        let seed = 0x5EED + i as u64 + 0x1_0000 * (scale as u64 - 1);
        for (k, m) in mutations(&case.stream, n, seed).iter().enumerate() {
            mutated += 1;
            mutated_accepted += usize::from(check(&format!("{} mutation {k}", case.name), m));
        }
    }
    eprintln!("{mutated} mutated streams, {mutated_accepted} not given up on by the fast path");
    assert!(mutated > 5000);
}
