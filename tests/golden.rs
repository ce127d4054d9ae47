//! Native run of tests/encode_golden (the encoder's output pinned to recorded digests);
//! `--test wasm_node` runs the same module in wasm.
#![cfg(not(target_arch = "wasm32"))]

mod common;
mod encode_golden;
