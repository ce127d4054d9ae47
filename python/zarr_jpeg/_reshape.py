"""The Zarr v3 ``reshape`` codec (zarr-extensions ``codecs/reshape``) for zarr-python, which
lacks it. The converter writes it before ``jpeg`` so that a stack's chunk, with axes of
length 1 (t, c, z), reaches the jpeg codec as a 2-D image. Same rules and messages as the
npm package's ``js/codecs/reshape.js``."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from zarr.abc.codec import ArrayArrayCodec
from zarr.core.common import parse_named_configuration

from ._zarr_jpeg import JpegError

if TYPE_CHECKING:
    from typing import Self

    from zarr.core.array_spec import ArraySpec
    from zarr.core.buffer import NDBuffer


def _error(message: str) -> JpegError:
    return JpegError(f"reshape: {message}")


def _entries(shape: Any) -> list[Any]:
    if not isinstance(shape, (list, tuple)) or len(shape) == 0:
        raise _error(f"configuration.shape must be a non-empty array, got {shape!r}")
    return [list(e) if isinstance(e, (list, tuple)) else e for e in shape]


def reshape_shape(shape: Any, input_shape: tuple[int, ...]) -> tuple[int, ...]:
    """The output shape of ``shape`` (the configuration's) over a chunk of ``input_shape``."""
    spec = _entries(shape)
    rank = len(input_shape)
    sizes: list[int] = [0] * len(spec)
    auto = -1
    last_dim = -1
    for i, entry in enumerate(spec):
        if entry == -1 and not isinstance(entry, bool):
            if auto >= 0:
                raise _error(f"shape has -1 at positions {auto} and {i}; -1 must occur at most once")
            auto = i
        elif isinstance(entry, int) and not isinstance(entry, bool) and entry > 0:
            sizes[i] = entry
        elif isinstance(entry, list):
            for d in entry:
                if not isinstance(d, int) or isinstance(d, bool) or not 0 <= d < rank:
                    raise _error(f"shape[{i}] = {entry}: input dimension {d!r} is not an integer in 0..{rank - 1}")
                if d <= last_dim:
                    raise _error(f"shape {spec}: the flattened input dimensions must be in increasing order")
                last_dim = d
            sizes[i] = math.prod(input_shape[d] for d in entry)
        else:
            raise _error(f"shape[{i}] = {entry!r} must be a positive integer, an array of input dimensions, or -1")
    total = math.prod(input_shape)
    if auto >= 0:
        known = math.prod(s for j, s in enumerate(sizes) if j != auto)
        if known == 0 or total % known:
            raise _error(f"shape {spec} over input shape {list(input_shape)}: no size for -1 gives {total} elements")
        sizes[auto] = total // known
    if math.prod(sizes) != total:
        raise _error(
            f"shape {spec} over input shape {list(input_shape)} gives {sizes}: "
            f"prod(output) = {math.prod(sizes)} != prod(input) = {total}"
        )
    for i, entry in enumerate(spec):
        if isinstance(entry, list) and entry:
            before, after = math.prod(sizes[:i]), math.prod(sizes[i + 1 :])
            if before != math.prod(input_shape[: entry[0]]) or after != math.prod(input_shape[entry[-1] + 1 :]):
                raise _error(f"shape[{i}] = {entry} over input shape {list(input_shape)}: the other output dimensions must cover the other input dimensions exactly")
    return tuple(sizes)


@dataclass(frozen=True)
class ReshapeCodec(ArrayArrayCodec):
    """Reshapes a chunk in C order (never moves a sample), as the ``reshape`` codec's spec says."""

    is_fixed_size = True
    shape: tuple[Any, ...]

    def __init__(self, *, shape: Any) -> None:
        spec = _entries(shape)
        object.__setattr__(self, "shape", tuple(tuple(e) if isinstance(e, list) else e for e in spec))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        _, configuration = parse_named_configuration(data, "reshape")
        configuration = configuration or {}
        unknown = [k for k in configuration if k != "shape"]
        if unknown:
            raise _error(f"unknown configuration member {unknown[0]!r} (the reshape codec's configuration has only \"shape\")")
        if "shape" not in configuration:
            raise _error("the configuration must have a shape member")
        return cls(shape=configuration["shape"])

    def to_dict(self) -> dict[str, Any]:
        shape = [list(e) if isinstance(e, tuple) else e for e in self.shape]
        return {"name": "reshape", "configuration": {"shape": shape}}

    def resolve_metadata(self, chunk_spec: ArraySpec) -> ArraySpec:
        return replace(chunk_spec, shape=reshape_shape(self.shape, tuple(chunk_spec.shape)))

    def compute_encoded_size(self, input_byte_length: int, _chunk_spec: ArraySpec) -> int:
        return input_byte_length

    async def _decode_single(self, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> NDBuffer:
        return chunk_array.reshape(tuple(chunk_spec.shape))

    async def _encode_single(self, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> NDBuffer | None:
        return chunk_array.reshape(reshape_shape(self.shape, tuple(chunk_spec.shape)))
