// PNGs the converter reads specially. 16-bit PNGs (written at test time by libpng through
// imagecodecs) stream a band of rows at a time like 8-bit ones, mapped to 8 bits by
// --rescale: each sample equals libpng's decode mapped by
// round((clamp(v, MIN, MAX) − MIN) · 255 / (MAX − MIN)) within JPEG's error, and the window is
// recorded in the omero channels; without --rescale they are refused by name. PNGs read whole
// (interlaced) are refused past a size bound before their pixels are allocated.
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
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "zarr-jpeg-png16-"));
process.on("exit", () => fs.rmSync(tmp, { recursive: true, force: true }));
const at = (name) => path.join(tmp, name);

// Smooth gradients (JPEG's error stays small) over most of the 16-bit range; libpng's own
// decode of each file is written next to it as raw little-endian uint16 (H, W, samples).
execFileSync(PYTHON, ["-c", `
import sys, numpy as np, imagecodecs
out = sys.argv[1]
y, x = np.mgrid[0:203, 0:157]
g = (1000 + x * 190 + y * 140).astype(np.uint16)
images = {"gray16": g, "rgb16": np.stack([g, 65535 - g, 30000 + (x * 60).astype(np.uint16)], -1),
          "graya16": np.stack([g, np.full_like(g, 40000)], -1), "rgba16": np.stack([g, g // 2, 65535 - g, np.full_like(g, 65535)], -1)}
for name, image in images.items():
    open(f"{out}/{name}.png", "wb").write(imagecodecs.png_encode(image))
    imagecodecs.png_decode(open(f"{out}/{name}.png", "rb").read()).astype("<u2").tofile(f"{out}/{name}.raw")
`, tmp]);

const SAMPLES = { gray16: 1, rgb16: 3, graya16: 2, rgba16: 4 };

async function level0(store) {
  const array = await zarr.open(zarr.root(new FileSystemStore(store)).resolve("0"), { kind: "array" });
  return zarr.get(array);
}

for (const [name, samples] of Object.entries(SAMPLES)) {
  for (const rescale of ["auto", "2000:50000"]) {
    test(`${name}.png with --rescale ${rescale}: libpng's samples mapped to 8 bits, the window recorded`, async () => {
      const raw = fs.readFileSync(at(`${name}.raw`));
      const all = new Uint16Array(raw.buffer, raw.byteOffset, raw.length / 2);
      const colour = samples === 2 || samples === 4 ? samples - 1 : samples;
      let [min, max] = rescale.split(":").map(Number);
      if (rescale === "auto") {
        min = 65535;
        max = 0;
        all.forEach((v, i) => {
          if (i % samples < colour) [min, max] = [Math.min(min, v), Math.max(max, v)];
        });
      }
      const out = at(`${name}-${rescale.replace(":", "-")}.zarr`);
      const summary = await convert(at(`${name}.png`), out, { rescale, quality: 100, ...(colour === 3 ? { color: "rgb" } : {}) });
      assert.deepEqual(summary.rescale, { min, max });
      const omero = JSON.parse(fs.readFileSync(path.join(out, "zarr.json"), "utf8")).attributes.ome.omero;
      for (const channel of omero.channels) assert.deepEqual(channel.rescaled_from, { data_type: "uint16", start: min, end: max });
      const got = await level0(out);
      const map = (v) => (v <= min ? 0 : v >= max ? 255 : Math.round(((v - min) * 255) / (max - min)));
      const [H, W] = [203, 157];
      // (c, y, x) for colour, (y, x) for grayscale, through zarrita's strides
      const at3 = (c, y, x) => (colour === 3 ? got.data[c * got.stride[0] + y * got.stride[1] + x * got.stride[2]] : got.data[y * got.stride[0] + x * got.stride[1]]);
      let worst = 0;
      for (let y = 0; y < H; y++) {
        for (let x = 0; x < W; x++) {
          for (let c = 0; c < colour; c++) worst = Math.max(worst, Math.abs(at3(c, y, x) - map(all[(y * W + x) * samples + c])));
        }
      }
      assert.ok(worst <= 2, `max difference ${worst}`);
    });
  }
}

test("a 16-bit PNG without --rescale is refused, naming uint16 and --rescale; --rescale on an 8-bit PNG is refused", async () => {
  await assert.rejects(convert(at("gray16.png"), at("refused.zarr")), (e) =>
    e instanceof ConvertError && e.kind === "InvalidInput" && /16-bit grayscale PNG: the samples are uint16; .*--rescale auto/.test(e.message));
  assert.equal(fs.existsSync(at("refused.zarr")), false);
  const png8 = path.resolve("samples/cell.png");
  await assert.rejects(convert(png8, at("refused8.zarr"), { rescale: "auto" }), (e) =>
    e instanceof ConvertError && e.kind === "InvalidArgument" && /rescale applies to 16-bit input; .* is an 8-bit PNG/.test(e.message));
  await assert.rejects(convert(at("gray16.png"), at("refused.zarr"), { rescale: "9:3" }), (e) => e instanceof ConvertError && /rescale must be/.test(e.message));
});

test("an interlaced PNG too large to read whole is refused by name before its pixels are allocated", () => {
  // written by libvips: 9000 × 8000, Adam7-interlaced (a few kB: one flat colour)
  execFileSync("vips", ["black", at("big.v"), "9000", "8000"]);
  execFileSync("vips", ["copy", at("big.v"), `${at("big-interlaced.png")}[interlace=true]`]);
  const cli = path.resolve("dist/cli.js");
  const r = spawnSync("/usr/bin/time", ["-f", "%M", process.execPath, cli, "convert", at("big-interlaced.png"), at("big.zarr")], { encoding: "utf8" });
  assert.equal(r.status, 1, r.stderr);
  const lines = r.stderr.trim().split("\n");
  assert.match(lines[0], /^zarr-jpeg convert: .*big-interlaced\.png: an interlaced PNG is read whole, and this one has 72 megapixels .*non-interlaced PNG/);
  const peakKB = Number(lines.at(-1));
  assert.ok(peakKB < 200 * 1024, `peak RSS ${peakKB} KB: the refusal came after allocating`);
  assert.equal(fs.existsSync(at("big.zarr")), false);
});
