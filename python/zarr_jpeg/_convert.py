"""``zarr_jpeg.convert``: an image file to a JPEG-compressed OME-Zarr 0.5 store, by the Rust
core's converter (the one the npm package's ``zarr-jpeg convert`` runs): same options, same
messages, the same store byte for byte."""

from __future__ import annotations

import os
import sys
import time
from typing import Any, Callable, TextIO

from . import _zarr_jpeg as _native
from ._zarr_jpeg import ConvertError

#: The Python spelling of the converter's options, and the npm CLI's name each maps to.
OPTION_NAMES = {
    "quality": "quality",
    "color": "color",
    "subsampling": "subsampling",
    "chunk": "chunk",
    "chunk_depth": "chunkDepth",
    "downsample_z": "downsampleZ",
    "shard": "shard",
    "levels": "levels",
    "channel_axis": "channelAxis",
    "name": "name",
    "pixel_size": "pixelSize",
    "unit": "unit",
    "restart_intervals": "restartIntervals",
    "trellis": "trellis",
    "quant_table": "quantTable",
    "workers": "workers",
    "overwrite": "overwrite",
    "rescale": "rescale",
    "level_psnr": "levelPsnr",
    "dicom_identifiers": "dicomIdentifiers",
}


def default_workers() -> int:
    """Encode threads by default: one per core the process may use, up to 8 (more adds little:
    the rows are read and downsampled on one thread)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, 8))


def _js_options(options: dict[str, Any]) -> dict[str, Any]:
    js: dict[str, Any] = {}
    known = set(OPTION_NAMES.values())
    for name, value in options.items():
        key = OPTION_NAMES.get(name, name if name in known else None)
        if key is None:
            raise TypeError(f"convert() got an unknown option {name!r} (options: {', '.join(OPTION_NAMES)})")
        if key in js:
            raise TypeError(f"the option {key} is given twice (as {name} and another spelling)")
        if value is not None:
            js[key] = value
    if "rescale" in js and isinstance(js["rescale"], (tuple, list)) and len(js["rescale"]) == 2:
        js["rescale"] = f"{js['rescale'][0]}:{js['rescale'][1]}"
    return js


class ProgressBar:
    """A one-line bar on a terminal (the npm CLI's), redrawn at most every 50 ms."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.last = 0.0
        self.drawn = False

    def __call__(self, event: dict[str, Any]) -> None:
        now = time.monotonic()
        done, total = event["chunksDone"], event["chunksTotal"]
        if event["phase"] == "chunk" and now - self.last < 0.05 and done != total:
            return
        self.last = now
        try:
            columns = os.get_terminal_size(self.stream.fileno()).columns
        except (OSError, ValueError):
            columns = 80
        width = max(10, min(40, columns - 45))
        fraction = done / total if total else 0.0
        filled = round(fraction * width)
        self.stream.write(
            f"\r[{'#' * filled}{'-' * (width - filled)}] {fraction * 100:3.0f}%  "
            f"level {event['level'] + 1}/{event['levels']}  chunks {done}/{total}\x1b[K"
        )
        self.stream.flush()
        self.drawn = True

    def close(self) -> None:
        if self.drawn:
            self.stream.write("\n")
            self.stream.flush()


class Summary(dict):
    """What a conversion wrote: a dict with the npm CLI's ``--json`` keys (``levels``,
    ``bytesWritten``, ``ratio``, ``psnr``, ``warnings``, …); ``str()`` gives the CLI's lines."""

    def __init__(self, values: dict[str, Any], text: str) -> None:
        super().__init__(values)
        self.text = text

    def __str__(self) -> str:
        return self.text


def _is_tty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def convert(
    src: str | os.PathLike[str],
    dst: str | os.PathLike[str],
    *,
    progress: bool | Callable[[dict[str, Any]], None] | None = None,
    on_warning: Callable[[str], None] | None = None,
    **options: Any,
) -> Summary:
    """Converts the image file ``src`` (PNG, JPEG, TIFF/BigTIFF/OME-TIFF/SVS, DICOM, or a directory holding a
    DICOM whole-slide series or a neuroglancer precomputed volume) into a JPEG-compressed OME-Zarr 0.5 store
    at ``dst``, a directory that must not exist (unless ``overwrite=True`` and it is a Zarr
    store or empty). The store appears whole or not at all.

    Options, as the CLI's (``docs/converter.md``): ``quality`` (95), ``color``
    (``"ycbcr"``/``"rgb"``/``"grayscale"``), ``subsampling`` (``"4:2:0"``), ``chunk`` (256),
    ``chunk_depth`` (a z-stack's z planes per chunk, 1), ``downsample_z`` (its levels halve z
    too), ``shard``, ``levels``, ``channel_axis`` (``"first"``), ``name``, ``pixel_size``, ``unit``,
    ``restart_intervals``, ``trellis``, ``quant_table``, ``rescale`` (``"auto"`` or
    ``"MIN:MAX"``, 16-bit input), ``level_psnr`` (a JPEG-tiled TIFF's levels 1+: the PSNR
    target their quality is chosen for, default 30 dB; 0 keeps the tiles' quality),
    ``dicom_identifiers`` (DICOM input: write the slide's container, study and series identifiers; no
    patient data is ever written), ``workers`` (encode threads; default one per core up to 8), ``overwrite``. The npm names (``channelAxis``, …) work too.

    ``progress``: None (a bar on stderr when it is a terminal, else silent), False (silent),
    True (the bar), or a callable given each event. ``on_warning``: called with each warning
    (default: printed to stderr). The GIL is released while converting; the encode runs on
    ``workers`` threads. Returns the summary (the CLI's ``--json`` keys). Raises
    :class:`ConvertError` (with ``kind``) naming the problem, or ``TypeError`` for an option
    that does not exist."""
    js = _js_options(options)
    js.setdefault("workers", default_workers())
    bar = None
    callback: Callable[[dict[str, Any]], None] | None
    if callable(progress):
        callback = progress
    elif progress or (progress is None and _is_tty(sys.stderr)):
        bar = ProgressBar(sys.stderr)
        callback = bar
    else:
        callback = None
    if on_warning is None:
        def on_warning(message: str) -> None:
            print(f"zarr-jpeg convert: warning: {message}", file=sys.stderr)
    try:
        summary, text = _native.convert_file(os.fspath(src), os.fspath(dst), js, callback, on_warning)
    finally:
        if bar is not None:
            bar.close()
    return Summary(summary, text)


def export_precomputed(
    src: str | os.PathLike[str],
    dst: str | os.PathLike[str],
    *,
    quality: int | None = None,
    overwrite: bool = False,
    workers: int | None = None,
    progress: bool | Callable[[dict[str, Any]], None] | None = None,
    on_warning: Callable[[str], None] | None = None,
) -> Summary:
    """Writes the JPEG OME-Zarr image (or volume) ``src`` as the neuroglancer precomputed volume
    ``dst`` (``"encoding": "jpeg"``, one scale per level, unsharded), which neuroglancer opens
    as ``precomputed://`` and tensorstore's ``neuroglancer_precomputed`` driver reads. Chunks
    are copied where the layouts agree; those at the volume's upper bounds, which precomputed
    stores clipped, are re-encoded at ``quality`` (default: the level's). Appears whole or not
    at all; ``overwrite`` replaces a precomputed volume or an empty directory. Returns the
    summary (``scales``, ``chunks``: copied, re-encoded, missing). Raises :class:`ConvertError`."""
    options: dict[str, Any] = {"workers": default_workers() if workers is None else workers}
    if quality is not None:
        options["quality"] = quality
    if overwrite:
        options["overwrite"] = True
    bar = None
    callback: Callable[[dict[str, Any]], None] | None
    if callable(progress):
        callback = progress
    elif progress or (progress is None and _is_tty(sys.stderr)):
        bar = ProgressBar(sys.stderr)
        callback = bar
    else:
        callback = None
    if on_warning is None:
        def on_warning(message: str) -> None:
            print(f"zarr-jpeg export: warning: {message}", file=sys.stderr)
    try:
        summary, text = _native.export_precomputed(os.fspath(src), os.fspath(dst), options, callback, on_warning)
    finally:
        if bar is not None:
            bar.close()
    return Summary(summary, text)


__all__ = ["ConvertError", "OPTION_NAMES", "Summary", "convert", "default_workers", "export_precomputed"]
