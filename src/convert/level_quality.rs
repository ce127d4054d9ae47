//! The quality each level 1+ of a JPEG-tiled TIFF is re-encoded at. Level 0 is the tiles
//! (copied); a level above is the exact 2×2 averages of the one below, and re-encoding them
//! at the tiles' own quality makes derived levels look worse than the level they come from
//! (a slide copied at Q30: 28 dB at level 1, less further up, where each pixel holds more
//! detail). So each level gets the lowest quality, from the tiles' own up, at which a sample
//! of it is at least a target PSNR (default 30 dB) from its exact averages: the sample is
//! the averages of tiles spread over the page, stacked into one image and encoded as the
//! level's chunks are. `bench/level-quality.py` prints what that gives.

use crate::{JpegConfig, ConfigValue as V};

/// Tiles decoded for the sample: at most this many, spread evenly over the page.
pub const SAMPLE_TILES: usize = 48;
/// The smallest side a tile's averages keep in the sample: levels whose share of a tile
/// would be smaller reuse the last quality found (their chunks are few and small).
const MIN_SIDE: usize = 16;

/// The qualities of levels 1..levels: `tiles` are the sample's decoded tiles (`th × tw`
/// pixels of `channels` samples), `config` level 1+'s configuration (its quality aside),
/// `start` the lowest quality to try (the tiles' own), `target` the PSNR in dB.
pub fn level_qualities(tiles: &[Vec<u8>], (th, tw): (usize, usize), channels: usize, config: &JpegConfig, start: u8, target: f64, levels: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(levels);
    let mut level: Vec<Vec<u8>> = tiles.to_vec();
    let (mut h, mut w) = (th, tw);
    for _ in 0..levels {
        let fits = h / 2 >= MIN_SIDE && w / 2 >= MIN_SIDE && !level.is_empty();
        if !fits {
            let last = out.last().copied().unwrap_or(start);
            out.push(last);
            continue;
        }
        level = level.iter().map(|t| halve(t, h, w, channels)).collect();
        (h, w) = (h.div_ceil(2), w.div_ceil(2));
        let mosaic: Vec<u8> = level.concat();
        let shape: Vec<u64> = if channels == 3 { vec![(h * level.len()) as u64, w as u64, 3] } else { vec![(h * level.len()) as u64, w as u64] };
        out.push(lowest_quality(&mosaic, &shape, config, start, target));
    }
    out
}

/// The lowest quality in start..=100 whose encode of `samples` is ≥ `target` dB from them
/// (100 if none is): a binary search, PSNR growing with quality.
fn lowest_quality(samples: &[u8], shape: &[u64], config: &JpegConfig, start: u8, target: f64) -> u8 {
    let meets = |q: u8| psnr_at(samples, shape, config, q).is_some_and(|db| db >= target);
    if meets(start) {
        return start;
    }
    let (mut low, mut high) = (start, 100u8); // low fails; high is the answer if nothing lower is
    while high - low > 1 {
        let mid = low + (high - low) / 2;
        if meets(mid) {
            high = mid;
        } else {
            low = mid;
        }
    }
    high
}

fn psnr_at(samples: &[u8], shape: &[u64], config: &JpegConfig, quality: u8) -> Option<f64> {
    let config = with_quality(config, quality)?;
    let stream = crate::encode(&config, samples, shape).ok()?;
    let decoded = crate::decode(&config, &stream, shape).ok()?;
    let sum: u64 = samples.iter().zip(&decoded).map(|(&a, &b)| (i32::from(a) - i32::from(b)).pow(2) as u64).sum();
    let mse = sum as f64 / samples.len() as f64;
    Some(if mse == 0.0 { f64::INFINITY } else { 10.0 * (255.0f64 * 255.0 / mse).log10() })
}

/// `config` at another quality.
pub fn with_quality(config: &JpegConfig, quality: u8) -> Option<JpegConfig> {
    let V::Object(members) = config.to_value() else { return None };
    let members = members.into_iter().map(|(k, v)| if k == "quality" { (k, V::Number(quality.into())) } else { (k, v) }).collect();
    JpegConfig::parse(&V::Object(members)).ok()
}

/// One level up: the rounded mean of each 2×2 block (edges: of what exists), as the
/// pyramid builder makes it.
fn halve(samples: &[u8], h: usize, w: usize, c: usize) -> Vec<u8> {
    let (oh, ow) = (h.div_ceil(2), w.div_ceil(2));
    let mut out = vec![0u8; oh * ow * c];
    for y in 0..oh {
        for x in 0..ow {
            for k in 0..c {
                let (mut sum, mut n) = (0u32, 0u32);
                for yy in 2 * y..(2 * y + 2).min(h) {
                    for xx in 2 * x..(2 * x + 2).min(w) {
                        sum += u32::from(samples[(yy * w + xx) * c + k]);
                        n += 1;
                    }
                }
                out[(y * ow + x) * c + k] = ((sum + n / 2) / n) as u8;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gray(q: u8) -> JpegConfig {
        JpegConfig::parse(&V::Object(vec![
            ("quality".into(), V::Number(q.into())),
            ("encoded_color_space".into(), V::String("grayscale".into())),
        ]))
        .unwrap()
    }

    /// A detailed tile: a pattern JPEG at low quality keeps badly.
    fn tile(n: usize, seed: u32) -> Vec<u8> {
        let mut s = seed;
        (0..n * n)
            .map(|i| {
                s = s.wrapping_mul(1_103_515_245).wrapping_add(12345);
                let (x, y) = (i % n, i / n);
                (((x * 5 + y * 3) % 64) as u32 * 2 + (s >> 27)) as u8
            })
            .collect()
    }

    #[test]
    fn halving_rounds_the_mean_of_what_exists() {
        assert_eq!(halve(&[0, 2, 10, 4, 6, 20, 100, 101, 255], 3, 3, 1), vec![3, 15, 101, 255]);
    }

    #[test]
    fn each_level_gets_the_lowest_quality_that_meets_the_target() {
        let tiles: Vec<Vec<u8>> = (0..4).map(|k| tile(256, k)).collect();
        let qualities = level_qualities(&tiles, (256, 256), 1, &gray(30), 30, 30.0, 6);
        assert_eq!(qualities.len(), 6);
        assert!(qualities.iter().all(|&q| (30..=100).contains(&q)), "{qualities:?}");
        // levels 1–4 searched (sides 128 … 16); 5 and 6 reuse level 4's
        assert_eq!(qualities[4], qualities[3]);
        assert_eq!(qualities[5], qualities[3]);
        let mut level = tiles.clone();
        let mut side = 256;
        for &q in &qualities[..4] {
            level = level.iter().map(|t| halve(t, side, side, 1)).collect();
            side /= 2;
            let mosaic = level.concat();
            let shape = [(side * level.len()) as u64, side as u64];
            let at = |q: u8| psnr_at(&mosaic, &shape, &gray(30), q).unwrap();
            assert!(at(q) >= 30.0 || q == 100, "quality {q}: {} dB", at(q));
            if q > 30 {
                assert!(at(q - 1) < 30.0, "quality {} would do: {} dB", q - 1, at(q - 1));
            }
        }
    }

    #[test]
    fn a_target_met_at_the_tiles_quality_keeps_it() {
        let flat = vec![vec![128u8; 64 * 64]];
        assert_eq!(level_qualities(&flat, (64, 64), 1, &gray(40), 40, 30.0, 2), vec![40, 40]);
    }
}
