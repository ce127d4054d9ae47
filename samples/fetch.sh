#!/bin/sh
# Reproduce samples/ihc.png and samples/cell.png: download the scikit-image
# wheel from PyPI (no install) and extract just those two files.
# Usage: sh samples/fetch.sh   (from anywhere; writes next to this script)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
version=${SKIMAGE_VERSION:-0.26.0}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pip download --no-deps --only-binary :all: "scikit-image==$version" -d "$tmp" >/dev/null
wheel=$(ls "$tmp"/scikit_image-*.whl | head -n 1)
unzip -o -q -j "$wheel" skimage/data/ihc.png skimage/data/cell.png -d "$here"
# SHA-256 sums as listed in skimage/data/_registry.py of scikit-image 0.26.0
# (the PNGs are identical across platform wheels).
cd "$here"
sha256sum -c <<'SUMS'
f8dd1aa387ddd1f49d8ad13b50921b237df8e9b262606d258770687b0ef93cef  ihc.png
8d23a7fb81f7cc877cd09f330357fc7f595651306e84e17252f6e0a1b3f61515  cell.png
SUMS
