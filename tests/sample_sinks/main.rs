//! Native run of this suite, mod.rs (decoding into a `SampleSink` a band of rows at a time
//! against `decode`); `--test wasm_node` runs mod.rs in wasm.
#![cfg(not(target_arch = "wasm32"))]

#[path = "../common/mod.rs"]
mod common;
#[path = "mod.rs"]
mod sample_sinks;
