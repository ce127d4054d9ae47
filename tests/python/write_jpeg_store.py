#!/usr/bin/env python3
"""An independent writer for the Zarr v3 `jpeg` codec: zarr-python with the codec (and
`reshape`) implemented here on top of Pillow (libjpeg-turbo). Writes a store of arrays
covering unsharded and sharded layouts, partial edge chunks and shards, missing inner
chunks, the transpose layout (channel axis first) and the reshape (neuroglancer) layout,
then reads every array back through zarr-python — i.e. decoded by Pillow — and saves
those samples as the expected values for the JS reader test.

    python3 tests/python/write_jpeg_store.py OUT_DIR

OUT_DIR/store is the Zarr store; OUT_DIR/expected/<name>.bin the C-order samples Pillow
decodes; OUT_DIR/manifest.json lists the arrays, their shapes and codecs.
"""
from __future__ import annotations

import io
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

import zarr
from zarr.abc.codec import ArrayArrayCodec, ArrayBytesCodec
from zarr.codecs import TransposeCodec
from zarr.core.array_spec import ArraySpec
from zarr.core.common import parse_named_configuration
from zarr.registry import register_codec

ROOT = Path(__file__).resolve().parents[2]
PIL_SUBSAMPLING = {((1, 1), (1, 1), (1, 1)): "4:4:4", ((2, 1), (1, 1), (1, 1)): "4:2:2", ((2, 2), (1, 1), (1, 1)): "4:2:0"}


@dataclass(frozen=True)
class PillowJpegCodec(ArrayBytesCodec):
    """The `jpeg` codec (zarr-extensions codecs/jpeg) via Pillow. Supports grayscale,
    rgb → ycbcr (4:4:4, 4:2:2, 4:2:0) and rgb (keep_rgb: no transform, Adobe marker)."""

    is_fixed_size = False
    quality: int
    encoded_color_space: str
    subsampling: tuple | None

    def __init__(self, *, quality: int, encoded_color_space: str, subsampling=None, decoded_color_space=None):
        if decoded_color_space not in (None, "rgb" if encoded_color_space != "grayscale" else "grayscale"):
            raise ValueError("this test codec decodes to the default decoded_color_space only")
        object.__setattr__(self, "quality", int(quality))
        object.__setattr__(self, "encoded_color_space", encoded_color_space)
        sub = None if subsampling is None else tuple(tuple(f) for f in subsampling)
        if encoded_color_space == "ycbcr" and sub not in PIL_SUBSAMPLING:
            raise ValueError(f"subsampling {subsampling} not supported by this Pillow codec")
        object.__setattr__(self, "subsampling", sub)

    @classmethod
    def from_dict(cls, data):
        _, config = parse_named_configuration(data, "jpeg")
        return cls(**config)

    def to_dict(self):
        config = {"quality": self.quality, "encoded_color_space": self.encoded_color_space}
        if self.subsampling is not None:
            config["subsampling"] = [list(f) for f in self.subsampling]
        return {"name": "jpeg", "configuration": config}

    def _image_shape(self, shape):
        if len(shape) == 2 or (len(shape) == 3 and shape[2] in (1, 3)):
            return shape
        raise ValueError(f"jpeg: unsupported chunk shape {shape}")

    async def _encode_single(self, chunk_array, chunk_spec: ArraySpec):
        a = np.ascontiguousarray(chunk_array.as_numpy_array())
        self._image_shape(a.shape)
        if self.encoded_color_space == "grayscale":
            img = Image.fromarray(a.reshape(a.shape[0], a.shape[1]), "L")
            img.save(out := io.BytesIO(), "JPEG", quality=self.quality)
        elif self.encoded_color_space == "ycbcr":
            Image.fromarray(a, "RGB").save(out := io.BytesIO(), "JPEG", quality=self.quality, subsampling=PIL_SUBSAMPLING[self.subsampling])
        else:
            Image.fromarray(a, "RGB").save(out := io.BytesIO(), "JPEG", quality=self.quality, subsampling=0, keep_rgb=True)
        return chunk_spec.prototype.buffer.from_bytes(out.getvalue())

    async def _decode_single(self, chunk_bytes, chunk_spec: ArraySpec):
        img = Image.open(io.BytesIO(chunk_bytes.to_bytes()))
        img.load()
        a = np.asarray(img, dtype=np.uint8).reshape(chunk_spec.shape)
        return chunk_spec.prototype.nd_buffer.from_numpy_array(a)

    def compute_encoded_size(self, input_byte_length, _chunk_spec):
        raise NotImplementedError


def reshape_shape(spec, a_shape):
    sizes = [None] * len(spec)
    auto = None
    for i, s in enumerate(spec):
        if s == -1:
            auto = i
        elif isinstance(s, int):
            sizes[i] = s
        else:
            sizes[i] = math.prod(a_shape[d] for d in s)
    if auto is not None:
        sizes[auto] = math.prod(a_shape) // math.prod(s for j, s in enumerate(sizes) if j != auto)
    assert math.prod(sizes) == math.prod(a_shape), (spec, a_shape)
    return tuple(sizes)


@dataclass(frozen=True)
class ReshapeCodec(ArrayArrayCodec):
    """The `reshape` codec (zarr-extensions codecs/reshape): C-order reshape."""

    is_fixed_size = True
    shape: tuple

    def __init__(self, *, shape):
        object.__setattr__(self, "shape", tuple(tuple(s) if isinstance(s, list | tuple) else s for s in shape))

    @classmethod
    def from_dict(cls, data):
        _, config = parse_named_configuration(data, "reshape")
        return cls(**config)

    def to_dict(self):
        return {"name": "reshape", "configuration": {"shape": [list(s) if isinstance(s, tuple) else s for s in self.shape]}}

    def resolve_metadata(self, chunk_spec: ArraySpec) -> ArraySpec:
        return ArraySpec(shape=reshape_shape(self.shape, chunk_spec.shape), dtype=chunk_spec.dtype,
                         fill_value=chunk_spec.fill_value, config=chunk_spec.config, prototype=chunk_spec.prototype)

    async def _encode_single(self, chunk_array, chunk_spec):
        return chunk_array.reshape(reshape_shape(self.shape, chunk_spec.shape))

    async def _decode_single(self, chunk_array, chunk_spec):
        return chunk_array.reshape(chunk_spec.shape)

    def compute_encoded_size(self, input_byte_length, _chunk_spec):
        return input_byte_length


register_codec("jpeg", PillowJpegCodec)
register_codec("reshape", ReshapeCodec)
# This writer must stay independent of our own package, which the project's .venv also holds
# (its `zarr.codecs` entry point registers zarr_jpeg.JpegCodec as "jpeg" too): name the
# implementation zarr-python picks.
zarr.config.set({f"codecs.{name}": f"{cls.__module__}.{cls.__qualname__}" for name, cls in [("jpeg", PillowJpegCodec), ("reshape", ReshapeCodec)]})


def sample(h, w, channels):
    name = "ihc.png" if channels == 3 else "cell.png"
    img = Image.open(ROOT / "samples" / name).convert("RGB" if channels == 3 else "L")
    a = np.asarray(img)
    reps = (math.ceil(h / a.shape[0]), math.ceil(w / a.shape[1])) + ((1,) if channels == 3 else ())
    return np.ascontiguousarray(np.tile(a, reps)[:h, :w])


def main(out_dir: Path):
    store_dir = out_dir / "store"
    expected_dir = out_dir / "expected"
    expected_dir.mkdir(parents=True, exist_ok=True)
    group = zarr.open_group(zarr.storage.LocalStore(store_dir), mode="w")
    ycc420 = dict(quality=90, encoded_color_space="ycbcr", subsampling=[[2, 2], [1, 1], [1, 1]])
    ycc444 = dict(quality=90, encoded_color_space="ycbcr", subsampling=[[1, 1], [1, 1], [1, 1]])
    manifest = []

    def write(name, data, chunks, codec, *, shards=None, filters=(), region=None):
        arr = group.create_array(name, shape=data.shape, dtype="uint8", chunks=chunks, shards=shards,
                                 serializer=PillowJpegCodec(**codec), filters=list(filters), compressors=None,
                                 fill_value=0)
        if region is None:
            arr[...] = data
        else:
            arr[region] = data[region]  # the rest stays at the fill value: its chunks are never written
        back = np.asarray(zarr.open_array(zarr.storage.LocalStore(store_dir), path=name, mode="r")[...])
        (expected_dir / f"{name}.bin").write_bytes(np.ascontiguousarray(back).tobytes())
        manifest.append({"name": name, "shape": list(data.shape), "chunks": list(chunks), "shards": shards and list(shards),
                         "codecs": [f.to_dict() for f in filters] + [PillowJpegCodec(**codec).to_dict()]})

    # unsharded, partial edge chunks
    write("gray", sample(100, 130, 1), (64, 64), dict(quality=90, encoded_color_space="grayscale"))
    write("ycbcr420", sample(100, 130, 3), (64, 64, 3), ycc420)
    write("rgb", sample(70, 90, 3), (32, 32, 3), dict(quality=90, encoded_color_space="rgb"))
    # sharded: partial shards (200 = 128 + 72) and missing inner chunks (only a region written)
    write("sharded_ycbcr420", sample(200, 150, 3), (64, 64, 3), ycc420, shards=(128, 128, 3),
          region=(slice(0, 150), slice(0, 64), slice(None)))
    write("sharded_gray", sample(200, 150, 1), (32, 32), dict(quality=85, encoded_color_space="grayscale"), shards=(128, 128))
    # transpose layout: (3, H, W) chunks, channel axis moved last for JPEG
    planes = np.ascontiguousarray(np.moveaxis(sample(96, 80, 3), 2, 0))
    write("transpose", planes, (3, 64, 64), ycc444, filters=[TransposeCodec(order=(1, 2, 0))])
    write("sharded_transpose", planes, (3, 32, 32), ycc420, shards=(3, 64, 64), filters=[TransposeCodec(order=(1, 2, 0))])
    # reshape (neuroglancer) layout: [z, y, x, c] chunks as (z·y, x, c) images
    volume = sample(8 * 64, 64, 3).reshape(8, 64, 64, 3)
    write("reshape", volume, (4, 32, 64, 3), ycc420, filters=[ReshapeCodec(shape=[[0, 1], [2], [3]])])
    write("sharded_reshape", volume, (2, 32, 32, 3), ycc444, shards=(4, 64, 64, 3), filters=[ReshapeCodec(shape=[[0, 1], [2], [3]])])

    # Zarr v2 with imagecodecs' numcodecs Jpeg compressor, when imagecodecs is installed
    # (e.g. PYTHONPATH with `pip install --target DIR imagecodecs`); expected = imagecodecs' decode.
    try:
        import imagecodecs.numcodecs as icn
    except ImportError:
        icn = None
    if icn is not None:
        icn.register_codecs(force=True, verbose=False)
        for name, data, chunks in (("v2_imagecodecs_rgb", sample(100, 130, 3), (64, 64, 3)),
                                   ("v2_imagecodecs_gray", sample(100, 130, 1), (64, 64))):
            arr = zarr.create_array(zarr.storage.LocalStore(store_dir / name), shape=data.shape, dtype="uint8",
                                    chunks=chunks, zarr_format=2, compressors=icn.Jpeg(level=90), filters=None, fill_value=0)
            arr[...] = data
            back = np.asarray(zarr.open_array(zarr.storage.LocalStore(store_dir / name), mode="r", zarr_format=2)[...])
            (expected_dir / f"{name}.bin").write_bytes(np.ascontiguousarray(back).tobytes())
            manifest.append({"name": name, "shape": list(data.shape), "chunks": list(chunks), "shards": None, "zarr_format": 2,
                             "compressor": icn.Jpeg(level=90).get_config()})

    (out_dir / "manifest.json").write_text(json.dumps({"zarr_python": zarr.__version__, "pillow": Image.__version__, "arrays": manifest}, indent=1))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
