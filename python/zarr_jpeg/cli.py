"""The ``zarr-jpeg`` console script: ``zarr-jpeg convert <image> <out.zarr> [options]`` and
``zarr-jpeg export --precomputed <in.zarr> <out-folder>``, the npm CLI's commands with the same
options, messages and exit codes (0 written, 1 conversion failed, 2 usage error), run by the
same Rust core."""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

from ._convert import ConvertError, convert, default_workers, export_precomputed

USAGE = "zarr-jpeg convert <image.png|image.jpg|image.tif|slide.svs|dicom-folder|precomputed-folder> <out.zarr> [options]"
EXPORT_USAGE = "zarr-jpeg export --precomputed <in.zarr> <out-folder> [--quality N] [--workers N] [--overwrite] [--quiet] [--json]"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="zarr-jpeg convert",
        usage=USAGE,
        description="Writes an OME-Zarr 0.5 image: a Zarr v3 group with a pyramid of uint8 arrays "
        "(2x area averaging per level until the image fits one chunk), every chunk a JPEG image.",
        epilog="exit code: 0 written, 1 conversion failed, 2 usage error",
    )
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("--quality", type=int, help="JPEG quality 1-100 (default 95)")
    p.add_argument("--color", help="ycbcr | rgb | grayscale")
    p.add_argument("--subsampling", help="4:4:4, 4:2:2, 4:4:0, 4:2:0 (default 4:2:0)")
    p.add_argument("--chunk", type=int, help="chunk side in pixels (default 256)")
    p.add_argument("--chunk-z", dest="chunk_depth", type=int,
                   help="z-stack: z planes per chunk (default 1), one JPEG of the planes one above the other")
    p.add_argument("--downsample-z", dest="downsample_z", action="store_true", default=None,
                   help="z-stack: each level halves z too (2x2x2 averaging)")
    p.add_argument("--shard", type=int, help="store chunks inside NxN shards (N a multiple of --chunk)")
    p.add_argument("--levels", type=int, help="number of pyramid levels (default: until one chunk holds the image)")
    p.add_argument("--channel-axis", dest="channel_axis", help="first (c, y, x; default) | last (y, x, c)")
    p.add_argument("--name", help="multiscale name (default: the input file's name)")
    p.add_argument("--pixel-size", dest="pixel_size", type=float, help="physical pixel size (default 1)")
    p.add_argument("--unit", help="unit of the space axes, e.g. micrometer")
    p.add_argument("--no-restart-intervals", dest="restart_intervals", action="store_false", default=None)
    p.add_argument("--trellis", action="store_true", default=None, help="rate-distortion-optimised quantisation")
    p.add_argument("--quant-table", dest="quant_table", help="annex-k (default) | flat | ms-ssim | ...")
    p.add_argument("--rescale", help="16-bit input: auto or MIN:MAX, mapped to 0-255")
    p.add_argument("--level-psnr", dest="level_psnr", type=float,
                   help="JPEG-tiled TIFF: levels 1+ at the lowest quality keeping a sample >= DB dB (default 30; 0: the tiles' quality)")
    p.add_argument("--dicom-identifiers", dest="dicom_identifiers", action="store_true", default=None,
                   help="DICOM input: write the slide's container/study/series identifiers (never patient data)")
    p.add_argument("--workers", type=int, default=default_workers(), help="encode threads (default %(default)s)")
    p.add_argument("--overwrite", action="store_true", default=None, help="replace <out.zarr> if it is a Zarr store")
    p.add_argument("--quiet", action="store_true", help="no progress or summary")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    return p


def _level_lines(stream: Any) -> Any:
    """Not a terminal (a log, a pipe): one line per level, as the npm CLI writes."""

    def update(event: dict[str, Any]) -> None:
        if event["phase"] == "level":
            shape = "×".join(str(d) for d in event["shape"])
            stream.write(
                f"level {event['level'] + 1}/{event['levels']}: shape {shape} "
                f"({event['chunksDone']}/{event['chunksTotal']} chunks done)\n"
            )

    return update


def _export_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="zarr-jpeg export",
        usage=EXPORT_USAGE,
        description="Writes a JPEG OME-Zarr image as a neuroglancer precomputed volume (jpeg encoding, one scale "
        "per level), its chunks copied where the layouts agree.",
        epilog="exit code: 0 written, 1 export failed, 2 usage error",
    )
    p.add_argument("--precomputed", action="store_true", required=True, help="the format written (the only one)")
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("--quality", type=int, help="JPEG quality of the re-encoded edge chunks (default: the level's)")
    p.add_argument("--workers", type=int, default=default_workers(), help="threads (default %(default)s)")
    p.add_argument("--overwrite", action="store_true", help="replace <out-folder> if it is a precomputed volume")
    p.add_argument("--quiet", action="store_true", help="no progress or summary")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    return p


def _export(argv: list[str]) -> int:
    try:
        args = _export_parser().parse_args(argv)
    except SystemExit as exit:
        return int(exit.code or 0)
    progress: Any = False
    if not (args.quiet or args.json):
        progress = None if sys.stderr.isatty() else _level_lines(sys.stderr)
    try:
        summary = export_precomputed(args.input, args.output, quality=args.quality, overwrite=args.overwrite,
                                     workers=args.workers, progress=progress)
    except ConvertError as error:
        print(str(error).replace("zarr-jpeg convert:", "zarr-jpeg export:", 1), file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(dict(summary), indent=2, ensure_ascii=False))
    elif not args.quiet:
        print(summary)
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "export":
        return _export(argv[1:])
    if not argv or argv[0] != "convert":
        print(f"usage: {USAGE}\n       {EXPORT_USAGE}\n(zarr-jpeg convert --help for the options)", file=sys.stderr)
        return 2
    parser = _parser()
    try:
        args = parser.parse_args(argv[1:])
    except SystemExit as exit:
        return int(exit.code or 0)
    options = {k: v for k, v in vars(args).items() if k not in ("input", "output", "quiet", "json") and v is not None}
    progress: Any = False
    if not (args.quiet or args.json):
        progress = None if sys.stderr.isatty() else _level_lines(sys.stderr)
    try:
        summary = convert(args.input, args.output, progress=progress, **options)
    except ConvertError as error:
        print(error, file=sys.stderr)
        return 1
    if args.json:
        values = dict(summary)
        if not math.isfinite(values["psnr"]):
            values["psnr"] = "Infinity"  # as the npm CLI writes it
        print(json.dumps(values, indent=2, ensure_ascii=False))
    elif not args.quiet:
        print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
