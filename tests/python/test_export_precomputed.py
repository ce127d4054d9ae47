"""JPEG OME-Zarr out as neuroglancer precomputed volumes: stores converted from tensorstore-written
precomputed volumes and from a tifffile-written z-stack are exported by both packages (the same
files), and tensorstore's `neuroglancer_precomputed` driver reads back what zarr-python reads of
the Zarr store, with the chunks that lie inside the volume copied byte for byte. What
precomputed cannot hold (time series, channels as separate grayscale chunks) is refused by name,
with nothing left at the destination."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
import tifffile
import zarr

import zarr_jpeg
from test_convert import CLI, SCRIPT, files, node_convert
from test_convert_precomputed import CHUNK, psnr, tensorstore_read, volumes, write_volume  # noqa: F401 (fixture)

ts = pytest.importorskip("tensorstore")


def node_export(src: Path, dst: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["node", str(CLI), "export", "--precomputed", str(src), str(dst), *args], capture_output=True, text=True, timeout=600)


def script_export(src: Path, dst: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(SCRIPT), "export", "--precomputed", str(src), str(dst), *args], capture_output=True, text=True, timeout=600)


def zarr_read(store: Path, level: int) -> np.ndarray:
    """A level as x, y, z, channel (tensorstore's order)."""
    data = zarr.open_array(store / str(level), mode="r")[:]
    if data.ndim == 3:
        data = data[np.newaxis]
    return np.transpose(data, (3, 2, 1, 0))


@pytest.mark.parametrize("name", ["gray", "rgb-murmur"])
def test_tensorstore_reads_what_zarr_python_reads(volumes, tmp: Path, name: str) -> None:
    source, _ = volumes[name]
    zarr_jpeg.convert(source, tmp / "v.zarr", progress=False)
    summary = zarr_jpeg.export_precomputed(tmp / "v.zarr", tmp / "out", progress=False)
    info = json.loads((tmp / "out" / "info").read_text())
    assert info["num_channels"] == (3 if name.startswith("rgb") else 1)
    assert [s["resolution"] for s in info["scales"]] == [[4, 4, 40], [8, 8, 40]]
    assert [s["chunk_sizes"] for s in info["scales"]] == [[list(CHUNK)]] * 2
    for level in (0, 1):
        exported = tensorstore_read(tmp / "out", level)
        expected = zarr_read(tmp / "v.zarr", level)
        assert exported.shape == expected.shape
        # the copied chunks decode alike (libjpeg-turbo and this codec; colour: their chroma
        # upsampling differs), the re-encoded edges within JPEG tolerance
        assert psnr(exported, expected) >= 40, level
        if level == 0:
            interior = (slice(0, 128), slice(0, 64), slice(0, 32))
            assert psnr(exported[interior], expected[interior]) >= 48
    # scale 0: 4 full chunks copied; the rest re-encoded
    assert summary["chunks"] == {"copied": 4, "reencoded": 20, "missing": 0}
    # precomputed → Zarr → precomputed gives the chunk files back byte for byte
    key = info["scales"][0]["key"]
    if name == "gray":
        original = (source / key / "64-128_0-64_16-32").read_bytes()
        assert (tmp / "out" / key / "64-128_0-64_16-32").read_bytes() == original


@pytest.mark.parametrize("depth,downsample_z", [(1, False), (4, False), (2, True)])
def test_a_z_stack_converted_from_tiff_exports_with_its_physical_sizes(tmp: Path, depth: int, downsample_z: bool) -> None:
    Z, H, W = 5, 150, 200
    y, x = np.mgrid[0:H, 0:W]
    stack = np.array([(np.sin(x / 9 + z) + np.cos(y / 13)) * 60 + 120 for z in range(Z)]).clip(0, 255).astype(np.uint8)
    tifffile.imwrite(tmp / "z.ome.tif", stack, ome=True, photometric="minisblack",
                     metadata={"axes": "ZYX", "PhysicalSizeX": 0.5, "PhysicalSizeY": 0.5, "PhysicalSizeZ": 2.0})
    zarr_jpeg.convert(tmp / "z.ome.tif", tmp / "z.zarr", chunk=64, chunk_depth=depth, downsample_z=downsample_z, progress=False)
    zarr_jpeg.export_precomputed(tmp / "z.zarr", tmp / "out", progress=False)
    info = json.loads((tmp / "out" / "info").read_text())
    assert info["scales"][0]["resolution"] == [500, 500, 2000]
    assert info["scales"][0]["chunk_sizes"] == [[64, 64, depth]]
    assert info["scales"][0]["size"] == [W, H, Z]
    if downsample_z:
        # levels that halve z: 5 → 3 → 2 planes, z's resolution doubled
        assert [s["size"][2] for s in info["scales"]] == [5, 3, 2]
        assert [s["resolution"] for s in info["scales"]] == [[500, 500, 2000], [1000, 1000, 4000], [2000, 2000, 8000]]
        for level in (1, 2):
            assert psnr(tensorstore_read(tmp / "out", level), zarr_read(tmp / "z.zarr", level)) >= 40, level
    exported = tensorstore_read(tmp / "out", 0)
    assert psnr(exported, zarr_read(tmp / "z.zarr", 0)) >= 40
    assert psnr(exported[..., 0].transpose(2, 1, 0), stack) >= 35
    # a chunk inside the image is the Zarr chunk (with chunks of several z planes, the first of them)
    z = "2-3" if depth == 1 else f"0-{depth}"
    zarr_chunk = (tmp / "z.zarr" / "0" / f"c/{2 if depth == 1 else 0}/1/1").read_bytes()
    assert (tmp / "out" / info["scales"][0]["key"] / f"64-128_64-128_{z}").read_bytes() == zarr_chunk


def test_both_packages_export_the_same_files_from_plain_and_sharded_stores(volumes, tmp: Path) -> None:
    source, _ = volumes["gray"]
    zarr_jpeg.convert(source, tmp / "plain.zarr", progress=False)
    done = node_convert(source, tmp / "sharded.zarr", ["--shard", "128"])
    assert done.returncode == 0, done.stderr
    outputs = []
    for store in ["plain.zarr", "sharded.zarr"]:
        for run in (node_export, script_export):
            out = tmp / f"{store}-{run.__name__}"
            done = run(tmp / store, out)
            assert done.returncode == 0, done.stderr
            outputs.append(files(out))
    assert all(o == outputs[0] for o in outputs[1:])


def test_what_precomputed_cannot_hold_is_refused_by_name(tmp: Path) -> None:
    T, C, H, W = 2, 2, 64, 64
    data = np.full((T, C, 1, H, W), 100, np.uint8)
    tifffile.imwrite(tmp / "tc.ome.tif", data, ome=True, photometric="minisblack", metadata={"axes": "TCZYX"})
    zarr_jpeg.convert(tmp / "tc.ome.tif", tmp / "tc.zarr", progress=False)
    tifffile.imwrite(tmp / "c.ome.tif", data[0], ome=True, photometric="minisblack", metadata={"axes": "CZYX"})
    zarr_jpeg.convert(tmp / "c.ome.tif", tmp / "c.zarr", progress=False)
    tifffile.imwrite(tmp / "g.tif", data[0, 0, 0], photometric="minisblack")
    zarr_jpeg.convert(tmp / "g.tif", tmp / "g.zarr", progress=False)
    (tmp / "taken").mkdir()
    (tmp / "taken" / "notes.txt").write_text("mine")
    cases = [
        (tmp / "tc.zarr", tmp / "out", [], "2 time points: a precomputed volume has no time axis"),
        (tmp / "c.zarr", tmp / "out", [], "2 channels: a precomputed jpeg volume holds 1 (grayscale) or 3 (colour)"),
        (tmp / "tc.ome.tif", tmp / "out", [], "is not a directory"),
        (tmp / "g.zarr", tmp / "taken", ["--overwrite"], "is not a precomputed volume (no info file at its top)"),
    ]
    for src, dst, args, message in cases:
        for run in (node_export, script_export):
            done = run(src, dst, *args)
            assert done.returncode == 1, (run.__name__, done.stderr)
            last = done.stderr.strip().splitlines()[-1]
            assert message in last and last.startswith("zarr-jpeg export: "), (run.__name__, done.stderr)
            assert not (tmp / "out").exists()
            assert (tmp / "taken" / "notes.txt").read_text() == "mine"
