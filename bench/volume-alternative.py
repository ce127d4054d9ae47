"""The obvious alternative to `zarr-jpeg convert` for a z-stack, as bench:convert's volume row runs it:
tifffile reads the OME-TIFF one plane at a time, numpy averages each plane down 2 × 2 into the
levels of a pyramid, and zarr-python writes every level as a Zarr (format 2) array of
1 × 256 × 256 chunks compressed by imagecodecs' JPEG codec at quality 85.

Usage: python bench/volume-alternative.py STACK.ome.tif OUT.zarr
"""

import sys

import numpy as np
import tifffile
import zarr
from imagecodecs.numcodecs import Jpeg

CHUNK = 256


def level_shapes(height, width):
    """Halved until the level fits in one chunk, as zarr-jpeg's default pyramid does."""
    shapes = [(height, width)]
    while max(shapes[-1]) > CHUNK:
        h, w = shapes[-1]
        shapes.append(((h + 1) // 2, (w + 1) // 2))
    return shapes


def halve(plane):
    """The 2 × 2 mean, the last row and column repeated when odd."""
    h, w = plane.shape
    padded = np.pad(plane, ((0, h % 2), (0, w % 2)), mode="edge").astype(np.uint16)
    return ((padded[0::2, 0::2] + padded[1::2, 0::2] + padded[0::2, 1::2] + padded[1::2, 1::2] + 2) // 4).astype(np.uint8)


def main(source, output):
    with tifffile.TiffFile(source) as tif:
        pages = tif.series[0].pages
        height, width = pages[0].shape
        root = zarr.open_group(output, mode="w", zarr_format=2)
        levels = [
            root.create_array(str(l), shape=(len(pages), h, w), chunks=(1, min(CHUNK, h), min(CHUNK, w)), dtype="uint8",
                              compressors=Jpeg(level=85), fill_value=0)
            for l, (h, w) in enumerate(level_shapes(height, width))
        ]
        for z, page in enumerate(pages):
            plane = page.asarray()
            for l, array in enumerate(levels):
                if l:
                    plane = halve(plane)
                array[z] = plane


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
