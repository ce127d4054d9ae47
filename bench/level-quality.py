"""How faithful levels 1+ of a JPEG-tiled TIFF are, by the quality they are re-encoded at.

Level 0 of such a TIFF is its tiles, copied; levels 1+ are the exact 2×2 averages of the
level above (never re-decoded JPEG), re-encoded. This prints, for slides written by libvips
at low tile qualities, each derived level's PSNR against the exact averages of level 0 as
libjpeg-turbo decodes it (tifffile), and the share of the store's bytes levels 1+ take, for
a range of level qualities and the converter's default (each level's lowest quality keeping
a sample ≥ 30 dB, --level-psnr). docs/converter.md quotes the table.

    .venv/bin/python bench/level-quality.py
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import tifffile
import zarr

import zarr_jpeg

ROOT = Path(__file__).resolve().parent.parent
SIDE = 4096
SLIDES = [("ihc.png", 30), ("ihc.png", 50), ("cell.png", 30)]
QUALITIES = [30, 40, 50, 60, 70, 80]


def exact_level(level0: np.ndarray, level: int) -> np.ndarray:
    """The converter's level `level` from level 0 without loss: rounded 2×2 means, level by level."""
    a = level0.astype(np.float64)
    for _ in range(level):
        h, w = a.shape[:2]
        padded_h, padded_w = h + h % 2, w + w % 2
        total = np.zeros((padded_h, padded_w) + a.shape[2:])
        count = np.zeros((padded_h, padded_w) + (1,) * (a.ndim - 2))
        total[:h, :w] = a
        count[:h, :w] = 1
        s = total.reshape(padded_h // 2, 2, padded_w // 2, 2, *a.shape[2:]).sum(axis=(1, 3))
        n = count.reshape(padded_h // 2, 2, padded_w // 2, 2, *count.shape[2:]).sum(axis=(1, 3))
        a = np.floor(s / n + 0.5)
    return a


def psnr(a: np.ndarray, b: np.ndarray) -> float:
    mse = np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)
    return float("inf") if mse == 0 else 10 * np.log10(255**2 / mse)


def make_slide(work: Path, source: str, quality: int) -> Path:
    tiff = work / f"{Path(source).stem}-q{quality}.tif"
    big = work / f"{Path(source).stem}.v"
    if not big.exists():
        subprocess.run(["vips", "replicate", str(ROOT / "samples" / source), str(work / "rep.v"), "8", "8"], check=True)
        subprocess.run(["vips", "crop", str(work / "rep.v"), str(big), "0", "0", str(SIDE), str(SIDE)], check=True)
    subprocess.run(["vips", "tiffsave", str(big), str(tiff), "--compression", "jpeg", "--Q", str(quality), "--tile",
                    "--tile-width", "256", "--tile-height", "256"], check=True)
    return tiff


def level_arrays(store: Path) -> list[np.ndarray]:
    group = zarr.open_group(store, mode="r")
    out = []
    for dataset in group.attrs["ome"]["multiscales"][0]["datasets"]:
        a = np.asarray(group[dataset["path"]][...])
        out.append(np.moveaxis(a, 0, -1) if a.ndim == 3 else a)
    return out


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        print(f"| slide ({SIDE}², libvips tiles) | levels 1+ quality | level 1 dB | level 2 dB | level 3 dB | levels 1+ share of bytes |")
        print("|---|---|---|---|---|---|")
        for source, tile_quality in SLIDES:
            tiff = make_slide(work, source, tile_quality)
            level0 = tifffile.imread(tiff)
            for quality in [*QUALITIES, None]:
                store = work / "out.zarr"
                options = {} if quality is None else {"quality": quality}
                summary = zarr_jpeg.convert(tiff, store, overwrite=True, progress=False, **options)
                levels = level_arrays(store)
                dbs = [psnr(levels[k], exact_level(level0, k)) for k in (1, 2, 3)]
                share = 1 - summary["levels"][0]["encodedBytes"] / summary["encodedBytes"]
                chosen = ", ".join(str(q) for q in summary["levelQualities"])
                label = f"{quality}" if quality is not None else f"**default (≥ 30 dB): {chosen}**"
                print(f"| {source} at Q{tile_quality} | {label} | " + " | ".join(f"{d:.1f}" for d in dbs) + f" | {share:.0%} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
