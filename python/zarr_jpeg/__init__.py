"""The Zarr v3 ``jpeg`` codec for zarr-python, from the Rust core of the zarr-jpeg npm package.

- :class:`JpegCodec`: a zarr-python ``ArrayBytesCodec``, registered under the name ``jpeg``
  (the ``zarr.codecs`` entry point), usable as ``serializer=``.
- :class:`ReshapeCodec`: the ``reshape`` codec zarr-python lacks, which the converter's stacks use
  to hand the jpeg codec a 2-D chunk (registered under ``reshape``).
- :func:`encode` / :func:`decode`: one chunk, with the JavaScript ``encode()``'s options.
- :func:`validate_config`: a configuration's normalised form, or the error the JS package gives.
- :func:`convert`: an image file to a JPEG OME-Zarr store (the npm CLI's converter, the same
  Rust core); :class:`ConvertError` names what was refused.

Errors in the input raise :class:`JpegError` (a ``ValueError`` with a ``kind``) or ``TypeError``,
with the same messages as the JavaScript package: both are the core's.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from . import _zarr_jpeg as _native
from ._zarr_jpeg import JpegError

__all__ = [
    "ConvertError",
    "DEFAULT_QUALITY",
    "JpegCodec",
    "JpegError",
    "ReshapeCodec",
    "export_precomputed",
    "QUANT_TABLES",
    "Summary",
    "convert",
    "decode",
    "encode",
    "validate_config",
]

#: The quality a configuration builder uses when none is given (the spec: SHOULD be 95).
DEFAULT_QUALITY = 95

#: The values of the encode option ``quant_table`` (mozjpeg's ``-quant-table 0``-``8``).
QUANT_TABLES = ("annex-k", "flat", "ms-ssim", "imagemagick", "psnr-hvs", "klein", "watson", "ahumada", "peterson")

# The Python spelling of the JavaScript encode() options (either is accepted).
_OPTION_NAMES = {"restart_intervals": "restartIntervals", "quant_table": "quantTable", "trellis": "trellis"}


def validate_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """The normalised form of a ``jpeg`` codec configuration (``decoded_color_space`` filled in,
    ``subsampling`` only for ``ycbcr``): the form to store in ``zarr.json``. Raises
    :class:`JpegError` naming the problem otherwise."""
    return _native.validate_config(config)


def _options(options: Mapping[str, Any]) -> dict[str, Any] | None:
    if not options:
        return None
    js: dict[str, Any] = {}
    for name, value in options.items():
        key = _OPTION_NAMES.get(name, name)
        if key in js:
            raise TypeError(f"the encode option {key} is given twice (as {name} and {key})")
        js[key] = value
    return js


def encode(array: Any, config: Mapping[str, Any], **options: Any) -> bytes:
    """Encodes one chunk, a uint8 array of shape (H, W), (H, W, 1) or (H, W, 3), as a baseline
    JPEG stream; returns its bytes, the same bytes the JavaScript ``encode()`` writes.

    Options (the JavaScript names ``restartIntervals``/``quantTable`` work too):
    ``restart_intervals`` (default True): restart intervals of 64 rows in chunks taller than
    that; ``trellis`` (default False): rate-distortion-optimised quantisation; ``quant_table``
    (default ``"annex-k"``): the base quantisation tables, one of :data:`QUANT_TABLES`.
    The GIL is released while encoding."""
    a = np.asarray(array)
    if a.dtype != np.uint8:
        raise TypeError(f"the chunk data must be a uint8 array, got an array of {a.dtype}")
    a = np.ascontiguousarray(a)
    return _native.encode(config, a, a.shape, _options(options))


def decode(buffer: Any, config: Mapping[str, Any], shape: Sequence[int]) -> np.ndarray:
    """Decodes one chunk's JPEG stream (any bytes-like object) to a new uint8 array of
    ``shape``. Raises :class:`JpegError` naming the problem for a corrupt stream or one that
    does not match the chunk. The GIL is released while decoding."""
    if isinstance(shape, np.ndarray):
        shape = tuple(shape.tolist())
    _native.check_chunk_shape(config, shape)  # before allocating: a bad shape is an error, not a MemoryError
    out = np.empty(tuple(shape), dtype=np.uint8)
    _native.decode_into(config, buffer, shape, out)
    return out


from ._codec import JpegCodec  # noqa: E402  (uses the functions above)
from ._reshape import ReshapeCodec  # noqa: E402
from ._convert import ConvertError, Summary, convert, export_precomputed  # noqa: E402
