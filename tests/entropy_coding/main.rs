//! Native run of this suite, mod.rs (the optimised-table writer against the standard
//! writers, zune-jpeg and libjpeg-turbo); `--test wasm_node` runs mod.rs in wasm.
#![cfg(not(target_arch = "wasm32"))]

#[path = "../common/mod.rs"]
mod common;
#[path = "mod.rs"]
mod entropy_coding;

/// Grayscale with optimised tables now takes the interleaved writer (one component's
/// scan is the same either way), which counts DC differences with the resets at restart
/// markers; upstream's per-component writer did not, so such streams lacked codes (a
/// debug assertion, or a broken stream). libjpeg-turbo must decode them to the same
/// samples as the stream without restarts.
#[test]
fn grayscale_optimised_with_restart_intervals_decodes() {
    use jpeg_encoder::{ColorType, Encoder};
    let (height, width) = (61, 47);
    let data = common::noise(height * width, 7);
    let encode = |restart: u16| {
        let mut out = Vec::new();
        let mut encoder = Encoder::new(&mut out, 90);
        encoder.set_optimized_huffman_tables(true);
        if restart > 0 {
            encoder.set_restart_interval(restart);
        }
        encoder
            .encode(&data, width as u16, height as u16, ColorType::Luma)
            .unwrap();
        out
    };
    let plain = common::djpeg(&encode(0));
    for restart in [1, 3, 7] {
        let stream = encode(restart);
        assert!(
            common::djpeg(&stream).samples == plain.samples,
            "restart interval {restart}: djpeg decodes other samples"
        );
    }
}
