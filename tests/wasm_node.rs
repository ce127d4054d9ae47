//! The wasm API in Node (wasm-bindgen-test's default runtime).
#![cfg(target_arch = "wasm32")]

mod wasm_cases;
mod encode_identity;
