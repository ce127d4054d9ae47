"""zarr_jpeg.JpegCodec in zarr-python: found by name through the entry point, its metadata,
validation, the sync and async paths, pickling, and errors for bad chunks."""

from __future__ import annotations

import asyncio
import json
import pickle
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
import zarr
from zarr.codecs import ShardingCodec, TransposeCodec

import zarr_jpeg
from zarr_jpeg import JpegCodec
from conftest import gray_image, rgb_image

C420 = dict(quality=90, encoded_color_space="ycbcr", subsampling=[[2, 2], [1, 1], [1, 1]])


def test_the_entry_point_registers_it_as_jpeg_with_no_import():
    # a fresh interpreter that never imports zarr_jpeg itself
    code = "import zarr.registry as r; c = r.get_codec_class('jpeg'); print(c.__module__, c.__qualname__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["zarr_jpeg._codec", "JpegCodec"]
    assert zarr.registry.get_codec_class("jpeg") is JpegCodec


def test_to_dict_writes_the_normalised_configuration_and_from_dict_reads_it():
    codec = JpegCodec(**C420)
    assert codec.to_dict() == {"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "ycbcr", "decoded_color_space": "rgb", "subsampling": [[2, 2], [1, 1], [1, 1]]}}
    assert JpegCodec.from_dict(codec.to_dict()) == codec
    gray = JpegCodec.from_dict({"name": "jpeg", "configuration": {"quality": 50, "encoded_color_space": "grayscale", "subsampling": [[1, 1]]}})
    assert gray.to_dict() == {"name": "jpeg", "configuration": {"quality": 50, "encoded_color_space": "grayscale", "decoded_color_space": "grayscale"}}
    assert JpegCodec(encoded_color_space="rgb").quality == 95  # the spec's builder default
    with pytest.raises(ValueError, match="quality must be an integer from 1 to 100, got 0"):
        JpegCodec.from_dict({"name": "jpeg", "configuration": {"quality": 0, "encoded_color_space": "rgb"}})
    with pytest.raises(ValueError, match='unknown member "speed"'):
        JpegCodec.from_dict({"name": "jpeg", "configuration": {"quality": 9, "encoded_color_space": "rgb", "speed": 1}})
    with pytest.raises(ValueError, match="subsampling is required"):
        JpegCodec(encoded_color_space="ycbcr")
    assert pickle.loads(pickle.dumps(codec)) == codec


def test_validate_refuses_other_data_types_and_chunk_shapes_the_spec_refuses():
    store = zarr.storage.MemoryStore()
    with pytest.raises(TypeError, match="uint8 data only, got data type uint16"):
        zarr.create_array(store, name="a", shape=(64, 64), chunks=(32, 32), dtype="uint16", serializer=JpegCodec(encoded_color_space="grayscale"), compressors=None)
    with pytest.raises(ValueError, match="has 4 channels on its last axis"):
        zarr.create_array(store, name="b", shape=(64, 64, 4), chunks=(32, 32, 4), dtype="uint8", serializer=JpegCodec(encoded_color_space="rgb"), compressors=None)
    with pytest.raises(ValueError, match="has 3 components but encoded_color_space \"grayscale\" stores 1"):
        zarr.create_array(store, name="c", shape=(64, 64, 3), chunks=(32, 32, 3), dtype="uint8", serializer=JpegCodec(encoded_color_space="grayscale"), compressors=None)
    # a 4-D chunk could be reshaped by a codec before jpeg (validate() sees the array's shape,
    # not the codecs before it), so without one it is refused when a chunk is written
    d = zarr.create_array(store, name="d", shape=(2, 64, 64, 3), chunks=(1, 32, 32, 3), dtype="uint8", serializer=JpegCodec(encoded_color_space="rgb"), compressors=None)
    with pytest.raises(ValueError, match="is 4-D"):
        d[:] = 7  # (not the fill value: zarr-python does not write empty chunks)
    # ... as is one whose leading axes a reshape folds into the height ((z, y, x, 3) → (z·y, x, 3))
    d2 = zarr.create_array(store, name="d2", shape=(2, 64, 64, 3), chunks=(2, 32, 32, 3), dtype="uint8", serializer=JpegCodec(encoded_color_space="rgb"), compressors=None)
    with pytest.raises(ValueError, match="is 4-D"):
        d2[:] = 7
    # (3, H, W) with a transpose codec before jpeg: the codec sees (H, W, 3)
    a = zarr.create_array(store, name="e", shape=(3, 40, 50), chunks=(3, 32, 32), dtype="uint8", filters=[TransposeCodec(order=(1, 2, 0))], serializer=JpegCodec(**C420), compressors=None)
    image = rgb_image(40, 50)
    a[:] = np.moveaxis(image, -1, 0)
    back = np.moveaxis(a[:], 0, -1)
    assert np.abs(back.astype(int) - image.astype(int)).mean() < 6
    # ... without it, a chunk no axis order or fold makes valid is refused when the array is made
    with pytest.raises(ValueError, match="chunk shape \\[32, 32, 4\\] has 4 channels"):
        zarr.create_array(store, name="f", shape=(40, 50, 4), chunks=(32, 32, 4), dtype="uint8", serializer=JpegCodec(encoded_color_space="grayscale"), compressors=None)
    # ... and a (z, y, x) grayscale chunk, which a reshape folds into (z·y, x), when one is written
    f2 = zarr.create_array(store, name="f2", shape=(3, 40, 50), chunks=(3, 32, 32), dtype="uint8", serializer=JpegCodec(encoded_color_space="grayscale"), compressors=None)
    with pytest.raises(ValueError, match="chunk shape \\[3, 32, 32\\] has 32 channels"):
        f2[:] = 7
    # ... and one only another axis order makes valid, when a chunk is written
    g = zarr.create_array(store, name="g", shape=(40, 3, 50), chunks=(32, 3, 32), dtype="uint8", serializer=JpegCodec(**C420), compressors=None)
    with pytest.raises(ValueError, match="chunk shape \\[32, 3, 32\\] has 32 channels"):
        g[:] = 7  # (not the fill value: chunks of only that are not written)


@pytest.mark.parametrize("sharded", [False, True], ids=["unsharded", "sharded"])
def test_arrays_round_trip_with_partial_chunks_through_the_async_and_sync_paths(sharded, tmp):
    image = rgb_image(150, 100)
    kw = dict(shards=(128, 64, 3)) if sharded else {}
    a = zarr.create_array(str(tmp / "s.zarr"), shape=image.shape, chunks=(64, 32, 3), dtype="uint8", serializer=JpegCodec(**C420), compressors=None, **kw)
    a[:] = image
    meta = json.loads((tmp / "s.zarr" / "zarr.json").read_text())
    codecs = meta["codecs"][0]["configuration"]["codecs"] if sharded else meta["codecs"]
    assert codecs[0] == {"name": "jpeg", "configuration": JpegCodec(**C420).to_dict()["configuration"]}
    reopened = zarr.open_array(str(tmp / "s.zarr"), mode="r")
    back = reopened[:]
    assert back.shape == image.shape
    assert np.abs(back.astype(int) - image.astype(int)).mean() < 6
    # every stored chunk is the stream the codec's own encode() writes (zero-padded at the edges)
    if not sharded:
        chunk = (tmp / "s.zarr" / "c" / "2" / "3" / "0").read_bytes()
        edge = np.zeros((64, 32, 3), np.uint8)
        edge[:22, :4] = image[128:, 96:]
        assert chunk == zarr_jpeg.encode(edge, JpegCodec(**C420).configuration)
    # the synchronous hooks give what the async path gives
    codec = JpegCodec(**C420)
    spec = reopened.metadata.codecs[0] if not sharded else None
    stream = zarr_jpeg.encode(image[:64, :32], codec.configuration)
    from zarr.core.array_spec import ArrayConfig, ArraySpec
    from zarr.core.buffer import default_buffer_prototype
    from zarr.core.dtype import UInt8

    spec = ArraySpec(shape=(64, 32, 3), dtype=UInt8(), fill_value=0, config=ArrayConfig.from_dict({}), prototype=default_buffer_prototype())
    buf = default_buffer_prototype().buffer.from_bytes(stream)
    sync = codec._decode_sync(buf, spec).as_numpy_array()
    async_ = asyncio.run(codec._decode_single(buf, spec)).as_numpy_array()
    assert np.array_equal(sync, async_) and np.array_equal(sync, zarr_jpeg.decode(stream, codec.configuration, (64, 32, 3)))
    nd = default_buffer_prototype().nd_buffer.from_numpy_array(image[:64, :32])
    assert codec._encode_sync(nd, spec).to_bytes() == stream == asyncio.run(codec._encode_single(nd, spec)).to_bytes()


def test_a_corrupt_chunk_raises_an_error_naming_the_problem(tmp):
    a = zarr.create_array(str(tmp / "c.zarr"), shape=(64, 64), chunks=(32, 32), dtype="uint8", serializer=JpegCodec(encoded_color_space="grayscale"), compressors=None)
    a[:] = gray_image(64, 64)
    chunk = tmp / "c.zarr" / "c" / "1" / "0"
    chunk.write_bytes(chunk.read_bytes()[:60])
    with pytest.raises(zarr_jpeg.JpegError, match="corrupt JPEG stream") as e:
        zarr.open_array(str(tmp / "c.zarr"), mode="r")[32:, :32]
    assert e.value.kind == "CorruptStream"


@pytest.mark.parametrize("op", ["decode", "encode"])
def test_the_gil_is_released_while_a_chunk_is_decoded_or_encoded(op):
    # With a switch interval of minutes, a thread holding the GIL keeps it until it blocks or
    # releases it itself. So the main thread counts ticks while the worker is still busy only
    # if encode()/decode() release the GIL (the main thread hands it back with sleep(0)).
    image = rgb_image(1024, 1024)
    config = JpegCodec(**C420).configuration
    stream = zarr_jpeg.encode(image, config)
    work = (lambda: zarr_jpeg.decode(stream, config, image.shape)) if op == "decode" else (lambda: zarr_jpeg.encode(image, config))
    done = threading.Event()
    ticks = 0

    def worker():
        for _ in range(4):
            work()
        done.set()

    interval = sys.getswitchinterval()
    sys.setswitchinterval(300)
    try:
        t = threading.Thread(target=worker)
        t.start()
        while not done.is_set():
            ticks += 1
            time.sleep(0)
        t.join()
    finally:
        sys.setswitchinterval(interval)
    assert ticks > 0, f"the main thread never ran during 4 calls of {op}(): the GIL was held"


def test_encode_options_change_the_written_chunks_but_not_the_stored_configuration(tmp):
    image = rgb_image(128, 96)
    codec = JpegCodec(**C420, encode_options={"trellis": True, "quant_table": "flat"})
    assert codec.to_dict() == JpegCodec(**C420).to_dict()
    assert pickle.loads(pickle.dumps(codec)) == codec and codec != JpegCodec(**C420)
    a = zarr.create_array(str(tmp / "o.zarr"), shape=image.shape, chunks=(64, 96, 3), dtype="uint8", serializer=codec, compressors=None)
    a[:] = image
    stored = (tmp / "o.zarr" / "c" / "1" / "0" / "0").read_bytes()
    assert stored == zarr_jpeg.encode(image[64:], codec.configuration, trellis=True, quant_table="flat")
    assert stored != zarr_jpeg.encode(image[64:], codec.configuration)
    assert json.loads((tmp / "o.zarr" / "zarr.json").read_text())["codecs"][0] == JpegCodec(**C420).to_dict()
    with pytest.raises(ValueError, match="the encode option trellis must be true or false, got \"yes\" \\(a string\\)"):
        JpegCodec(**C420, encode_options={"trellis": "yes"})
    with pytest.raises(ValueError, match='unknown encode option "speed"'):
        JpegCodec(**C420, encode_options={"speed": 1})
