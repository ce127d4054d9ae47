#!/usr/bin/env bash
# Installs what a fresh machine lacks, and nothing it already has: the wasm target,
# the wasm-bindgen CLI matching the crate's pinned version, npm packages, Debian's
# Chromium + chromedriver, libjpeg-turbo tools (djpeg, tjbench) and headers, libvips and libtiff
# tools (vips, tiffcp: TIFF test inputs, the converter benchmark), the Python packages the
# interoperability tests use (into .venv/), and the project's Python package (python/, built
# from source into .venv/). Everything comes from the package
# registries (crates.io, npm, Debian, PyPI); nothing downloads a browser or binary
# from anywhere else. Safe to run repeatedly.
set -euo pipefail
cd "$(dirname "$0")/.."

export PATH="$HOME/.cargo/bin:$PATH"
log() { printf '\n[setup] %s\n' "$*"; }

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  log "adding the wasm32-unknown-unknown Rust target"
  rustup target add wasm32-unknown-unknown
fi

# wasm-bindgen's CLI must match the crate exactly (Cargo.toml pins it with "=").
want=$(sed -n 's/^wasm-bindgen = "=\([0-9.]*\)".*/\1/p' Cargo.toml | head -n 1)
have=$(wasm-bindgen --version 2>/dev/null | awk '{print $2}' || true)
if [ "$have" != "$want" ]; then
  log "installing wasm-bindgen-cli $want (a few minutes on a fresh machine)"
  # Not --locked: a locked transitive version is missing from the registry mirror (docs/contributing.md, "Toolchain pitfalls").
  cargo install wasm-bindgen-cli --version "$want" --force
fi

missing=()
command -v chromium >/dev/null || missing+=(chromium)
command -v chromedriver >/dev/null || missing+=(chromium-driver)
command -v djpeg >/dev/null || missing+=(libjpeg-turbo-progs)
# jpeglib.h: the bench's native encoder with optimised tables (bench/native/encode.c)
[ -f /usr/include/jpeglib.h ] || missing+=(libjpeg62-turbo-dev)
# libvips (vips tiffsave) and libtiff (tiffcp): independent writers of the TIFF inputs the
# converter's tests make at test time, and libvips the reference of `npm run bench:convert`
command -v vips >/dev/null || missing+=(libvips-tools)
command -v tiffcp >/dev/null || missing+=(libtiff-tools)
if [ ${#missing[@]} -gt 0 ]; then
  log "installing Debian packages: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The project's own Python environment (.venv/), for the reference tools the tests use
# (Pillow, zarr-python, tifffile, imagecodecs): never the system Python's packages.
if [ ! -x .venv/bin/python ]; then
  log "creating the project's Python environment (.venv)"
  python3 -m venv .venv
fi
if ! cmp -s tests/python/requirements.txt .venv/requirements.installed; then
  log "installing Python packages into .venv (tests/python/requirements.txt)"
  .venv/bin/python -m pip install --quiet -r tests/python/requirements.txt
  cp tests/python/requirements.txt .venv/requirements.installed
fi

# The project's own Python package (python/: the zarr-jpeg codec for zarr-python, built by
# maturin from the Rust core), installed into .venv: rebuilt only when its sources, the core's
# or the vendored crates' change (a release build takes a few minutes).
py_sources=$(find python src vendor Cargo.toml -type f \
  -not -path 'python/target/*' -not -name '*.so' -not -path '*/__pycache__/*' -print0 |
  sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)
if [ "$py_sources" != "$(cat .venv/zarr-jpeg.installed 2>/dev/null)" ]; then
  log "building the Python package (python/) into .venv (maturin, release build: a few minutes)"
  PATH="$PWD/.venv/bin:$PATH" .venv/bin/python -m pip install --quiet --no-build-isolation \
    --force-reinstall --no-deps ./python
  echo "$py_sources" > .venv/zarr-jpeg.installed
fi

if [ ! -x node_modules/.bin/wasm-opt ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  log "installing npm packages"
  npm ci --no-audit --no-fund
fi
log "ready"
