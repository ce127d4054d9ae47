#!/usr/bin/env bash
# `npm start`: installs what is missing (scripts/setup.sh; only the first run takes
# minutes), builds the package when its sources changed, converts the sample images into
# JPEG-compressed OME-Zarr stores under samples/stores/ when they are missing or stale,
# and serves the demo page on 127.0.0.1 ($PORT, else 8080, else a free port).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
step() { printf '\n[start] %s\n' "$*"; }

step "set-up (installs only what is missing)"
bash scripts/setup.sh

# Rebuild when dist/ is missing or any input of the build is newer than the inlined wasm,
# which the build writes before it copies js/ into dist/.
stamp=dist/wasm/zarr_jpeg_bg.wasm.js
if [ ! -f "$stamp" ] || [ ! -f dist/convert.js ] || [ ! -f dist/wasm/zarr_jpeg_full_decoder_bg.wasm.js ] || \
   [ -n "$(find src js vendor Cargo.toml Cargo.lock scripts/build.mjs -newer "$stamp" -print -quit 2>/dev/null)" ]; then
  step "building the package (node scripts/build.mjs)"
  node scripts/build.mjs
else
  step "dist/ is up to date"
fi

step "sample stores and server"
exec node scripts/serve.mjs "$@"
