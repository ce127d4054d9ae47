//! The wasm API in Node (wasm-bindgen-test's default runtime).
#![cfg(target_arch = "wasm32")]

#[cfg(feature = "scalar-reference")]
mod encode_identity;
mod wasm_cases;
