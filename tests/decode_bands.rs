//! Native run of tests/sample_sinks (decoding into a `SampleSink` a band of rows at a time
//! against `decode`); `--test wasm_node` runs the module in wasm.
#![cfg(not(target_arch = "wasm32"))]

mod common;
mod sample_sinks;
