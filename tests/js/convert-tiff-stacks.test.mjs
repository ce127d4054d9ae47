// Stacks in through the npm package: an OME-TIFF z-series with channels and time points, and
// an ImageJ hyperstack, written at test time by tifffile, converted plane by plane into 5-D
// arrays (t, c, z, y, x) that zarrita reads back through the reshape and jpeg codecs, each
// plane within JPEG tolerance of tifffile's read, also from chunks of several z planes.
// OME-XML that disagrees with the file's IFDs is refused by name, with nothing left at the
// destination.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { execFileSync } from "node:child_process";
import * as zarr from "zarrita";
import FileSystemStore from "@zarrita/storage/fs";
import { init, register } from "../../dist/index.js";
import { convert, ConvertError } from "../../dist/convert.js";
import { PYTHON } from "./helpers/python.mjs";

register(zarr.registry);
await init();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "zarr-jpeg-tiff-stacks-"));
process.on("exit", () => fs.rmSync(tmp, { recursive: true, force: true }));
const at = (name) => path.join(tmp, name);
const [T, C, Z, H, W] = [2, 2, 3, 140, 200];

const WRITER = `
import sys, numpy as np, tifffile
out = sys.argv[1]
T, C, Z, H, W = ${T}, ${C}, ${Z}, ${H}, ${W}
y, x = np.mgrid[0:H, 0:W]
data = np.array([[[(np.sin(x / (7 + c) + t) + np.cos(y / 11 + z)) * 60 + 50 * c + 70
                   for z in range(Z)] for c in range(C)] for t in range(T)]).clip(0, 255).astype(np.uint8)
tifffile.imwrite(f"{out}/tczyx.ome.tif", data, ome=True, photometric="minisblack", compression="lzw",
                 metadata={"axes": "TCZYX", "PhysicalSizeX": 0.25, "PhysicalSizeY": 0.25, "PhysicalSizeZ": 1.5, "TimeIncrement": 2.0,
                           "Channel": {"Name": ["nuclei", "membrane"]}})
tifffile.imwrite(f"{out}/hyperstack.tif", np.moveaxis(data, 1, 2), imagej=True, metadata={"axes": "TZCYX", "spacing": 1.5, "unit": "um"})
data.tofile(f"{out}/tczyx.raw")
ome = '<OME><Image><Pixels DimensionOrder="XYZCT" SizeC="1" SizeZ="{z}" SizeT="1"><Channel SamplesPerPixel="1"/>{td}</Pixels></Image></OME>'
for name, description in [("short.ome.tif", ome.format(z=5, td="")), ("past-end.ome.tif", ome.format(z=2, td='<TiffData IFD="3"/>'))]:
    with tifffile.TiffWriter(f"{out}/{name}") as w:
        w.write(data[0, 0, 0], photometric="minisblack", metadata=None, description=description)
        w.write(data[0, 0, 1], photometric="minisblack", metadata=None)
`;
execFileSync(PYTHON, ["-c", WRITER, tmp]);
const source = new Uint8Array(fs.readFileSync(at("tczyx.raw")));

for (const [name, depth] of [["tczyx.ome.tif", 1], ["hyperstack.tif", 1], ["tczyx.ome.tif", 2]]) {
  test(`${name}: a t × c × z stack becomes 5-D arrays (chunks of ${depth} z planes) that zarrita reads back plane by plane`, async () => {
    const out = at(`${name}-${depth}.zarr`);
    await convert(at(name), out, { chunk: 64, ...(depth > 1 ? { chunkDepth: depth } : {}) });
    const group = JSON.parse(fs.readFileSync(path.join(out, "zarr.json"), "utf8"));
    const ms = group.attributes.ome.multiscales[0];
    assert.deepEqual(ms.axes.map((a) => a.name), ["t", "c", "z", "y", "x"]);
    assert.equal(ms.axes[2].unit, "micrometer");
    const scale = ms.datasets[0].coordinateTransformations[0].scale;
    assert.deepEqual(scale.slice(1, 3), [1, 1.5]);
    if (name.endsWith(".ome.tif")) {
      assert.deepEqual(scale, [2, 1, 1.5, 0.25, 0.25]);
      assert.equal(ms.axes[0].unit, "second");
      assert.deepEqual(group.attributes.ome.omero.channels.map((c) => c.label), ["nuclei", "membrane"]);
    }
    const array = await zarr.open(zarr.root(new FileSystemStore(out)).resolve("0"), { kind: "array" });
    assert.deepEqual(array.shape, [T, C, Z, H, W]);
    assert.deepEqual(array.chunks, [1, 1, depth, 64, 64]);
    const got = await zarr.get(array);
    const [st, sc, sz, sy, sx] = got.stride;
    for (let t = 0; t < T; t++) {
      for (let c = 0; c < C; c++) {
        for (let z = 0; z < Z; z++) {
          let squared = 0;
          for (let y = 0; y < H; y++) {
            for (let x = 0; x < W; x++) {
              const d = got.data[t * st + c * sc + z * sz + y * sy + x * sx] - source[(((t * C + c) * Z + z) * H + y) * W + x];
              squared += d * d;
            }
          }
          const psnr = 10 * Math.log10((255 * 255) / (squared / (H * W)));
          assert.ok(psnr >= 35, `plane t=${t} c=${c} z=${z}: ${psnr.toFixed(1)} dB`);
        }
      }
    }
    const level1 = await zarr.open(zarr.root(new FileSystemStore(out)).resolve("1"), { kind: "array" });
    assert.deepEqual(level1.shape, [T, C, Z, H / 2, W / 2]);
  });
}

for (const [name, pattern] of [
  ["short.ome.tif", /OME-XML describes 5 z-plane\(s\) × 1 channel\(s\) × 1 time point\(s\) = 5 planes, but the file has 2 IFD\(s\)/],
  ["past-end.ome.tif", /a TiffData points at IFD 3, past the last IFD \(the file has 2: 0–1\)/],
]) {
  test(`${name}: OME-XML that disagrees with the IFDs is refused by name, with no output left`, async () => {
    const out = at(`${name}.zarr`);
    await assert.rejects(convert(at(name), out), (e) => e instanceof ConvertError && e.kind === "InvalidInput" && pattern.test(e.message));
    assert.equal(fs.existsSync(out), false);
  });
}
