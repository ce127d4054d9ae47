#!/usr/bin/env python3
"""The Python package against native libjpeg-turbo (imagecodecs' jpeg8_decode/jpeg8_encode)
on the JS benchmark's 2048 x 2048 images (samples/ihc.png and samples/cell.png tiled, as
bench/lib/images.mjs `tile` does), in one run on this machine:

- decode: the same stream (ours, as zarr-jpeg writes it) decoded by each (CPU time of the
  calling thread, least of --repeat calls: waiting for a core on a busy machine is not counted);
- encode: quality 90 with optimised Huffman tables (zarr-jpeg always writes them);
- two threads: decode throughput of two threads over one (the GIL is released), the best of
  --repeat trials of each, alternating.

    npm run bench:python            (.venv/bin/python bench/python.py [--repeat N])

Prints a table; the figures in docs/python.md come from it. A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import imagecodecs
import numpy as np
from PIL import Image

import zarr_jpeg

ROOT = Path(__file__).resolve().parents[1]
SIZE = 2048
MODES = {
    "ihc 4:2:0": ("ihc.png", "RGB", {"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[2, 2], [1, 1], [1, 1]]}, "420"),
    "ihc 4:4:4": ("ihc.png", "RGB", {"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[1, 1], [1, 1], [1, 1]]}, "444"),
    "cell gray": ("cell.png", "L", {"quality": 90, "encoded_color_space": "grayscale"}, None),
}


def tile(name: str, mode: str) -> np.ndarray:
    img = np.asarray(Image.open(ROOT / "samples" / name).convert(mode))
    h, w = img.shape[:2]
    reps = (-(-SIZE // h), -(-SIZE // w)) + ((1,) if img.ndim == 3 else ())
    return np.ascontiguousarray(np.tile(img, reps)[:SIZE, :SIZE])


def best_ms(f, repeat: int) -> float:
    """The least CPU time of this thread (both codecs run in the calling thread) over `repeat`
    calls: on a shared machine, time spent waiting for a core is not counted."""
    f()  # warm-up
    times = []
    for _ in range(repeat):
        t = time.thread_time()
        f()
        times.append(time.thread_time() - t)
    return min(times) * 1e3


def threads_rates(f, trials: int) -> tuple[float, float]:
    """Calls per second of `f` on one thread and on two (8 calls per thread per trial), the
    best of `trials` trials each, the two alternating so that both see the same machine."""
    best = {1: 0.0, 2: 0.0}
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(lambda _: f(), range(2)))  # warm-up
        for _ in range(trials):
            for threads in (1, 2):
                calls = 8 * threads
                t = time.perf_counter()
                if threads == 1:
                    for _ in range(calls):
                        f()
                else:
                    list(pool.map(lambda _: f(), range(calls)))
                best[threads] = max(best[threads], calls / (time.perf_counter() - t))
    return best[1], best[2]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("model name")), platform.processor()) if Path("/proc/cpuinfo").exists() else platform.processor()
    print(f"zarr-jpeg (Python) vs imagecodecs {imagecodecs.__version__} ({imagecodecs.jpeg8_version()}), {SIZE}x{SIZE}, quality 90, best of {args.repeat}")
    print(f"{cpu}, {os.cpu_count()} logical CPUs, Python {platform.python_version()}")
    print()
    header = f"{'image':<11} {'op':<22} {'zarr-jpeg CPU ms':>16} {'imagecodecs CPU ms':>18} {'speed vs imagecodecs':>21}"
    print(header)
    print("-" * len(header))
    scaling = []
    for label, (file, mode, config, subsampling) in MODES.items():
        img = tile(file, mode)
        stream = zarr_jpeg.encode(img, config)
        ours_decode = lambda: zarr_jpeg.decode(stream, config, img.shape)
        theirs_decode = lambda: imagecodecs.jpeg8_decode(stream)
        assert np.abs(ours_decode().astype(int) - theirs_decode().astype(int)).max() <= 4  # (a sanity check)
        kw = {"subsampling": subsampling} if subsampling else {}
        ours_encode = lambda: zarr_jpeg.encode(img, config)
        theirs_encode = lambda: imagecodecs.jpeg8_encode(img, level=90, optimize=True, **kw)
        for op, ours, theirs in [("decode", ours_decode, theirs_decode), ("encode (optimised)", ours_encode, theirs_encode)]:
            a, b = best_ms(ours, args.repeat), best_ms(theirs, args.repeat)
            print(f"{label:<11} {op:<22} {a:>16.1f} {b:>18.1f} {b / a:>20.2f}x")
        one, two = threads_rates(ours_decode, args.repeat)
        one_ic, two_ic = threads_rates(theirs_decode, args.repeat)
        scaling.append((label, one, two, one_ic, two_ic))
    print()
    print("decode throughput (wall clock, best of --repeat trials of 8 calls per thread):")
    header = f"{'image':<11} {'decodes/s, 1 thread':>20} {'2 threads':>10} {'scaling':>8}   {'imagecodecs 1 / 2 threads, scaling':>36}"
    print(header)
    print("-" * len(header))
    for label, one, two, one_ic, two_ic in scaling:
        print(f"{label:<11} {one:>20.1f} {two:>10.1f} {two / one:>7.2f}x   {one_ic:>14.1f} / {two_ic:>6.1f}, {two_ic / one_ic:>5.2f}x")


if __name__ == "__main__":
    main()
