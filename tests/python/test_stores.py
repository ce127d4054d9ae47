"""Stores go both ways: zarr-python (with this package) reads what `zarr-jpeg convert` writes,
transpose and sharding included, and zarrita + register() (the npm package, in Node) read what
zarr-python writes with JpegCodec. Both sides run the same core, so they agree exactly."""

from __future__ import annotations

import json

import numpy as np
import pytest
import zarr
from zarr.codecs import TransposeCodec

from zarr_jpeg import JpegCodec
from conftest import gray_image, node, rgb_image


def test_zarr_python_reads_what_zarr_jpeg_convert_writes(tmp):
    cases = {
        # (c, y, x) with transpose before jpeg, 32-pixel chunks in 64-pixel shards (partial ones)
        "rgb-sharded": (rgb_image(100, 150), {"chunk": 32, "shard": 64, "quality": 90}),
        "rgb": (rgb_image(70, 45), {"chunk": 32, "quality": 80, "subsampling": [[2, 1], [1, 1], [1, 1]]}),
        "gray-sharded": (gray_image(101, 67), {"chunk": 16, "shard": 32, "quality": 85}),
    }
    for name, (image, options) in cases.items():
        data = tmp / f"{name}.bin"
        data.write_bytes(image.tobytes())
        node({"op": "convert", "data": str(data), "shape": list(image.shape), "dir": str(tmp / f"{name}.zarr"), "options": options}, tmp)
    for name, (image, options) in cases.items():
        store = tmp / f"{name}.zarr"
        levels = sorted(p.name for p in store.iterdir() if p.is_dir())
        assert levels and levels[0] == "0"
        meta = json.loads((store / "0" / "zarr.json").read_text())
        names = [c["name"] for c in meta["codecs"]]
        assert names[0] == ("sharding_indexed" if "shard" in options else "transpose" if image.ndim == 3 else "jpeg")
        js = node({"op": "read", "store": str(store), "arrays": [{"name": lv, "out": str(tmp / f"{name}-{lv}.js.bin")} for lv in levels]}, tmp)
        group = zarr.open_group(str(store), mode="r")
        for level, info in zip(levels, js):
            ours = group[level][...]
            assert list(ours.shape) == info["shape"], f"{name} level {level}"
            assert np.array_equal(ours.ravel(), np.frombuffer((tmp / f"{name}-{level}.js.bin").read_bytes(), np.uint8)), f"{name} level {level}"
        full = group["0"][...]
        if image.ndim == 3:
            full = np.moveaxis(full, 0, -1)  # OME-Zarr (c, y, x)
        assert full.shape == image.shape
        assert np.abs(full.astype(int) - image.astype(int)).mean() < 6, name


def write_python_store(tmp):
    """zarr-python writes arrays with JpegCodec: unsharded and sharded, partial chunks and
    shards, (c, y, x) with a transpose filter, grayscale (H, W) and (H, W, 1)."""
    root = zarr.open_group(str(tmp / "py.zarr"), mode="w")
    c420 = JpegCodec(quality=90, encoded_color_space="ycbcr", subsampling=[[2, 2], [1, 1], [1, 1]])
    arrays = {
        "rgb": (rgb_image(100, 130), dict(chunks=(64, 64, 3), serializer=c420)),
        "rgb-sharded": (rgb_image(150, 100), dict(chunks=(32, 32, 3), shards=(64, 64, 3), serializer=JpegCodec(quality=80, encoded_color_space="rgb"))),
        "chw-transpose-sharded": (np.moveaxis(rgb_image(90, 120), -1, 0).copy(), dict(chunks=(3, 32, 32), shards=(3, 64, 64), filters=[TransposeCodec(order=(1, 2, 0))], serializer=c420)),
        "gray": (gray_image(75, 41), dict(chunks=(32, 32), serializer=JpegCodec(quality=70, encoded_color_space="grayscale"))),
        "gray-c1-sharded": (gray_image(80, 80)[..., None].copy(), dict(chunks=(16, 16, 1), shards=(48, 48, 1), serializer=JpegCodec(quality=60, encoded_color_space="grayscale"))),
    }
    for name, (image, kw) in arrays.items():
        a = root.create_array(name, shape=image.shape, dtype="uint8", compressors=None, **kw)
        a[:] = image
    return root, arrays


def test_zarrita_reads_what_zarr_python_writes_with_this_codec(tmp):
    root, arrays = write_python_store(tmp)
    js = node({"op": "read", "store": str(tmp / "py.zarr"), "arrays": [{"name": n, "out": str(tmp / f"{n}.bin")} for n in arrays]}, tmp)
    for (name, (image, _)), info in zip(arrays.items(), js):
        ours = root[name][...]
        assert info["shape"] == list(image.shape), name
        theirs = np.frombuffer((tmp / f"{name}.bin").read_bytes(), np.uint8).reshape(image.shape)
        assert np.array_equal(ours, theirs), f"{name}: zarrita and zarr-python decode differently"
        assert np.abs(ours.astype(int) - image.astype(int)).mean() < 8, name


def test_zarrita_in_headless_chromium_reads_what_zarr_python_writes_with_this_codec(tmp):
    root, arrays = write_python_store(tmp)
    for name in arrays:
        (tmp / f"{name}.expected.bin").write_bytes(root[name][...].tobytes())  # zarr-python's decode
    job = [{"name": n, "expected": str(tmp / f"{n}.expected.bin"), "shape": list(image.shape)} for n, (image, _) in arrays.items()]
    result = node({"op": "read-browser", "store": str(tmp / "py.zarr"), "arrays": job}, tmp)
    assert [run["mode"] for run in result["runs"]] == ["main thread", "workers"]
    for run in result["runs"]:
        assert [r["name"] for r in run["results"]] == list(arrays)
        for r, (name, (image, _)) in zip(run["results"], arrays.items()):
            assert r["shape"] == list(image.shape), name
            assert r["max"] == 0, f"{name} in Chromium ({run['mode']}): max |zarrita - zarr-python| = {r['max']}"
    assert result["consoleErrors"] == []
