"""The ``jpeg`` codec as a zarr-python ``ArrayBytesCodec``."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from itertools import permutations
from math import prod
from typing import TYPE_CHECKING, Any, Iterator, Mapping

import numpy as np
from zarr.abc.codec import ArrayBytesCodec
from zarr.core.common import parse_named_configuration

from . import _zarr_jpeg as _native
from . import DEFAULT_QUALITY, JpegError, _options, decode, encode

if TYPE_CHECKING:
    from typing import Self

    from zarr.core.array_spec import ArraySpec
    from zarr.core.buffer import Buffer, NDBuffer
    from zarr.core.chunk_grids import ChunkGrid
    from zarr.core.dtype.wrapper import TBaseDType, TBaseScalar, ZDType


@dataclass(frozen=True)
class JpegCodec(ArrayBytesCodec):
    """The Zarr v3 ``jpeg`` codec (an array -> bytes codec, for uint8 chunks).

    ``JpegCodec(quality=95, encoded_color_space="ycbcr", subsampling=[[2, 2], [1, 1], [1, 1]])``;
    ``decoded_color_space`` defaults as the spec says (``grayscale`` for grayscale, ``rgb``
    otherwise). The configuration is checked by the Rust core's parser, with the JavaScript
    package's rules and messages (:class:`zarr_jpeg.JpegError`, a ``ValueError``).

    ``encode_options`` (a dict of :func:`zarr_jpeg.encode`'s options, e.g. ``{"trellis": True}``)
    change how chunks are written, not what they decode to, so they are not part of the stored
    configuration (``to_dict``), as the JavaScript ``register()``'s ``encodeOptions``.
    """

    is_fixed_size = False

    quality: int
    encoded_color_space: str
    decoded_color_space: str
    subsampling: tuple[tuple[int, int], ...] | None
    encode_options: tuple[tuple[str, Any], ...]

    def __init__(
        self,
        *,
        quality: int = DEFAULT_QUALITY,
        encoded_color_space: str,
        subsampling: Any = None,
        decoded_color_space: str | None = None,
        encode_options: Mapping[str, Any] | None = None,
    ) -> None:
        config: dict[str, Any] = {"quality": quality, "encoded_color_space": encoded_color_space}
        if subsampling is not None:
            config["subsampling"] = subsampling
        if decoded_color_space is not None:
            config["decoded_color_space"] = decoded_color_space
        self._set(_native.validate_config(config))
        js_options = _options(dict(encode_options or {}))
        if js_options is not None:
            _native.check_encode_options(js_options)
        object.__setattr__(self, "encode_options", tuple(sorted((js_options or {}).items())))

    def _set(self, normalised: dict[str, Any]) -> None:
        sub = normalised.get("subsampling")
        object.__setattr__(self, "quality", normalised["quality"])
        object.__setattr__(self, "encoded_color_space", normalised["encoded_color_space"])
        object.__setattr__(self, "decoded_color_space", normalised["decoded_color_space"])
        object.__setattr__(self, "subsampling", None if sub is None else tuple(tuple(f) for f in sub))
        object.__setattr__(self, "_configuration", normalised)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        _, configuration = parse_named_configuration(data, "jpeg")
        codec = cls.__new__(cls)
        codec._set(_native.validate_config(configuration))
        object.__setattr__(codec, "encode_options", ())
        return codec

    def to_dict(self) -> dict[str, Any]:
        return {"name": "jpeg", "configuration": _native.validate_config(self._configuration)}

    @property
    def configuration(self) -> dict[str, Any]:
        """The normalised configuration (a copy)."""
        return _native.validate_config(self._configuration)

    def validate(
        self,
        *,
        shape: tuple[int, ...],
        dtype: ZDType[TBaseDType, TBaseScalar],
        chunk_grid: ChunkGrid,
    ) -> None:
        native = dtype.to_native_dtype()
        if native != np.dtype(np.uint8):
            raise TypeError(
                f"the jpeg codec encodes uint8 data only, got data type {native} "
                "(JPEG stores 8-bit samples: convert or rescale the data to uint8 first)"
            )
        chunk_shape = getattr(chunk_grid, "chunk_shape", None)
        if chunk_shape is None:
            return  # not a regular grid: each chunk's shape is checked when it is encoded
        chunk_shape = tuple(chunk_shape)
        try:
            _native.check_chunk_shape(self._configuration, chunk_shape)
        except JpegError:
            # zarr-python validates every codec with the array's chunk shape, not the one the
            # codecs before it hand on: a transpose reorders the axes, a reshape drops axes of
            # length 1 or folds the leading axes into the image's height (a volume's z into y:
            # (z, y, x) → (z·y, x), (z, y, x, 3) → (z·y, x, 3)). Accept the shape if one of
            # those makes it one the codec takes; the chunk's own shape is checked when encoding.
            if not any(self._takes(c) for c in set(_reachable(chunk_shape))):
                raise

    def _takes(self, shape: tuple[int, ...]) -> bool:
        try:
            _native.check_chunk_shape(self._configuration, shape)
        except JpegError:
            return False
        return True

    def compute_encoded_size(self, input_byte_length: int, chunk_spec: ArraySpec) -> int:
        raise NotImplementedError("the size of a JPEG stream is known only once it is encoded")

    def _decode_sync(self, chunk_bytes: Buffer, chunk_spec: ArraySpec) -> NDBuffer:
        samples = decode(chunk_bytes.as_array_like(), self._configuration, chunk_spec.shape)
        return chunk_spec.prototype.nd_buffer.from_ndarray_like(samples)

    def _encode_sync(self, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> Buffer | None:
        stream = encode(chunk_array.as_ndarray_like(), self._configuration, **dict(self.encode_options))
        return chunk_spec.prototype.buffer.from_bytes(stream)

    # The GIL is released while the core runs, so these threads decode and encode in parallel.
    async def _decode_single(self, chunk_bytes: Buffer, chunk_spec: ArraySpec) -> NDBuffer:
        return await asyncio.to_thread(self._decode_sync, chunk_bytes, chunk_spec)

    async def _encode_single(self, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> Buffer | None:
        return await asyncio.to_thread(self._encode_sync, chunk_array, chunk_spec)


def _reachable(shape: tuple[int, ...]) -> Iterator[tuple[int, ...]]:
    """The chunk shapes a transpose and a reshape before the codec can make of ``shape``: any
    axis order, with a colour chunk's leading axes folded into its height; a grayscale chunk's
    leading axes folded without a transpose, and only when its last axis is not a channel-like
    length (a (y, x, 3) chunk under a grayscale configuration stays a mistake)."""
    squeezed = tuple(n for n in shape if n != 1) or (1,)
    for start in {shape, squeezed}:
        if len(start) >= 3 and start[-1] > 4:
            yield (prod(start[:-1]), start[-1])
        for p in permutations(start):
            yield p
            if len(p) >= 4:
                yield (prod(p[:-2]), p[-2], p[-1])
