"""The OME-Zarr writers of docs/python.md pass JpegCodec as each level's serializer, and what
they write is read back by zarr-python and by zarrita + register() (the npm package, in Node),
sample for sample alike: ome-zarr-py through its storage_options, ngff-zarr by writing the
metadata and re-creating each level with zarr.create_array (its default write engine encodes
only bytes + gzip/zstd/blosc and says so)."""

from __future__ import annotations

import json

import numpy as np
import zarr
from zarr.codecs import TransposeCodec

from zarr_jpeg import JpegCodec
from conftest import node, rgb_image

CODEC = JpegCodec(quality=90, encoded_color_space="ycbcr", subsampling=[[2, 2], [1, 1], [1, 1]])
CHW_TO_HWC = [TransposeCodec(order=(1, 2, 0))]


def check_levels(store, paths, image_cyx, tmp):
    """Every level names transpose + jpeg; zarrita reads it exactly as zarr-python does; level 0
    is the image within JPEG's error."""
    group = zarr.open_group(str(store), mode="r")
    js = node({"op": "read", "store": str(store), "arrays": [{"name": p, "out": str(tmp / f"{i}.bin")} for i, p in enumerate(paths)]}, tmp)
    for i, (path, info) in enumerate(zip(paths, js)):
        meta = json.loads((store / path / "zarr.json").read_text())
        assert [c["name"] for c in meta["codecs"]] == ["transpose", "jpeg"], (path, meta["codecs"])
        ours = group[path][...]
        assert list(ours.shape) == info["shape"]
        assert np.array_equal(ours.ravel(), np.frombuffer((tmp / f"{i}.bin").read_bytes(), np.uint8)), path
    level0 = group[paths[0]][...]
    assert level0.shape == image_cyx.shape
    assert np.abs(level0.astype(int) - image_cyx.astype(int)).mean() < 6


def test_ome_zarr_py_writes_with_the_codec(tmp):
    from ome_zarr.writer import write_image

    image_cyx = np.moveaxis(rgb_image(300, 260), -1, 0).copy()
    store = tmp / "ome-zarr-py.ome.zarr"
    group = zarr.open_group(str(store), mode="w")
    write_image(image_cyx, group, axes="cyx", storage_options=dict(chunks=(3, 128, 128), serializer=CODEC, filters=CHW_TO_HWC, compressors=None))
    attrs = json.loads((store / "zarr.json").read_text())["attributes"]
    paths = [d["path"] for d in attrs["ome"]["multiscales"][0]["datasets"]]
    assert len(paths) > 1
    check_levels(store, paths, image_cyx, tmp)


def test_ngff_zarr_metadata_then_levels_written_with_the_codec(tmp):
    import ngff_zarr as nz

    image_cyx = np.moveaxis(rgb_image(300, 260), -1, 0).copy()
    store = tmp / "ngff-zarr.ome.zarr"
    multiscales = nz.to_multiscales(nz.to_ngff_image(image_cyx, dims=["c", "y", "x"]), scale_factors=[2, 4])
    nz.to_ngff_zarr(str(store), multiscales, version="0.5", metadata_only=True)
    root = zarr.open_group(str(store), mode="a")
    for image, dataset in zip(multiscales.images, multiscales.metadata.datasets):
        old = root[dataset.path]
        level = zarr.create_array(root.store, name=dataset.path, shape=old.shape, dtype="uint8", chunks=(3, 128, 128),
                                  serializer=CODEC, filters=CHW_TO_HWC, compressors=None,
                                  dimension_names=old.metadata.dimension_names, overwrite=True)
        level[...] = np.asarray(image.data)
    zarr.consolidate_metadata(str(store))  # ngff-zarr consolidated the levels it wrote first
    check_levels(store, [d.path for d in multiscales.metadata.datasets], image_cyx, tmp)
