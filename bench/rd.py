"""Rate-distortion helper for `npm run bench`.

Usage: python3 bench/rd.py REFERENCE.ppm WORKDIR q1,q2,...

Encodes REFERENCE (a PPM: colour, 4:2:0; a PGM: grayscale) with Pillow (libjpeg-turbo) at
each quality, with and without `optimize`, then measures every WORKDIR/<candidate>_q<NN>.jpg
(ours and mozjpeg are written there by bench/lib/rd.mjs) plus the Pillow files: size in
bytes and PSNR (dB, over all RGB samples, or all gray samples) after decoding with Pillow.
Prints JSON {candidate: [{q, bytes, psnr}]}.
"""
import io
import json
import math
import os
import re
import sys

import numpy as np
from PIL import Image, features


def psnr(ref, img):
    mse = np.mean((ref.astype(np.float64) - img.astype(np.float64)) ** 2)
    return float("inf") if mse == 0 else 10 * math.log10(255.0**2 / mse)


def main():
    ref_path, workdir, qs = sys.argv[1], sys.argv[2], [int(q) for q in sys.argv[3].split(",")]
    ref_img = Image.open(ref_path)
    mode = "L" if ref_img.mode == "L" else "RGB"
    ref_img = ref_img.convert(mode)
    ref = np.asarray(ref_img)
    out = {}
    for name, optimize in (("pillow", False), ("pillow (optimize)", True)):
        pts = []
        for q in qs:
            buf = io.BytesIO()
            ref_img.save(buf, "JPEG", quality=q, subsampling=2, optimize=optimize)
            data = buf.getvalue()
            dec = np.asarray(Image.open(io.BytesIO(data)).convert(mode))
            pts.append({"q": q, "bytes": len(data), "psnr": round(psnr(ref, dec), 4)})
        out[name] = pts
    pat = re.compile(r"^(.*)_q(\d+)\.jpg$")
    files = {}
    for f in sorted(os.listdir(workdir)):
        m = pat.match(f)
        if m:
            files.setdefault(m.group(1), []).append((int(m.group(2)), f))
    for name, items in files.items():
        pts = []
        for q, f in sorted(items):
            with open(os.path.join(workdir, f), "rb") as fh:
                data = fh.read()
            dec = np.asarray(Image.open(io.BytesIO(data)).convert(mode))
            pts.append({"q": q, "bytes": len(data), "psnr": round(psnr(ref, dec), 4)})
        out[name] = pts
    meta = {"pillow": Image.__version__, "libjpeg": features.version("jpg"), "libjpeg_turbo": features.check_feature("libjpeg_turbo")}
    print(json.dumps({"meta": meta, "curves": out}))


if __name__ == "__main__":
    main()
