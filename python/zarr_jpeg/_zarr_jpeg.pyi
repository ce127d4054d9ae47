# The extension module built from python/src/lib.rs (the Rust core's Python boundary).
from typing import Any, Callable, Mapping, Sequence

from typing_extensions import Buffer

class JpegError(ValueError):
    """A chunk, configuration or option the jpeg codec refuses; ``kind`` is one of
    "InvalidConfiguration", "InvalidShape", "InvalidData", "UnsupportedStream",
    "CorruptStream", "StreamMismatch"."""

    kind: str

def validate_config(config: Mapping[str, Any]) -> dict[str, Any]: ...
def check_chunk_shape(config: Mapping[str, Any], shape: Sequence[int]) -> None: ...
def check_encode_options(options: Mapping[str, Any]) -> None: ...
def encode(
    config: Mapping[str, Any],
    data: Buffer,
    shape: Sequence[int],
    options: Mapping[str, Any] | None = None,
) -> bytes: ...
def decode_into(config: Mapping[str, Any], stream: Buffer, shape: Sequence[int], out: Buffer) -> None: ...

class ConvertError(Exception):
    """A conversion refused or failed; ``kind`` is one of "InvalidArgument", "InvalidInput",
    "OutputUnavailable"."""

    kind: str

def convert_file(
    src: str,
    dst: str,
    options: Mapping[str, Any],
    progress: Callable[[dict[str, Any]], None] | None = None,
    warning: Callable[[str], None] | None = None,
) -> tuple[dict[str, Any], str]: ...

def export_precomputed(
    src: str,
    dst: str,
    options: Mapping[str, Any],
    progress: Callable[[dict[str, Any]], None] | None = None,
    warning: Callable[[str], None] | None = None,
) -> tuple[dict[str, Any], str]: ...
