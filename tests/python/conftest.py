"""Shared helpers of the Python package's tests: the repository root, sample images made at
test time, and the built npm package (dist/) run through node_side.mjs, so that Python's
results are compared with the JavaScript package's on the same inputs."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
NODE_SIDE = Path(__file__).with_name("node_side.mjs")

#: Max |ours - Pillow| per sample, as tests/js/python-writer.test.mjs allows (observed: 3 with
#: 4:2:0, <= 2 otherwise): the streams are the same, IDCT rounding and upsampling differ.
PILLOW_TOLERANCE = 3


def node(job: dict, tmp: Path) -> object:
    """Runs one job of node_side.mjs on dist/ and returns its JSON result."""
    if not (ROOT / "dist" / "index.js").exists():
        raise RuntimeError("dist/ is missing: run `node scripts/build.mjs` (npm test builds it first)")
    node_bin = shutil.which("node")
    if node_bin is None:
        raise RuntimeError("node is needed for the JavaScript side of these tests")
    path = tmp / f"job-{job['op']}-{next(_jobs)}.json"
    path.write_text(json.dumps(job))
    r = subprocess.run([node_bin, str(NODE_SIDE), str(path)], capture_output=True, text=True, timeout=600, cwd=ROOT)
    if r.returncode != 0:
        raise RuntimeError(f"node_side.mjs failed:\n{r.stderr}")
    return json.loads(r.stdout)


_jobs = iter(range(1 << 30))


def rgb_image(h: int, w: int, seed: int = 0) -> np.ndarray:
    """A colour image with smooth regions, edges and some noise (like a stained slide)."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w]
    img = np.stack(
        [
            128 + 100 * np.sin(x / 17.0) * np.cos(y / 23.0),
            90 + 0.5 * ((x + 2 * y) % 160),
            200 - 60 * (((x // 24) + (y // 24)) % 2),
        ],
        axis=-1,
    )
    img += rng.normal(0, 6, img.shape)
    return np.clip(img, 0, 255).astype(np.uint8)


def gray_image(h: int, w: int, seed: int = 1) -> np.ndarray:
    return rgb_image(h, w, seed)[..., 0].copy()


@pytest.fixture
def tmp(tmp_path: Path) -> Path:
    return tmp_path
