"""Dask, the engine for more than one machine: `dask.array.to_zarr` through a
distributed.LocalCluster of worker *processes* writes a 4096 x 4096 x 3 array with the jpeg
codec inside sharding_indexed (Dask chunks = shards, so no two tasks write one shard), and the
array reads back. The codec travels to the workers by pickle and runs there: each shard file
they write is byte-identical to the one this process writes from the same samples."""

from __future__ import annotations

import numpy as np
import pytest
import zarr

from zarr_jpeg import JpegCodec

da = pytest.importorskip("dask.array", reason="dask is in tests/python/requirements.txt")
distributed = pytest.importorskip("distributed")

SHAPE = (4096, 4096, 3)
SHARD = (2048, 2048, 3)
CHUNK = (512, 512, 3)


def smooth_block(block: np.ndarray, block_info=None) -> np.ndarray:
    """The samples of one block, from its position alone (made on the worker)."""
    (y0, y1), (x0, x1), _ = block_info[None]["array-location"]
    y, x = np.mgrid[y0:y1, x0:x1]
    img = np.stack([128 + 100 * np.sin(x / 41.0) * np.cos(y / 53.0), (x + y) % 256 * 0.6 + 40, 160 + 60 * np.sin((x - y) / 97.0)], axis=-1)
    return img.astype(np.uint8)


def create(path) -> zarr.Array:
    codec = JpegCodec(quality=90, encoded_color_space="ycbcr", subsampling=[[2, 2], [1, 1], [1, 1]])
    return zarr.create_array(str(path), shape=SHAPE, chunks=CHUNK, shards=SHARD, dtype="uint8", serializer=codec, compressors=None, fill_value=0)


def test_dask_workers_write_a_sharded_jpeg_array_that_reads_back(tmp_path):
    x = da.zeros(SHAPE, dtype=np.uint8, chunks=SHARD).map_blocks(smooth_block, dtype=np.uint8)
    target = create(tmp_path / "dask.zarr")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        da.to_zarr(x, target, compute=True)
        workers = client.run(lambda: __import__("os").getpid())
        assert len(set(workers.values())) == 2  # two worker processes, not this one
        # ... and read back through the cluster too
        back = da.from_zarr(str(tmp_path / "dask.zarr")).compute()
    expected = x.compute(scheduler="synchronous")
    assert back.shape == SHAPE and back.dtype == np.uint8
    error = np.abs(back.astype(int) - expected.astype(int))
    assert error.mean() < 2.5, error.mean()  # (the sawtooth's edges cost the most)
    # The same samples written here, without Dask: every shard file is the same bytes.
    local = create(tmp_path / "local.zarr")
    local[:] = expected
    shards = sorted(p.relative_to(tmp_path / "local.zarr") for p in (tmp_path / "local.zarr" / "c").rglob("*") if p.is_file())
    assert len(shards) == 4
    for s in shards:
        assert (tmp_path / "dask.zarr" / s).read_bytes() == (tmp_path / "local.zarr" / s).read_bytes(), s
