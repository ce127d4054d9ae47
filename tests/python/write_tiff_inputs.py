"""Writes TIFF inputs for the converter's tests with tifffile + imagecodecs (independent
writers: nothing of zarr-jpeg is used).

    python write_tiff_inputs.py aperio SRC.png OUT.svs      # Aperio-style SVS
    python write_tiff_inputs.py ome SRC.png OUT.ome.tif     # OME-TIFF, SubIFD pyramid, PhysicalSize
    python write_tiff_inputs.py progressive-tile SRC.png OUT.tif   # one progressive tile among baseline ones

aperio: Photometric RGB, tiles 240 x 240 whose SOF component ids are 0, 1, 2 with no
JFIF or Adobe marker, one shared JPEGTables (tag 347), an ImageDescription starting
"Aperio Image Library" with "|MPP = 0.4990|". The tiles are made by libjpeg-turbo
(imagecodecs.jpeg8_encode, colorspace RGB, outcolorspace RGB: no colour transform) and then
rewritten the way Aperio's writer lays them out: tables moved to JPEGTables, the JFIF/Adobe
APPn dropped, component ids 'R','G','B' -> 0,1,2. The entropy-coded data is libjpeg's.
"""
import io
import sys

import numpy as np
import tifffile
import imagecodecs
from PIL import Image


def segments(stream):
    """(marker, start, end) of each marker segment before the entropy-coded data, and the SOS end."""
    out = []
    at = 2
    while True:
        assert stream[at] == 0xFF, hex(at)
        marker = stream[at + 1]
        length = int.from_bytes(stream[at + 2:at + 4], "big")
        out.append((marker, at, at + 2 + length))
        at += 2 + length
        if marker == 0xDA:
            return out, at


def aperio_tile(tile_rgb, quality):
    stream = imagecodecs.jpeg8_encode(tile_rgb, level=quality, colorspace="RGB", outcolorspace="RGB", subsampling="444")
    segs, sos_end = segments(stream)
    tables = b"".join(stream[s:e] for m, s, e in segs if m in (0xDB, 0xC4))
    head = bytearray(b"\xff\xd8")
    for m, s, e in segs:
        seg = bytearray(stream[s:e])
        if m in (0xC0, 0xC1):
            count = seg[9]
            for k in range(count):
                seg[10 + 3 * k] = k  # ids 0, 1, 2
            head += seg
        elif m == 0xDA:
            count = seg[4]
            for k in range(count):
                seg[5 + 2 * k] = k
            head += seg
        # (APP0 JFIF / APP14 Adobe, DQT and DHT are not kept in the tile)
    return bytes(head) + stream[sos_end:], b"\xff\xd8" + tables + b"\xff\xd9"


def write_aperio(src, out, tile=240, quality=80):
    image = np.asarray(Image.open(src).convert("RGB"))
    h, w, _ = image.shape
    tiles = []
    tables = None
    for y in range(0, h, tile):
        for x in range(0, w, tile):
            block = np.zeros((tile, tile, 3), np.uint8)
            part = image[y:y + tile, x:x + tile]
            block[:part.shape[0], :part.shape[1]] = part
            t, tab = aperio_tile(block, quality)
            tables = tables or tab
            assert tab == tables  # one set of tables for the page
            tiles.append(t)
    description = (f"Aperio Image Library v12.0.15 \r\n{w}x{h} [0,0 {w}x{h}] ({tile}x{tile}) JPEG/RGB Q={quality}"
                   "|AppMag = 20|MPP = 0.4990|Filename = test")
    with tifffile.TiffWriter(out) as tw:
        tw.write(data=iter(tiles), shape=(h, w, 3), dtype=np.uint8, tile=(tile, tile), compression="jpeg",
                 photometric="rgb", description=description, extratags=[(347, 7, len(tables), tables, True)],
                 metadata=None)
    with tifffile.TiffFile(out, mode="r+b") as tf:
        tf.pages[0].tags["PhotometricInterpretation"].overwrite(2)


def write_ome(src, out, tile=128, quality=90, size=0.25):
    image = np.asarray(Image.open(src).convert("RGB"))
    levels = [image]
    while max(levels[-1].shape[:2]) > tile:
        levels.append(levels[-1][::2, ::2])
    with tifffile.TiffWriter(out, ome=True) as tw:
        opts = dict(tile=(tile, tile), compression="jpeg", compressionargs={"level": quality}, photometric="rgb")
        tw.write(levels[0], subifds=len(levels) - 1, metadata={"axes": "YXS", "PhysicalSizeX": size, "PhysicalSizeXUnit": "µm",
                                                                  "PhysicalSizeY": size, "PhysicalSizeYUnit": "µm"}, **opts)
        for level in levels[1:]:
            tw.write(level, subfiletype=1, **opts)


def write_progressive_tile(src, out, tile=128, quality=85):
    """Complete JFIF tiles (tables in each) by Pillow (libjpeg-turbo), the second one progressive."""
    image = np.asarray(Image.open(src).convert("RGB"))
    h, w, _ = image.shape
    tiles = []
    for y in range(0, h, tile):
        for x in range(0, w, tile):
            block = np.zeros((tile, tile, 3), np.uint8)
            part = image[y:y + tile, x:x + tile]
            block[:part.shape[0], :part.shape[1]] = part
            buf = io.BytesIO()
            Image.fromarray(block).save(buf, "JPEG", quality=quality, subsampling=2, progressive=len(tiles) == 1)
            tiles.append(buf.getvalue())
    with tifffile.TiffWriter(out) as tw:
        tw.write(data=iter(tiles), shape=(h, w, 3), dtype=np.uint8, tile=(tile, tile), compression="jpeg", photometric="ycbcr",
                 metadata=None)


if __name__ == "__main__":
    kind, src, out = sys.argv[1:4]
    {"aperio": write_aperio, "ome": write_ome, "progressive-tile": write_progressive_tile}[kind](src, out)
