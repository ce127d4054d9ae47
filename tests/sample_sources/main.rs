//! Native run of this suite, mod.rs (encoding from a `SampleSource` against encoding a
//! slice); `--test wasm_node` runs mod.rs in wasm.
#![cfg(not(target_arch = "wasm32"))]

#[path = "../common/mod.rs"]
mod common;
#[path = "mod.rs"]
mod sample_sources;
