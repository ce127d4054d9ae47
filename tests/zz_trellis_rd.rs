mod common;
use common::*;
use zarr_jpeg::EncodeOptions;

fn opts(table: &str, trellis: bool) -> EncodeOptions {
    EncodeOptions::parse(&config_value(&format!(r#"{{"quantTable": "{table}", "trellis": {trellis}}}"#))).unwrap()
}

#[test]
fn rd() {
    let cases = [
        ("ihc 420", ihc(), r#"{"quality": QQ, "encoded_color_space": "ycbcr", "subsampling": [[2, 2], [1, 1], [1, 1]]}"#),
        ("ihc rgb", ihc(), r#"{"quality": QQ, "encoded_color_space": "rgb"}"#),
        ("cell", cell(), r#"{"quality": QQ, "encoded_color_space": "grayscale"}"#),
    ];
    let mut sum = 0.0;
    for (name, img, json) in &cases {
        let base = rd_curve(img, json, &EncodeOptions::default());
        let mut line = format!("{name:8}");
        for t in ["annex-k", "flat", "peterson", "ms-ssim", "imagemagick"] {
            let c = rd_curve(img, json, &opts(t, true));
            let bd = bd_rate(&base, &c);
            sum += bd;
            line += &format!("  {t} {bd:7.3}");
        }
        println!("{line}");
    }
    println!("sum {sum:.3}");
}
