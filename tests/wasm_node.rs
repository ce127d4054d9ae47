//! The wasm API in Node (wasm-bindgen-test's default runtime).
#![cfg(target_arch = "wasm32")]

// Shared with the native suites: test configurations from JSON, the baseline schemes.
mod common;
#[cfg(all(feature = "scalar-reference", feature = "test-hooks"))]
mod encode_identity;
// The baseline decoder against the zune-jpeg path (tests/baseline_decoder.rs natively).
mod entropy_coding;
mod sample_sinks;
mod sample_sources;
#[cfg(feature = "test-hooks")]
mod wasm_baseline;
mod wasm_cases;

// The vendored zune-jpeg's simd128 kernels against its scalar code (vendor/PATCHES.md).
#[cfg(target_feature = "simd128")]
mod wasm_simd_kernels;
