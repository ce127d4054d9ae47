"""Writes the DICOM input of `npm run bench:convert`'s DICOM row:

    .venv/bin/python bench/make-dicom-slide.py SAMPLE.png SIDE OUT_DIR

OUT_DIR/slide.svs: an Aperio-style SVS, SIDE x SIDE, of 240 x 240 JPEG tiles (the sample
image repeated, each tile made by libjpeg-turbo as tests/python/write_tiff_inputs.py makes
them), written tile by tile so memory does not grow with SIDE; then OUT_DIR/dicom/: that SVS
converted by wsidicomizer (its tiles become the frames of one TILED_FULL instance).
"""
import sys
from pathlib import Path

import numpy as np
import tifffile
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "python"))
from write_tiff_inputs import aperio_tile  # noqa: E402

TILE = 240


def main(sample: str, side: int, out: Path) -> None:
    from wsidicomizer import WsiDicomizer

    out.mkdir(parents=True, exist_ok=True)
    image = np.asarray(Image.open(sample).convert("RGB"))
    h, w, _ = image.shape
    # the repeated image's tiles repeat every lcm(side of the sample, TILE) pixels: each is encoded once
    period_y, period_x = np.lcm(h, TILE), np.lcm(w, TILE)
    cache: dict[tuple[int, int, int, int], bytes] = {}
    tables: list[bytes] = []

    def tile_at(y: int, x: int) -> bytes:
        inside_y, inside_x = min(TILE, side - y), min(TILE, side - x)  # (edge tiles: black beyond the image)
        key = (y % period_y, x % period_x, inside_y, inside_x)
        if key not in cache:
            block = np.zeros((TILE, TILE, 3), np.uint8)
            rows = (key[0] + np.arange(inside_y)) % h
            columns = (key[1] + np.arange(inside_x)) % w
            block[:inside_y, :inside_x] = image[np.ix_(rows, columns)]
            stream, table = aperio_tile(block, 80)
            tables.append(table)
            cache[key] = stream
        return cache[key]

    def tiles():
        for y in range(0, side, TILE):
            for x in range(0, side, TILE):
                yield tile_at(y, x)

    tile_at(0, 0)
    description = (f"Aperio Image Library v12.0.15 \r\n{side}x{side} [0,0 {side}x{side}] ({TILE}x{TILE}) JPEG/RGB Q=80"
                   "|AppMag = 20|MPP = 0.4990|Filename = bench")
    svs = out / "slide.svs"
    with tifffile.TiffWriter(svs, bigtiff=side * side * 3 > 2**31) as tw:
        tw.write(data=tiles(), shape=(side, side, 3), dtype=np.uint8, tile=(TILE, TILE), compression="jpeg",
                 photometric="rgb", description=description, extratags=[(347, 7, len(tables[0]), tables[0], True)],
                 metadata=None)
    with tifffile.TiffFile(svs, mode="r+b") as tf:
        tf.pages[0].tags["PhotometricInterpretation"].overwrite(2)
    WsiDicomizer.convert(str(svs), str(out / "dicom"), tile_size=TILE)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), Path(sys.argv[3]))
