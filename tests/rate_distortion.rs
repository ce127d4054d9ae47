//! The default encoder against libjpeg-turbo with optimised Huffman tables (`cjpeg
//! -optimize`, the reference of the rate–distortion target) on the sample images at q
//! 50–95: fewer bytes at equal PSNR (a negative BD-rate), and at each quality setting a
//! PSNR no more than 0.1 dB below libjpeg-turbo's. PSNR against the original on djpeg's
//! decode of each stream.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::*;

/// libjpeg-turbo's curve: (PSNR on djpeg's decode, bytes) at q 50–95 in steps of 5.
fn cjpeg_curve(image: &Image, args: &[&str]) -> Vec<(f64, f64)> {
    rd_qualities()
        .map(|q| {
            let quality = q.to_string();
            let mut all = vec!["-optimize", "-quality", &quality];
            all.extend_from_slice(args);
            let stream = cjpeg(image, &all);
            (
                psnr(&image.samples, &djpeg(&stream).samples),
                stream.len() as f64,
            )
        })
        .collect()
}

#[test]
fn fewer_bytes_than_libjpeg_turbo_at_equal_psnr_and_no_worse_at_equal_quality() {
    for (name, image, json, cjpeg_args, min_gain) in [
        (
            "ihc 4:2:0",
            ihc(),
            r#"{"quality": QQ, "encoded_color_space": "ycbcr", "subsampling": [[2, 2], [1, 1], [1, 1]]}"#,
            &["-sample", "2x2"][..],
            1.0,
        ),
        (
            "ihc 4:4:4",
            ihc(),
            r#"{"quality": QQ, "encoded_color_space": "ycbcr", "subsampling": [[1, 1], [1, 1], [1, 1]]}"#,
            &["-sample", "1x1"][..],
            1.2,
        ),
        (
            "ihc rgb",
            ihc(),
            r#"{"quality": QQ, "encoded_color_space": "rgb"}"#,
            &["-rgb"][..],
            1.0,
        ),
        (
            "cell gray",
            cell(),
            r#"{"quality": QQ, "encoded_color_space": "grayscale"}"#,
            &[][..],
            1.5,
        ),
    ] {
        let ours = rd_curve(&image, json, &zarr_jpeg::EncodeOptions::default());
        let theirs = cjpeg_curve(&image, cjpeg_args);
        let bd = bd_rate(&theirs, &ours);
        println!("{name}: BD-rate against cjpeg -optimize {bd:+.2} %");
        for (q, (o, t)) in rd_qualities().zip(ours.iter().zip(&theirs)) {
            println!(
                "  q{q}: ours {:.0} B {:.2} dB, libjpeg-turbo {:.0} B {:.2} dB",
                o.1, o.0, t.1, t.0
            );
            assert!(
                o.0 >= t.0 - 0.1,
                "{name} q{q}: PSNR {:.2} dB, libjpeg-turbo {:.2} dB",
                o.0,
                t.0
            );
        }
        assert!(bd < -min_gain, "{name}: BD-rate {bd:+.2} %");
    }
}
