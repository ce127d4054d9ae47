#!/usr/bin/env python3
"""Writes tifffile's kerchunk references (Zarr v2, imagecodecs_jpeg) for a TIFF's first
series, its pyramid levels included, pointing at the TIFF by the URL it is served at.

Usage: write_references.py TIFF OUT_JSON URL_PREFIX
  URL_PREFIX  the URL of the TIFF's folder as the reader sees it (may be root-relative)

Prints a JSON summary: the levels' shapes and the compressor of level 0.
"""

import json
import sys

import tifffile


def main(tiff, out_json, url_prefix):
    with tifffile.TiffFile(tiff) as tif:
        series = tif.series[0]
        with series.aszarr() as store:
            store.write_fsspec(out_json, url=url_prefix.rstrip("/") + "/")
        shapes = [list(level.shape) for level in series.levels]
    refs = json.load(open(out_json))
    key = ".zarray" if ".zarray" in refs else "0/.zarray"
    zarray = json.loads(refs[key])
    print(json.dumps({"levels": shapes, "compressor": {k: v for k, v in zarray["compressor"].items() if k != "tables"}}))


if __name__ == "__main__":
    main(*sys.argv[1:4])
