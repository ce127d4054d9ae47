#!/usr/bin/env bash
# Every test suite, on a fresh machine too: set-up, build, native Rust tests, wasm
# tests (Node and headless Chromium), JavaScript tests (Node and Chromium, through the
# built package). Fails on the first failing suite.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
# each step's start, in seconds since the suite began: where the time goes on a fresh machine
step() { printf '\n===== [%4ds] %s =====\n' "$SECONDS" "$*"; }
trap 'printf "\n===== [%4ds] done =====\n" "$SECONDS"' EXIT

step "set-up"
bash scripts/setup.sh
step "the vendored crates are their crates.io releases plus vendor/*.patch"
node scripts/check-patches.mjs
step "build (npm run build)"
node scripts/build.mjs
step "native Rust tests (cargo test)"
cargo test
step "without the full-decoder feature (the npm reader and writer modules' build): progressive streams defer"
cargo test --no-default-features --features encoder --test full_decoder
step "the vendored jpeg-encoder's own unit tests (with our patches' reference tests, vendor/PATCHES.md; with \`simd\`, its x86-64 kernels against the scalar code)"
(cd vendor/jpeg-encoder && CARGO_TARGET_DIR="$OLDPWD/target/vendor-jpeg-encoder" cargo test --lib &&
  CARGO_TARGET_DIR="$OLDPWD/target/vendor-jpeg-encoder" cargo test --lib --features simd)
step "wasm tests in Node and headless Chromium (cargo test --target wasm32-unknown-unknown)"
cargo test --target wasm32-unknown-unknown
step "wasm SIMD kernels against the scalar code, in Node (cargo test with +simd128)"
RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+simd128" CARGO_TARGET_DIR=target/simd-test \
  cargo test --target wasm32-unknown-unknown --test wasm_node
step "Python package tests (pytest tests/python: the zarr-jpeg codec for zarr-python and Dask)"
.venv/bin/python -m pytest -q -p no:cacheprovider tests/python
step "JavaScript tests (node --test)"
node --test --test-concurrency=1 tests/js/
