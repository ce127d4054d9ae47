//! Helpers shared by the native test suites: sample images, configurations from JSON,
//! libjpeg-turbo's `djpeg` as the independent reference decoder, and error metrics.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use zarr_jpeg::{ConfigValue, JpegConfig};

/// The luma sampling factors of every scheme a baseline JPEG can carry (chroma [1, 1]):
/// what the codec must encode and decode. Written out here, independent of
/// `SUPPORTED_LUMA_FACTORS` in src/config.rs, so the tests state the expectation.
pub const BASELINE_SCHEMES: [(u8, u8); 8] = [
    (1, 1),
    (2, 1),
    (1, 2),
    (2, 2),
    (4, 1),
    (1, 4),
    (4, 2),
    (2, 4),
];

/// Every colour mode the encoder writes, at `quality`: (label, configuration JSON,
/// components) for the eight `BASELINE_SCHEMES` as `ycbcr{h}x{v}`, then `rgb` and `gray`.
pub fn encoder_configs(quality: impl std::fmt::Display) -> Vec<(String, String, usize)> {
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
    configs
}

/// `BASELINE_SCHEMES` as the vendored jpeg-encoder names them, in the same order.
#[cfg(feature = "encoder")]
pub const ENCODER_SAMPLING_FACTORS: [jpeg_encoder::SamplingFactor; 8] = {
    use jpeg_encoder::SamplingFactor::*;
    [F_1_1, F_2_1, F_1_2, F_2_2, F_4_1, F_1_4, F_4_2, F_2_4]
};

/// Every input colour type of the vendored jpeg-encoder, with its bytes per pixel.
#[cfg(feature = "encoder")]
pub const ENCODER_COLOUR_TYPES: [(jpeg_encoder::ColorType, usize); 9] = {
    use jpeg_encoder::ColorType::*;
    [
        (Luma, 1),
        (Rgb, 3),
        (Rgba, 4),
        (Bgr, 3),
        (Bgra, 4),
        (Ycbcr, 3),
        (Cmyk, 4),
        (CmykAsYcck, 4),
        (Ycck, 4),
    ]
};

pub fn repo_path(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// An image as C-order samples.
#[derive(Debug, Clone)]
pub struct Image {
    pub height: usize,
    pub width: usize,
    pub components: usize,
    pub samples: Vec<u8>,
}

impl Image {
    pub fn shape(&self) -> Vec<u64> {
        if self.components == 1 {
            vec![self.height as u64, self.width as u64]
        } else {
            vec![
                self.height as u64,
                self.width as u64,
                self.components as u64,
            ]
        }
    }

    /// A crop; sizes that run past the edge repeat the image (tiling).
    pub fn tile(&self, height: usize, width: usize, top: usize, left: usize) -> Image {
        let c = self.components;
        let mut samples = Vec::with_capacity(height * width * c);
        for y in 0..height {
            let sy = (top + y) % self.height;
            for x in 0..width {
                let sx = (left + x) % self.width;
                let at = (sy * self.width + sx) * c;
                samples.extend_from_slice(&self.samples[at..at + c]);
            }
        }
        Image {
            height,
            width,
            components: c,
            samples,
        }
    }
}

/// Reads an 8-bit grayscale or RGB PNG (RGBA drops alpha).
pub fn load_png(rel: &str) -> Image {
    let file = std::fs::File::open(repo_path(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let mut decoder = png::Decoder::new(std::io::BufReader::new(file));
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    buf.truncate(info.buffer_size());
    let (height, width) = (info.height as usize, info.width as usize);
    let (components, samples) = match info.color_type {
        png::ColorType::Grayscale => (1, buf),
        png::ColorType::GrayscaleAlpha => (1, buf.chunks_exact(2).map(|p| p[0]).collect()),
        png::ColorType::Rgb => (3, buf),
        png::ColorType::Rgba => (
            3,
            buf.chunks_exact(4)
                .flat_map(|p| [p[0], p[1], p[2]])
                .collect(),
        ),
        other => panic!("{rel}: unexpected PNG colour type {other:?}"),
    };
    Image {
        height,
        width,
        components,
        samples,
    }
}

/// The colour sample image (scikit-image's ihc.png, 512×512 RGB).
pub fn ihc() -> Image {
    load_png("samples/ihc.png")
}

/// The grayscale sample image (scikit-image's cell.png).
pub fn cell() -> Image {
    load_png("samples/cell.png")
}

pub fn config_value(json: &str) -> ConfigValue {
    serde_json::from_str(json).unwrap_or_else(|e| panic!("bad test JSON {json}: {e}"))
}

pub fn config(json: &str) -> JpegConfig {
    JpegConfig::parse(&config_value(json)).unwrap_or_else(|e| panic!("{json}: {e}"))
}

/// Decodes a JPEG stream with libjpeg-turbo's `djpeg` (default settings: islow IDCT,
/// fancy upsampling, colour space from the markers) into an image.
pub fn djpeg(stream: &[u8]) -> Image {
    parse_pnm(&libjpeg_turbo("djpeg", &["-pnm"], stream, "jpg"))
}

/// Encodes `image` with libjpeg-turbo's `cjpeg` and the given arguments (the input goes
/// last, as a binary PGM or PPM): the twin of `djpeg`, for streams from an independent
/// encoder.
pub fn cjpeg(image: &Image, args: &[&str]) -> Vec<u8> {
    let magic = if image.components == 1 { "P5" } else { "P6" };
    let mut pnm = format!("{magic}\n{} {}\n255\n", image.width, image.height).into_bytes();
    pnm.extend_from_slice(&image.samples);
    libjpeg_turbo("cjpeg", args, &pnm, "pnm")
}

/// Runs one of libjpeg-turbo's programs with `args` and `input` written to a scratch file
/// (named `*.{extension}`, given last), and returns what it printed; a failure fails the test.
fn libjpeg_turbo(program: &str, args: &[&str], input: &[u8], extension: &str) -> Vec<u8> {
    let dir = std::env::temp_dir().join(format!("zarr-jpeg-{program}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let file = dir.join(format!("{n}.{extension}"));
    std::fs::write(&file, input).unwrap();
    let output = Command::new(program)
        .args(args)
        .arg(&file)
        .output()
        .unwrap_or_else(|e| panic!("{program} (libjpeg-turbo) is needed for interoperability tests: apt-get install libjpeg-turbo-progs, or run `npm run setup` ({e})"));
    std::fs::remove_file(&file).ok();
    assert!(
        output.status.success(),
        "{program} {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output.stdout
}

static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Binary PGM (P5) or PPM (P6) with maxval 255.
pub fn parse_pnm(bytes: &[u8]) -> Image {
    let mut fields = Vec::new();
    let mut pos = 0;
    while fields.len() < 4 {
        while bytes[pos].is_ascii_whitespace() {
            pos += 1;
        }
        if bytes[pos] == b'#' {
            while bytes[pos] != b'\n' {
                pos += 1;
            }
            continue;
        }
        let start = pos;
        while !bytes[pos].is_ascii_whitespace() {
            pos += 1;
        }
        fields.push(String::from_utf8(bytes[start..pos].to_vec()).unwrap());
    }
    pos += 1;
    let components = match fields[0].as_str() {
        "P5" => 1,
        "P6" => 3,
        other => panic!("unexpected PNM type {other}"),
    };
    assert_eq!(fields[3], "255");
    let width: usize = fields[1].parse().unwrap();
    let height: usize = fields[2].parse().unwrap();
    let samples = bytes[pos..pos + width * height * components].to_vec();
    Image {
        height,
        width,
        components,
        samples,
    }
}

pub fn read_pnm_file(rel: &str) -> Image {
    parse_pnm(&std::fs::read(repo_path(rel)).unwrap())
}

pub fn max_abs_diff(a: &[u8], b: &[u8]) -> u8 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| x.abs_diff(*y))
        .max()
        .unwrap_or(0)
}

pub fn mean_abs_diff(a: &[u8], b: &[u8]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| f64::from(x.abs_diff(*y)))
        .sum::<f64>()
        / a.len() as f64
}

/// Peak signal-to-noise ratio in dB (infinite for identical inputs).
pub fn psnr(a: &[u8], b: &[u8]) -> f64 {
    assert_eq!(a.len(), b.len());
    let mse = a
        .iter()
        .zip(b)
        .map(|(x, y)| (f64::from(*x) - f64::from(*y)).powi(2))
        .sum::<f64>()
        / a.len() as f64;
    if mse == 0.0 {
        f64::INFINITY
    } else {
        10.0 * (255.0f64 * 255.0 / mse).log10()
    }
}

/// Deterministic pseudo-random bytes (xorshift) for synthetic chunks.
pub fn noise(len: usize, seed: u64) -> Vec<u8> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect()
}

/// Numerical Recipes' LCG, high bits: the noise of `pattern_image`.
struct Lcg(u64);

impl Lcg {
    fn byte(&mut self) -> u8 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 56) as u8
    }
}

/// 1000 · cos(mπ/16), m = 0..31, rounded (integers, so every platform draws the same).
const COS: [i64; 32] = [
    1000, 981, 924, 831, 707, 556, 383, 195, 0, -195, -383, -556, -707, -831, -924, -981, -1000,
    -981, -924, -831, -707, -556, -383, -195, 0, 195, 383, 556, 707, 831, 924, 981,
];

/// A chunk of `pattern_image` samples (seeded by its size) and its shape: (H, W) for one
/// channel, (H, W, 3) for three.
pub fn pattern_chunk(
    pattern: usize,
    height: usize,
    width: usize,
    channels: usize,
) -> (Vec<u8>, Vec<u64>) {
    let data = pattern_image(
        pattern,
        height,
        width,
        channels,
        (height * 1000 + width) as u64,
    );
    let mut shape = vec![height as u64, width as u64];
    if channels == 3 {
        shape.push(3);
    }
    (data, shape)
}

/// Number of patterns `pattern_image` draws.
pub const PATTERNS: usize = 9;

/// Synthetic samples that reach the encoder's corner cases: 0 noise (dense blocks), 1 and
/// 2 flat 0 and 255 (no AC coefficients), 3 checkerboard, 4 vertical and 5 horizontal
/// stripes, 6 a gradient, and DCT basis functions, one `(u, v)` per 8×8 block, which leave
/// a single AC coefficient anywhere from zig-zag position 1 to 63 (long zero runs, and
/// position 63 itself: a block without EOB), 7 at full amplitude, 8 faint.
pub fn pattern_image(
    pattern: usize,
    height: usize,
    width: usize,
    channels: usize,
    seed: u64,
) -> Vec<u8> {
    let mut rng = Lcg(seed);
    let mut data = Vec::with_capacity(height * width * channels);
    for y in 0..height {
        for x in 0..width {
            for c in 0..channels {
                data.push(match pattern {
                    0 => rng.byte(),
                    1 => 0,
                    2 => 255,
                    3 => {
                        if (x + y + c) % 2 == 0 {
                            0
                        } else {
                            255
                        }
                    }
                    4 => {
                        if (x / (c + 1)) % 2 == 0 {
                            255
                        } else {
                            0
                        }
                    }
                    5 => {
                        if y % 2 == 0 {
                            0
                        } else {
                            255
                        }
                    }
                    6 => ((x * 255) / width.max(1)) as u8 ^ ((y * 97) as u8),
                    _ => {
                        let (bx, by) = (x / 8, y / 8);
                        let u = (bx + c) % 8;
                        let v = (by + bx / 8) % 8;
                        let amplitude = if pattern == 7 { 127 } else { 12 };
                        let f = |n: usize, k: usize| COS[((2 * (n % 8) + 1) * k) % 32];
                        (128 + amplitude * f(x, u) * f(y, v) / 1_000_000).clamp(0, 255) as u8
                    }
                });
            }
        }
    }
    data
}

/// Every fixture in tests/fixtures, embedded (for the wasm tests, which cannot read files):
/// (file name, bytes). Baseline, progressive, restart-interval and odd-layout streams alike.
pub const FIXTURES: &[(&str, &[u8])] = &[
    (
        "gray_optimize_q90_cjpeg_61x47.jpg",
        include_bytes!("../fixtures/gray_optimize_q90_cjpeg_61x47.jpg"),
    ),
    (
        "gray_progressive_q90_cjpeg_61x47.jpg",
        include_bytes!("../fixtures/gray_progressive_q90_cjpeg_61x47.jpg"),
    ),
    (
        "gray_q90_cjpeg_61x47.jpg",
        include_bytes!("../fixtures/gray_q90_cjpeg_61x47.jpg"),
    ),
    (
        "gray_q90_pil_1x1.jpg",
        include_bytes!("../fixtures/gray_q90_pil_1x1.jpg"),
    ),
    (
        "gray_q90_pil_61x47.jpg",
        include_bytes!("../fixtures/gray_q90_pil_61x47.jpg"),
    ),
    (
        "gray_q90_pil_64x64.jpg",
        include_bytes!("../fixtures/gray_q90_pil_64x64.jpg"),
    ),
    (
        "gray_q90_pil_7x13.jpg",
        include_bytes!("../fixtures/gray_q90_pil_7x13.jpg"),
    ),
    (
        "gray_restart3blocks_q90_cjpeg_61x47.jpg",
        include_bytes!("../fixtures/gray_restart3blocks_q90_cjpeg_61x47.jpg"),
    ),
    (
        "gray_sample2x2_q90_cjpeg_61x47.jpg",
        include_bytes!("../fixtures/gray_sample2x2_q90_cjpeg_61x47.jpg"),
    ),
    (
        "reject_arithmetic_progressive_gray_cjpeg_61x47.jpg",
        include_bytes!("../fixtures/reject_arithmetic_progressive_gray_cjpeg_61x47.jpg"),
    ),
    (
        "reject_arithmetic_ycc420_cjpeg_61x47.jpg",
        include_bytes!("../fixtures/reject_arithmetic_ycc420_cjpeg_61x47.jpg"),
    ),
    (
        "reject_cmyk_q90_pil_61x47.jpg",
        include_bytes!("../fixtures/reject_cmyk_q90_pil_61x47.jpg"),
    ),
    (
        "reject_lossless_gray_libjpegtools_61x47.jpg",
        include_bytes!("../fixtures/reject_lossless_gray_libjpegtools_61x47.jpg"),
    ),
    (
        "rgb_keeprgb_q90_pil_61x47.jpg",
        include_bytes!("../fixtures/rgb_keeprgb_q90_pil_61x47.jpg"),
    ),
    (
        "rgb_q90_cjpeg_61x47.jpg",
        include_bytes!("../fixtures/rgb_q90_cjpeg_61x47.jpg"),
    ),
    (
        "rgb_q90_cjpeg_64x64.jpg",
        include_bytes!("../fixtures/rgb_q90_cjpeg_64x64.jpg"),
    ),
    (
        "ycc411_q90_cjpeg_61x47.jpg",
        include_bytes!("../fixtures/ycc411_q90_cjpeg_61x47.jpg"),
    ),
    (
        "ycc411_q90_cjpeg_64x64.jpg",
        include_bytes!("../fixtures/ycc411_q90_cjpeg_64x64.jpg"),
    ),
    (
        "ycc420_optimize_q90_cjpeg_61x47.jpg",
        include_bytes!("../fixtures/ycc420_optimize_q90_cjpeg_61x47.jpg"),
    ),
    (
        "ycc420_progressive_q90_cjpeg_61x47.jpg",
        include_bytes!("../fixtures/ycc420_progressive_q90_cjpeg_61x47.jpg"),
    ),
    (
        "ycc420_progressive_q90_pil_61x47.jpg",
        include_bytes!("../fixtures/ycc420_progressive_q90_pil_61x47.jpg"),
    ),
    (
        "ycc420_q90_cjpeg_17x33.jpg",
        include_bytes!("../fixtures/ycc420_q90_cjpeg_17x33.jpg"),
    ),
    (
        "ycc420_q90_cjpeg_61x47.jpg",
        include_bytes!("../fixtures/ycc420_q90_cjpeg_61x47.jpg"),
    ),
    (
        "ycc420_q90_pil_17x33.jpg",
        include_bytes!("../fixtures/ycc420_q90_pil_17x33.jpg"),
    ),
    (
        "ycc420_q90_pil_1x1.jpg",
        include_bytes!("../fixtures/ycc420_q90_pil_1x1.jpg"),
    ),
    (
        "ycc420_q90_pil_61x47.jpg",
        include_bytes!("../fixtures/ycc420_q90_pil_61x47.jpg"),
    ),
    (
        "ycc420_q90_pil_64x64.jpg",
        include_bytes!("../fixtures/ycc420_q90_pil_64x64.jpg"),
    ),
    (
        "ycc420_q90_pil_7x13.jpg",
        include_bytes!("../fixtures/ycc420_q90_pil_7x13.jpg"),
    ),
    (
        "ycc420_restart1row_q90_cjpeg_61x47.jpg",
        include_bytes!("../fixtures/ycc420_restart1row_q90_cjpeg_61x47.jpg"),
    ),
    (
        "ycc420_restart3blocks_q90_cjpeg_61x47.jpg",
        include_bytes!("../fixtures/ycc420_restart3blocks_q90_cjpeg_61x47.jpg"),
    ),
    (
        "ycc420_sof1_q5_cjpeg_61x47.jpg",
        include_bytes!("../fixtures/ycc420_sof1_q5_cjpeg_61x47.jpg"),
    ),
    (
        "ycc422_q90_cjpeg_61x47.jpg",
        include_bytes!("../fixtures/ycc422_q90_cjpeg_61x47.jpg"),
    ),
    (
        "ycc422_q90_pil_61x47.jpg",
        include_bytes!("../fixtures/ycc422_q90_pil_61x47.jpg"),
    ),
    (
        "ycc440_q90_cjpeg_61x47.jpg",
        include_bytes!("../fixtures/ycc440_q90_cjpeg_61x47.jpg"),
    ),
    (
        "ycc444_q90_cjpeg_61x47.jpg",
        include_bytes!("../fixtures/ycc444_q90_cjpeg_61x47.jpg"),
    ),
    (
        "ycc444_q90_pil_61x47.jpg",
        include_bytes!("../fixtures/ycc444_q90_pil_61x47.jpg"),
    ),
    (
        "ycc444_q90_pil_64x64.jpg",
        include_bytes!("../fixtures/ycc444_q90_pil_64x64.jpg"),
    ),
    (
        "ycc_cb2x2_q90_cjpeg_61x47.jpg",
        include_bytes!("../fixtures/ycc_cb2x2_q90_cjpeg_61x47.jpg"),
    ),
    (
        "ycc_y1x4_q90_cjpeg_61x47.jpg",
        include_bytes!("../fixtures/ycc_y1x4_q90_cjpeg_61x47.jpg"),
    ),
    (
        "ycc_y1x4_q90_cjpeg_64x64.jpg",
        include_bytes!("../fixtures/ycc_y1x4_q90_cjpeg_64x64.jpg"),
    ),
    (
        "ycc_y2x4_q90_cjpeg_61x47.jpg",
        include_bytes!("../fixtures/ycc_y2x4_q90_cjpeg_61x47.jpg"),
    ),
    (
        "ycc_y2x4_q90_cjpeg_64x64.jpg",
        include_bytes!("../fixtures/ycc_y2x4_q90_cjpeg_64x64.jpg"),
    ),
    (
        "ycc_y3x1_q90_cjpeg_61x47.jpg",
        include_bytes!("../fixtures/ycc_y3x1_q90_cjpeg_61x47.jpg"),
    ),
    (
        "ycc_y4x2_q90_cjpeg_61x47.jpg",
        include_bytes!("../fixtures/ycc_y4x2_q90_cjpeg_61x47.jpg"),
    ),
    (
        "ycc_y4x2_q90_cjpeg_64x64.jpg",
        include_bytes!("../fixtures/ycc_y4x2_q90_cjpeg_64x64.jpg"),
    ),
];

/// The qualities of a rate–distortion curve, in the order of its points: 50–95 in steps of 5.
pub fn rd_qualities() -> impl Iterator<Item = u32> {
    (50..=95).step_by(5)
}

/// A rate–distortion curve of `image` encoded with `options` at q 50–95 in steps of 5
/// (`json` holds the configuration with `QQ` for the quality): (PSNR on djpeg's decode,
/// bytes) per quality.
#[cfg(feature = "encoder")]
pub fn rd_curve(image: &Image, json: &str, options: &zarr_jpeg::EncodeOptions) -> Vec<(f64, f64)> {
    rd_qualities()
        .map(|q| {
            let cfg = config(&json.replace("QQ", &q.to_string()));
            let stream = zarr_jpeg::encode_from_with_options(
                &cfg,
                &image.samples.as_slice(),
                &image.shape(),
                options,
            )
            .unwrap();
            (
                psnr(&image.samples, &djpeg(&stream).samples),
                stream.len() as f64,
            )
        })
        .collect()
}

/// log(bytes) of a rate–distortion `curve` ((PSNR, bytes), sorted by PSNR) at `psnr`,
/// linearly interpolated (None outside it).
pub fn log_bytes_at(curve: &[(f64, f64)], psnr: f64) -> Option<f64> {
    curve.windows(2).find_map(|w| {
        let ((p0, b0), (p1, b1)) = (w[0], w[1]);
        (p0 <= psnr && psnr <= p1).then(|| {
            let t = (psnr - p0) / (p1 - p0);
            b0.ln() * (1.0 - t) + b1.ln() * t
        })
    })
}

/// Bjøntegaard-delta rate of `b` against `a`, %: the mean of log(bytes) over the PSNR range
/// both cover (linear interpolation, 400 steps).
pub fn bd_rate(a: &[(f64, f64)], b: &[(f64, f64)]) -> f64 {
    let lo = a[0].0.max(b[0].0);
    let hi = a[a.len() - 1].0.min(b[b.len() - 1].0);
    assert!(
        hi > lo + 1.0,
        "the curves overlap over {lo:.2}..{hi:.2} dB only"
    );
    let n = 400;
    let mean = (0..=n)
        .map(|k| {
            let p = lo + (hi - lo) * f64::from(k) / f64::from(n);
            log_bytes_at(b, p).unwrap() - log_bytes_at(a, p).unwrap()
        })
        .sum::<f64>()
        / f64::from(n + 1);
    (mean.exp() - 1.0) * 100.0
}

/// A progressive stream of a flat mid-grey image, written by hand: one DC scan of every
/// component, each block's DC difference 0 coded in one bit. The smallest stream the
/// decoder accepts for an image of that size, so the kind a hostile chunk would use
/// (tests/full_decoder_memory.rs, tests/wasm_cases; tests/js/helpers/flat-progressive.mjs
/// writes the same streams).
pub fn flat_progressive(width: u16, height: u16, sampling: &[(u8, u8)]) -> Vec<u8> {
    let mut s = vec![0xFF, 0xD8];
    // one quantisation table of 1s
    s.extend([0xFF, 0xDB, 0, 67, 0]);
    s.extend([1u8; 64]);
    // SOF2
    let n = sampling.len() as u8;
    s.extend([0xFF, 0xC2, 0, 8 + 3 * n, 8]);
    s.extend(height.to_be_bytes());
    s.extend(width.to_be_bytes());
    s.push(n);
    for (i, &(h, v)) in sampling.iter().enumerate() {
        s.extend([i as u8 + 1, h << 4 | v, 0]);
    }
    // a DC table with one code, '0', for category 0
    s.extend([0xFF, 0xC4, 0, 20, 0x00, 1]);
    s.extend([0u8; 15]);
    s.push(0);
    // the DC scan of every component
    s.extend([0xFF, 0xDA, 0, 6 + 2 * n, n]);
    for i in 0..n {
        s.extend([i + 1, 0x00]);
    }
    s.extend([0, 0, 0]);
    let (w, h) = (u64::from(width), u64::from(height));
    let blocks: u64 = if n == 1 {
        w.div_ceil(8) * h.div_ceil(8)
    } else {
        let h_max = u64::from(sampling.iter().map(|f| f.0).max().unwrap());
        let v_max = u64::from(sampling.iter().map(|f| f.1).max().unwrap());
        let per_mcu: u64 = sampling.iter().map(|&(h, v)| u64::from(h) * u64::from(v)).sum();
        w.div_ceil(8 * h_max) * h.div_ceil(8 * v_max) * per_mcu
    };
    s.extend(std::iter::repeat_n(0u8, (blocks / 8) as usize));
    if blocks % 8 != 0 {
        s.push(0xFF >> (blocks % 8)); // the last byte's unused bits are 1s
    }
    s.extend([0xFF, 0xD9]);
    s
}
