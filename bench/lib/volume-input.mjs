// The volume benchmarks' input: an OME-TIFF z-stack of `planes` uint8 planes of `side`²,
// written by tifffile one plane at a time (its iterator form, so the writer holds one plane),
// with a smooth pattern plus a little texture so that JPEG has something to code.
import fs from "node:fs";
import { execFileSync } from "node:child_process";

/** Writes the stack to `file` with the project's Python (tifffile) unless it is there already. */
export function makeVolume(python, file, planes, side) {
  if (fs.existsSync(file)) return file;
  execFileSync(python, ["-c", `
import sys, numpy as np, tifffile
n, s = int(sys.argv[2]), int(sys.argv[3])
y, x = np.mgrid[0:s, 0:s]
def planes():
    for z in range(n):
        yield ((np.sin(x / 37 + z / 50) + np.cos(y / 23 - z / 70)) * 60 + 128 + (x * y + z) % 7).clip(0, 255).astype(np.uint8)
tifffile.imwrite(sys.argv[1], planes(), shape=(n, s, s), dtype=np.uint8, ome=True, photometric="minisblack",
                 metadata={"axes": "ZYX", "PhysicalSizeX": 0.1, "PhysicalSizeY": 0.1, "PhysicalSizeZ": 0.1})
`, file, String(planes), String(side)], { stdio: "inherit" });
  return file;
}
