// JPEG 2000 TIFF pages (compression 34712, and Aperio's RGB 33005), written at test time by
// tifffile + imagecodecs (OpenJPEG), are decoded by OpenJPEG's WebAssembly build and encoded
// like any decoded page: level 0 equals tifffile's decode within JPEG's error. Aperio's YCbCr
// JPEG 2000 (33003) is refused by name (its codestreams need a colour conversion that cannot
// be checked here), and a damaged codestream gives a one-line error with no output left.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { execFileSync, spawnSync } from "node:child_process";
import * as zarr from "zarrita";
import FileSystemStore from "@zarrita/storage/fs";
import { init, register } from "../../dist/index.js";
import { convert, ConvertError } from "../../dist/convert.js";
import { PYTHON } from "./helpers/python.mjs";

register(zarr.registry);
await init();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "zarr-jpeg-j2k-"));
process.on("exit", () => fs.rmSync(tmp, { recursive: true, force: true }));
const at = (name) => path.join(tmp, name);

execFileSync(PYTHON, ["-c", `
import sys, numpy as np, tifffile
out = sys.argv[1]
y, x = np.mgrid[0:300, 0:260]
rgb = np.stack([x * 0.9 % 256, y * 0.8 % 256, (x + y) * 0.4 % 256], -1).astype(np.uint8)
gray16 = (1000 + x * 150 + y * 100).astype(np.uint16)
def save(name, data, **kw):
    tifffile.imwrite(f"{out}/{name}", data, **kw)
    tifffile.imread(f"{out}/{name}").astype(data.dtype.newbyteorder("<")).tofile(f"{out}/{name}.raw")
save("j2k-rgb.tif", rgb, tile=(128, 128), compression="jpeg2000", photometric="rgb")
save("aperio-rgb.tif", rgb, tile=(128, 128), compression=33005, photometric="rgb")
save("j2k-gray16.tif", gray16, tile=(128, 128), compression="jpeg2000", photometric="minisblack")
save("j2k-strips-be.tif", rgb, rowsperstrip=64, compression="jpeg2000", photometric="rgb", byteorder=">")
tifffile.imwrite(f"{out}/aperio-ycbcr.tif", rgb, tile=(128, 128), compression=33003, photometric="ycbcr")
# a codestream without its main header: tile 4's first 64 bytes zeroed in the file (OpenJPEG,
# like libopenjp2, decodes a codestream cut short leniently, as JPEG 2000 allows)
tifffile.imwrite(f"{out}/damaged.tif", rgb, tile=(128, 128), compression="jpeg2000", photometric="rgb")
with tifffile.TiffFile(f"{out}/damaged.tif") as t:
    off, n = t.pages[0].dataoffsets[4], t.pages[0].databytecounts[4]
data = bytearray(open(f"{out}/damaged.tif", "rb").read())
data[off: off + 64] = bytes(64)
open(f"{out}/damaged.tif", "wb").write(data)
`, tmp]);

async function level0(store) {
  const array = await zarr.open(zarr.root(new FileSystemStore(store)).resolve("0"), { kind: "array" });
  return zarr.get(array);
}

for (const name of ["j2k-rgb.tif", "aperio-rgb.tif", "j2k-strips-be.tif"]) {
  test(`${name}: decoded by OpenJPEG, level 0 equal to tifffile's decode within JPEG's error`, async () => {
    const out = at(`${name}.zarr`);
    await convert(at(name), out, { quality: 100, color: "rgb", onWarning: () => {} });
    const got = await level0(out);
    assert.deepEqual(got.shape, [3, 300, 260]);
    const expected = new Uint8Array(fs.readFileSync(at(`${name}.raw`)));
    const [s0, s1, s2] = got.stride;
    let worst = 0;
    for (let y = 0; y < 300; y++) {
      for (let x = 0; x < 260; x++) {
        for (let c = 0; c < 3; c++) worst = Math.max(worst, Math.abs(got.data[c * s0 + y * s1 + x * s2] - expected[(y * 260 + x) * 3 + c]));
      }
    }
    assert.ok(worst <= 2, `max difference ${worst}`);
  });
}

test("a 16-bit JPEG 2000 page with --rescale: tifffile's samples mapped to 8 bits", async () => {
  const out = at("gray16.zarr");
  const summary = await convert(at("j2k-gray16.tif"), out, { quality: 100, rescale: "auto" });
  const raw = fs.readFileSync(at("j2k-gray16.tif.raw"));
  const samples = new Uint16Array(raw.buffer, raw.byteOffset, raw.length / 2);
  const min = samples.reduce((a, b) => Math.min(a, b));
  const max = samples.reduce((a, b) => Math.max(a, b));
  assert.deepEqual(summary.rescale, { min, max });
  const got = await level0(out);
  let worst = 0;
  for (let i = 0; i < samples.length; i++) worst = Math.max(worst, Math.abs(got.data[i] - Math.round(((samples[i] - min) * 255) / (max - min))));
  assert.ok(worst <= 1, `max difference ${worst}`);
});

test("Aperio's YCbCr JPEG 2000 is refused by name; a damaged codestream gives one line naming the tile, exit 1, no output", async () => {
  await assert.rejects(convert(at("aperio-ycbcr.tif"), at("ycbcr.zarr")), (e) =>
    e instanceof ConvertError && e.kind === "InvalidInput" && /page 0: Aperio JPEG 2000 \(YCbCr\) is not supported/.test(e.message));
  const r = spawnSync(process.execPath, [path.resolve("dist/cli.js"), "convert", at("damaged.tif"), at("damaged.zarr")], { encoding: "utf8" });
  assert.equal(r.status, 1, r.stderr);
  assert.equal(r.stdout, "");
  const lines = r.stderr.trim().split("\n");
  assert.equal(lines.length, 1, r.stderr);
  assert.match(lines[0], /^zarr-jpeg convert: .*damaged\.tif: page 0 tile 4 .*cannot decode its JPEG 2000 data/);
  assert.equal(fs.existsSync(at("damaged.zarr")), false);
});
