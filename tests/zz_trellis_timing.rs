mod common;
use common::*;
use zarr_jpeg::EncodeOptions;
use std::time::Instant;

fn opts(table: &str, trellis: bool) -> EncodeOptions {
    EncodeOptions::parse(&config_value(&format!(r#"{{"quantTable": "{table}", "trellis": {trellis}}}"#))).unwrap()
}

#[test]
fn timing() {
    let ihc = ihc().tile(2048, 2048, 0, 0);
    let cell = cell().tile(2048, 2048, 0, 0);
    let cases = [
        ("ihc 420", &ihc, r#"{"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[2,2],[1,1],[1,1]]}"#),
        ("ihc rgb", &ihc, r#"{"quality": 90, "encoded_color_space": "rgb"}"#),
        ("cell", &cell, r#"{"quality": 90, "encoded_color_space": "grayscale"}"#),
    ];
    let rounds: usize = std::env::var("ROUNDS").ok().and_then(|s| s.parse().ok()).unwrap_or(5);
    for (name, img, json) in cases {
        let cfg = config(json);
        for (label, o) in [("default", opts("annex-k", false)), ("trellis", opts("annex-k", true)), ("flat+trellis", opts("flat", true))] {
            let mut best = f64::MAX;
            let mut len = 0;
            let mut digest = 0u64;
            for _ in 0..rounds {
                let t = Instant::now();
                let s = zarr_jpeg::encode_from_with_options(&cfg, &img.samples.as_slice(), &img.shape(), &o).unwrap();
                best = best.min(t.elapsed().as_secs_f64());
                len = s.len();
                digest = s.iter().fold(0xcbf29ce484222325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x100000001b3));
            }
            println!("{name:8} {label:13} {:7.1} MP/s  {len} B  {digest:016x}", 4.194304 / best);
        }
    }
}
