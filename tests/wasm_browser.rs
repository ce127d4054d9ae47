//! The wasm API in headless Chromium (chromedriver on PATH).
#![cfg(target_arch = "wasm32")]

wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

// Shared with the native suites (wasm_cases uses its hand-written streams).
mod common;
mod wasm_cases;
