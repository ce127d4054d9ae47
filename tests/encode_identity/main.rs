//! Native run of this suite, mod.rs (the x86-64 SSE4.1 kernels of the vendored encoder, on
//! in native x86-64 builds through its `simd` feature, against its scalar code; other hosts
//! compare the scalar code with itself); `--test wasm_node` runs mod.rs in wasm, where it
//! checks the `simd128` kernels. Plus a sweep too long for wasm: every quality.
#![cfg(all(not(target_arch = "wasm32"), feature = "scalar-reference", feature = "test-hooks"))]

#[path = "../common/mod.rs"]
mod common;
#[path = "mod.rs"]
mod encode_identity;

use common::{config, pattern_chunk, PATTERNS};
use encode_identity::{assert_simd_matches_scalar, modes};
use zarr_jpeg::EncodeOptions;

/// Every mode at every quality 1–100, each quality with three sizes from 1×1 up (odd ones,
/// tails narrower than a vector, and 150 rows: restart intervals in every sampling scheme),
/// a pattern, and trellis off or on, restart intervals on or off, in turn: the same bytes from
/// the kernels and the scalar code.
#[test]
fn every_quality_writes_the_same_bytes_with_simd_kernels_as_with_the_scalar_code() {
    let sizes = [
        (1, 1),
        (1, 17),
        (17, 1),
        (3, 5),
        (7, 13),
        (13, 7),
        (16, 16),
        (23, 37),
        (61, 47),
        (33, 100),
        (150, 41),
        (131, 67),
    ];
    let mut cases = 0;
    for (mode, channels) in modes() {
        for quality in 1..=100usize {
            let config = config(&format!(r#"{{"quality": {quality}, {mode}}}"#));
            for k in 0..3 {
                let (height, width) = sizes[(quality * 3 + k) % sizes.len()];
                let pattern = (quality + k) % PATTERNS;
                let (data, shape) = pattern_chunk(pattern, height, width, channels);
                let options = EncodeOptions {
                    trellis: (quality + k) % 2 == 1,
                    restart_intervals: (quality / 2 + k) % 2 == 0,
                    ..EncodeOptions::default()
                };
                assert_simd_matches_scalar(&config, &data, &shape, &options, || {
                    format!(
                        "{mode} q{quality} {height}x{width} pattern {pattern} trellis {} restarts {}",
                        options.trellis, options.restart_intervals
                    )
                });
                cases += 1;
            }
        }
    }
    assert_eq!(cases, 18 * 100 * 3);
}
