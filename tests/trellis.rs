//! Trellis quantisation (`EncodeOptions::trellis`, vendor/PATCHES.md section 9), against
//! references that share no code with it: libjpeg-turbo's `djpeg` decodes every stream, and
//! PSNR is measured on its decode; the rate–distortion gain is measured on the sample images
//! the bench uses; and with the option off the codec writes exactly the bytes it wrote
//! before the option existed (a digest of main's streams).

mod common;

use common::*;
use zarr_jpeg::{encode_from_with_options, EncodeOptions};

fn options(trellis: bool, restart_intervals: bool) -> EncodeOptions {
    EncodeOptions {
        restart_intervals,
        trellis,
        ..EncodeOptions::default()
    }
}

fn encode_opt(cfg: &zarr_jpeg::JpegConfig, image: &Image, o: &EncodeOptions) -> Vec<u8> {
    encode_from_with_options(cfg, &image.samples.as_slice(), &image.shape(), o).unwrap()
}

/// Every colour mode (the eight sampling schemes, `rgb`, grayscale, and YCbCr input), with
/// restart intervals on and off: libjpeg-turbo decodes every trellis stream without a warning
/// (`djpeg` fails on any), to the image's size; on the real crops the stream is smaller than
/// the default one at the same quality, and its PSNR (on djpeg's decode) within 3 dB of
/// it (YCbCr input: djpeg's decodes of the two streams agree to over 30 dB PSNR); where no chroma is upsampled our decoder agrees with djpeg to within 4.
#[test]
fn libjpeg_turbo_decodes_trellis_streams_of_every_mode() {
    let (ihc, cell) = (ihc(), cell());
    let mut configs = encoder_configs(90);
    configs.push((
        "ycbcr-in".into(),
        r#"{"quality": 90, "encoded_color_space": "ycbcr", "decoded_color_space": "ycbcr", "subsampling": [[2, 2], [1, 1], [1, 1]]}"#.into(),
        3,
    ));
    for (label, json, c) in configs {
        for quality in [50, 90] {
            let cfg = config(&json.replace("90", &quality.to_string()));
            for restarts in [true, false] {
                let real = if c == 1 { &cell } else { &ihc };
                let crop = real.tile(203, 117, 31, 17);
                let what = format!("{label} q{quality} restarts {restarts}");
                let plain = encode_opt(&cfg, &crop, &options(false, restarts));
                let trellis = encode_opt(&cfg, &crop, &options(true, restarts));
                assert!(
                    trellis.len() < plain.len(),
                    "{what}: {} ≥ {} bytes",
                    trellis.len(),
                    plain.len()
                );
                let (dp, dt) = (djpeg(&plain), djpeg(&trellis));
                assert_eq!(dt.samples.len(), crop.samples.len(), "{what}");
                if label == "ycbcr-in" {
                    // djpeg gives RGB of the YCbCr samples: the two decodes are compared.
                    let p = psnr(&dp.samples, &dt.samples);
                    assert!(
                        p > 30.0,
                        "{what}: PSNR {p:.2} dB against the default's decode"
                    );
                } else {
                    let (pp, pt) = (
                        psnr(&crop.samples, &dp.samples),
                        psnr(&crop.samples, &dt.samples),
                    );
                    assert!(
                        pt > pp - 3.0 && pt > 30.0,
                        "{what}: PSNR {pt:.2} dB, default {pp:.2} dB"
                    );
                }
                if label != "ycbcr-in" && (c == 1 || label == "rgb" || label == "ycbcr1x1") {
                    let ours = zarr_jpeg::decode(&cfg, &trellis, &crop.shape()).unwrap();
                    let max = max_abs_diff(&ours, &dt.samples);
                    assert!(max <= 4, "{what}: djpeg and ours differ by {max}");
                }
                // Synthetic corner cases: dense noise (raw blocks), flat, single DCT basis
                // functions anywhere up to position 63 (long zero runs, ZRL, no EOB).
                for pattern in 0..PATTERNS {
                    let (h, w) = (150, 61);
                    let image = Image {
                        height: h,
                        width: w,
                        components: c,
                        samples: pattern_image(pattern, h, w, c, 7),
                    };
                    let stream = encode_opt(&cfg, &image, &options(true, restarts));
                    assert_eq!(
                        djpeg(&stream).samples.len(),
                        image.samples.len(),
                        "{what} pattern {pattern}"
                    );
                }
            }
        }
    }
}

/// On the bench's images (ihc 512² 4:2:0, cell grayscale), at q 50–95: trellis writes fewer
/// bytes than the default at every quality, and fewer at equal PSNR — each trellis point
/// lies below the default curve (interpolated at its PSNR) and the BD-rate is negative by a
/// margin: a rate–distortion gain, not just coarser quantisation.
#[test]
fn trellis_gains_at_equal_psnr_on_the_sample_images() {
    for (name, image, json, min_gain) in [
        (
            "ihc 4:2:0",
            ihc(),
            r#"{"quality": QQ, "encoded_color_space": "ycbcr", "subsampling": [[2, 2], [1, 1], [1, 1]]}"#,
            1.0,
        ),
        (
            "ihc rgb",
            ihc(),
            r#"{"quality": QQ, "encoded_color_space": "rgb"}"#,
            1.0,
        ),
        (
            "cell gray",
            cell(),
            r#"{"quality": QQ, "encoded_color_space": "grayscale"}"#,
            4.0,
        ),
    ] {
        let plain = rd_curve(&image, json, &options(false, true));
        let trellis = rd_curve(&image, json, &options(true, true));
        for (q, (p, t)) in rd_qualities().zip(plain.iter().zip(&trellis)) {
            assert!(t.1 < p.1, "{name} q{q}: {} ≥ {} bytes", t.1, p.1);
            if let Some(at) = log_bytes_at(&plain, t.0) {
                assert!(
                    t.1 < at.exp(),
                    "{name} q{q}: {} B at {:.2} dB, the default {:.0} B",
                    t.1,
                    t.0,
                    at.exp()
                );
            }
        }
        let bd = bd_rate(&plain, &trellis);
        println!("{name}: BD-rate of trellis against the default {bd:.2} %");
        for (q, (p, t)) in rd_qualities().zip(plain.iter().zip(&trellis)) {
            println!(
                "  q{q}: {:.0} B {:.2} dB → {:.0} B {:.2} dB",
                p.1, p.0, t.1, t.0
            );
        }
        assert!(bd < -min_gain, "{name}: BD-rate {bd:.2} %");
    }
}

/// With the option off, the codec writes the default streams: a digest of them, so that a
/// change to the default encoder's bytes is a decision, not an accident; `trellis: false`
/// is the default. It changed on purpose since trellis came with the dead zone
/// (vendor/PATCHES.md, jpeg-encoder section 12): 8208754211910499017 before it (the
/// streams of main before trellis, ba43277), 12924061152220533499 with it on luma only
/// (e1f5970), this value since it also covers chroma that is not subsampled.
#[test]
fn option_off_writes_the_bytes_of_before() {
    assert_eq!(default_streams_digest(), (6129493812373403874, 1120));
    let cfg = config(
        r#"{"quality": 75, "encoded_color_space": "ycbcr", "subsampling": [[2, 2], [1, 1], [1, 1]]}"#,
    );
    let crop = ihc().tile(150, 90, 0, 0);
    assert_eq!(
        encode_opt(&cfg, &crop, &options(false, true)),
        zarr_jpeg::encode(&cfg, &crop.samples, &crop.shape()).unwrap()
    );
    assert_ne!(
        encode_opt(&cfg, &crop, &options(true, true)),
        zarr_jpeg::encode(&cfg, &crop.samples, &crop.shape()).unwrap()
    );
}

/// FNV-1a over every stream of the default options: each mode, qualities 1/50/90/100,
/// sizes with and without restart intervals, the synthetic patterns and two real crops.
fn default_streams_digest() -> (u64, usize) {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut streams = 0;
    let ihc = ihc();
    let cell = cell();
    for (label, json_q, c) in encoder_configs("QQ") {
        for quality in [1, 50, 90, 100] {
            let cfg = config(&json_q.replace("QQ", &quality.to_string()));
            let mut images: Vec<(usize, usize, Vec<u8>)> = Vec::new();
            for (h, w) in [(7, 13), (61, 47), (150, 90)] {
                for pattern in 0..PATTERNS {
                    images.push((h, w, pattern_image(pattern, h, w, c, (h * 1000 + w) as u64)));
                }
            }
            let real = if c == 1 { &cell } else { &ihc };
            images.push((203, 117, real.tile(203, 117, 31, 17).samples));
            for (h, w, data) in images {
                let mut shape = vec![h as u64, w as u64];
                if c == 3 {
                    shape.push(3);
                }
                let stream = zarr_jpeg::encode(&cfg, &data, &shape)
                    .unwrap_or_else(|e| panic!("{label} q{quality} {h}x{w}: {e}"));
                for b in stream.iter().chain(&(stream.len() as u64).to_le_bytes()) {
                    hash = (hash ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
                }
                streams += 1;
            }
        }
    }
    (hash, streams)
}
