//! The converter on damaged files, without a fuzzer (cargo-fuzz needs a nightly toolchain;
//! `npm run fuzz` runs the `convert` target where there is one): TIFFs and PNGs written by
//! libvips (JPEG tiles, LZW, Deflate, uncompressed strips, several pyramids) and cut short,
//! with bytes changed, and with 32-bit fields set to 0xFFFFFFFF, 2³¹ and 0. Every one is
//! converted or refused with an error; none panics, and none takes long.
#![cfg(all(not(target_arch = "wasm32"), feature = "converter"))]

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use zarr_jpeg::convert::{Conversion, ConvertOptions, MemoryStore, Quiet};
use zarr_jpeg::ConfigValue;

/// Seeds written by libvips from a generated image (None where vips is not installed).
fn seeds(dir: &Path) -> Option<Vec<(String, Vec<u8>)>> {
    let source = dir.join("source.png");
    if !Command::new("vips").arg("--version").output().ok()?.status.success() {
        return None;
    }
    // (a 120 × 100 image of ramps, 3 bands)
    let run = |args: &[&str]| Command::new("vips").args(args).status().map(|s| s.success()).unwrap_or(false);
    let xyz = dir.join("xyz.v");
    let textured = dir.join("textured.v");
    assert!(run(&["xyz", xyz.to_str()?, "120", "100"]));
    assert!(run(&["linear", xyz.to_str()?, textured.to_str()?, "1.7", "3", "--uchar"]));
    assert!(run(&["bandjoin_const", textured.to_str()?, dir.join("rgb.v").to_str()?, "90"]));
    assert!(run(&["copy", dir.join("rgb.v").to_str()?, source.to_str()?]));
    let rgb = dir.join("rgb.v");
    let rgb = rgb.to_str()?;
    let mut out = vec![("png".to_string(), std::fs::read(&source).ok()?)];
    for (name, args) in [
        ("jpeg-tiles.tif", vec!["--compression", "jpeg", "--tile", "--tile-width", "32", "--tile-height", "32"]),
        ("jpeg-pyramid.tif", vec!["--compression", "jpeg", "--tile", "--pyramid", "--tile-width", "32", "--tile-height", "32", "--bigtiff"]),
        ("lzw-tiles.tif", vec!["--compression", "lzw", "--tile", "--tile-width", "32", "--tile-height", "32", "--predictor", "horizontal"]),
        ("deflate-strips.tif", vec!["--compression", "deflate"]),
        ("plain.tif", vec![]),
    ] {
        let file = dir.join(name);
        let mut all = vec!["tiffsave", rgb, file.to_str()?];
        all.extend(args);
        assert!(run(&all), "vips tiffsave {name}");
        out.push((name.to_string(), std::fs::read(&file).ok()?));
    }
    Some(out)
}

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

fn mutate(seed: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut bytes = seed.to_vec();
    for _ in 0..1 + rng.below(4) {
        match rng.below(5) {
            0 => {
                let at = rng.below(bytes.len());
                bytes[at] = rng.next() as u8;
            }
            1 => {
                let keep = rng.below(bytes.len());
                bytes.truncate(keep.max(8));
            }
            2 | 3 if bytes.len() > 4 => {
                // a 32-bit field, in the header and IFDs most often (the first few hundred bytes, or any)
                let limit = if rng.below(2) == 0 { bytes.len().min(512) } else { bytes.len() };
                let at = rng.below(limit - 4);
                let value: [u8; 4] = match rng.below(3) {
                    0 => [0xff; 4],
                    1 => [0, 0, 0, 0x80],
                    _ => [0; 4],
                };
                bytes[at..at + 4].copy_from_slice(&value);
            }
            _ => {
                let at = rng.below(bytes.len());
                let n = rng.below(64).min(bytes.len() - at);
                bytes.drain(at..at + n);
            }
        }
    }
    bytes
}

#[test]
fn damaged_tiffs_and_pngs_are_converted_or_refused_never_a_panic() {
    let dir = std::env::temp_dir().join(format!("zarr-jpeg-mutations-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let Some(seeds) = seeds(&dir) else {
        eprintln!("skipped: libvips (vips) is not installed");
        return;
    };
    let options = ConvertOptions::parse(&ConfigValue::Object(vec![
        ("levels".into(), ConfigValue::Number(2.0)),
        ("workers".into(), ConfigValue::Number(0.0)),
    ]))
    .unwrap();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut converted, mut refused) = (0, 0);
    for (name, seed) in &seeds {
        // the seed itself converts
        let conversion = Conversion::open(seed, name, &options).unwrap_or_else(|e| panic!("{name}: {}", e.message()));
        conversion.run(&mut MemoryStore::default(), &mut Quiet, "out.zarr").unwrap_or_else(|e| panic!("{name}: {}", e.message()));
        for round in 0..400 {
            let bytes = mutate(seed, &mut rng);
            let started = Instant::now();
            let result = Conversion::open(&bytes, name, &options).and_then(|c| c.run(&mut MemoryStore::default(), &mut Quiet, "out.zarr"));
            match result {
                Ok(_) => converted += 1,
                Err(e) => {
                    assert!(!e.message().is_empty(), "{name} round {round}: an error without a message");
                    refused += 1;
                }
            }
            assert!(started.elapsed() < Duration::from_secs(5), "{name} round {round}: {:?}", started.elapsed());
        }
    }
    std::fs::remove_dir_all(&dir).ok();
    assert!(converted > 0 && refused > 0, "{converted} converted, {refused} refused");
}
