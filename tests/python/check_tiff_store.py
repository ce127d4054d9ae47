"""Checks a converted store's level 0 against its TIFF with independent tools:

    python check_tiff_store.py IN.tif OUT.zarr

- truth: tifffile's decode of the TIFF's first page (libjpeg-turbo via imagecodecs), or of
  its first series' channel planes when the store has a c axis of grayscale chunks (OME-TIFF
  channel pages, planar samples): each plane's tiles against that channel's chunks;
- each level-0 chunk decoded by Pillow (libjpeg-turbo) from the stored stream alone;
- each chunk's entropy-coded data (after its first SOS segment) compared byte for byte
  with its tile's, read from the TIFF at the offsets tifffile gives;
- where OpenSlide (openslide-python + openslide-bin) opens the TIFF, its level-0 region
  against the chunks' decode.
Prints JSON: { max_diff, chunks, identical_entropy, differing_entropy: [...], modes: [...],
openslide: { vendor, max_diff } or null }.
"""
import io
import json
import os
import struct
import sys

import numpy as np
import tifffile
from PIL import Image


def entropy(stream):
    at = 2
    while at + 4 <= len(stream):
        if stream[at] != 0xFF:
            raise ValueError("no marker at %d" % at)
        marker = stream[at + 1]
        if marker == 0xFF:
            at += 1
            continue
        length = int.from_bytes(stream[at + 2:at + 4], "big")
        at += 2 + length
        if marker == 0xDA:
            return stream[at:]
    raise ValueError("no SOS")


def main(tiff_path, store):
    meta = json.load(open(os.path.join(store, "0", "zarr.json")))
    names = meta["dimension_names"]
    codecs = meta["codecs"]
    shard = codecs[0]["configuration"] if codecs[0]["name"] == "sharding_indexed" else None
    chunk_shape = (shard["chunk_shape"] if shard else meta["chunk_grid"]["configuration"]["chunk_shape"])
    outer = meta["chunk_grid"]["configuration"]["chunk_shape"]
    yx = [i for i, n in enumerate(names) if n in ("y", "x")]
    ch, cw = chunk_shape[yx[0]], chunk_shape[yx[1]]
    per = (outer[yx[0]] // ch, outer[yx[1]] // cw) if shard else None
    planes = meta["shape"][0] if names[0] == "c" and chunk_shape[0] == 1 else 1

    def key(parts):
        coords = []
        for n in names:
            coords.append(parts[n])
        return os.path.join(store, "0", "c", *map(str, coords))

    def chunk_bytes(cy, cx, c=0):
        if not shard:
            p = key({"c": c, "y": cy, "x": cx})
            return open(p, "rb").read() if os.path.exists(p) else None
        sy, sx = cy // per[0], cx // per[1]
        p = key({"c": c, "y": sy, "x": sx})
        if not os.path.exists(p):
            return None
        data = open(p, "rb").read()
        n = per[0] * per[1]
        index = data[len(data) - 4 - 16 * n:len(data) - 4]
        k = (cy - sy * per[0]) * per[1] + (cx - sx * per[1])
        off, length = struct.unpack_from("<QQ", index, 16 * k)
        return None if off == 2**64 - 1 else data[off:off + length]

    with tifffile.TiffFile(tiff_path) as tf:
        page = tf.pages[0]
        if planes > 1:
            truth = np.moveaxis(tf.series[0].asarray(), 0, -1)  # (C, H, W) → (H, W, C)
        else:
            truth = page.asarray()
        if truth.ndim == 2:
            truth = truth[:, :, None]
        h, w = truth.shape[:2]
        th, tw = (page.tilelength, page.tilewidth) if page.is_tiled else (page.rowsperstrip, w)
        rows, cols = -(-h // th), -(-w // tw)

        def tile_at(c, i):
            """Offset and length of plane c's tile i: planar samples in one page, or a page per channel."""
            if planes == 1:
                return page.dataoffsets[i], page.databytecounts[i]
            if len(page.dataoffsets) >= planes * rows * cols:
                return page.dataoffsets[c * rows * cols + i], page.databytecounts[c * rows * cols + i]
            return tf.pages[c].dataoffsets[i], tf.pages[c].databytecounts[i]

        fh = tf.filehandle
        max_diff = 0
        identical = 0
        differing = []
        modes = set()
        missing = 0
        assembled = np.zeros_like(truth)
        for c, ty, tx in ((c, ty, tx) for c in range(planes) for ty in range(rows) for tx in range(cols)):
            i = ty * cols + tx
            stream = chunk_bytes(ty, tx, c)
            if stream is None:
                missing += 1
                continue
            img = Image.open(io.BytesIO(stream))
            modes.add(img.mode)
            arr = np.asarray(img)
            if arr.ndim == 2:
                arr = arr[:, :, None]
            y0, x0 = ty * th, tx * tw
            part = truth[y0:y0 + th, x0:x0 + tw, c:c + 1] if planes > 1 else truth[y0:y0 + th, x0:x0 + tw]
            got = arr[:part.shape[0], :part.shape[1]]
            assembled[y0:y0 + th, x0:x0 + tw, c:c + got.shape[2]] = got
            max_diff = max(max_diff, int(np.abs(got.astype(int) - part.astype(int)).max()))
            offset, length = tile_at(c, i)
            fh.seek(offset)
            tile = fh.read(length)
            if entropy(tile) == entropy(stream):
                identical += 1
            else:
                differing.append([c, ty, tx] if planes > 1 else [ty, tx])
    slide = None
    try:
        import openslide
        with openslide.OpenSlide(tiff_path) as s:
            region = np.asarray(s.read_region((0, 0), 0, (w, h)).convert("RGB"))
            # (channel planes: OpenSlide reads the first page, channel 0, as gray)
            ours = assembled if assembled.shape[2] == 3 and planes == 1 else np.repeat(assembled[:, :, :1], 3, axis=2)
            slide = {"vendor": s.properties.get("openslide.vendor"),
                     "max_diff": int(np.abs(region.astype(int) - ours.astype(int)).max())}
    except ImportError:
        slide = None
    except Exception as error:  # OpenSlide does not open it
        slide = {"vendor": None, "error": str(error)}
    print(json.dumps({"openslide": slide, "max_diff": max_diff, "chunks": planes * rows * cols - missing, "missing": missing, "identical_entropy": identical,
                      "differing_entropy": differing, "modes": sorted(modes), "shape": [h, w, truth.shape[2]]}))


if __name__ == "__main__":
    main(*sys.argv[1:3])
