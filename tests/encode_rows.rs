//! Native run of tests/sample_sources (encoding from a `SampleSource` against encoding a
//! slice); `--test wasm_node` runs the module in wasm.
#![cfg(not(target_arch = "wasm32"))]

mod common;
mod sample_sources;
