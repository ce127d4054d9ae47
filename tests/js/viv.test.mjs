// Viv (@vivjs/loaders) reads what `zarr-jpeg convert` writes: colour (ycbcr, stored (c, y, x)
// with a transpose codec), `rgb` inside sharding_indexed, and grayscale, every pyramid level,
// tile by tile and channel by channel, through `loadOmeZarrFromStore` + `getTile` after
// `register()` on the zarrita copy Viv itself imports.
//
// Viv 0.21 asks for zarrita ^0.5.4; package.json's `overrides` gives it 0.7.5 instead, as
// docs/viewers.md tells viewer authors to do: zarrita before 0.7.4 throws "Order length must
// match the number of dimensions." for a channel selection of a transposed array.
// Run: node --test tests/js/viv.test.mjs
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import * as zarr from "zarrita";
import FileSystemStore from "@zarrita/storage/fs";
import { PNG } from "pngjs";
import { loadOmeZarrFromStore } from "@vivjs/loaders";
import { register } from "../../dist/index.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "zarr-jpeg-viv-"));
process.on("exit", () => fs.rmSync(tmp, { recursive: true, force: true }));

// Tile PSNR against the source image averaged to the tile's level: every tile of these
// q95 stores has more than 31 dB; a tile from the wrong place or the wrong channel has
// less than 20.
const MIN_TILE_PSNR = 30;

test("Viv resolves the same zarrita as this test, at the version the override forces", () => {
  const vivOwn = path.join(root, "node_modules/@vivjs/loaders/node_modules/zarrita");
  assert.equal(fs.existsSync(vivOwn), false, "Viv has a zarrita copy of its own: register() on ours would not reach it");
  const version = JSON.parse(fs.readFileSync(path.join(root, "node_modules/zarrita/package.json"), "utf8")).version;
  assert.equal(version, "0.7.5");
});

register(zarr.registry);

/** Runs the converter's CLI as a user does. */
function convertSample(sample, name, ...options) {
  const out = path.join(tmp, `${name}.zarr`);
  execFileSync(process.execPath, [path.join(root, "dist/cli.js"), "convert", path.join(root, "samples", sample), out, ...options], { stdio: "pipe" });
  return out;
}

/** The source PNG as planes: channels × (height × width). */
function readPlanes(sample) {
  const png = PNG.sync.read(fs.readFileSync(path.join(root, "samples", sample)), { skipRescale: true });
  const { width, height } = png;
  // pngjs expands every colour type to RGBA; a grayscale PNG has R = G = B.
  const channels = sample === "cell.png" ? 1 : 3;
  const planes = Array.from({ length: channels }, () => new Float64Array(width * height));
  for (let i = 0; i < width * height; i++) for (let c = 0; c < channels; c++) planes[c][i] = png.data[i * 4 + c];
  return { width, height, planes };
}

/** Averages a plane over factor × factor areas (the pyramid's levels, to within rounding). */
function boxAverage(plane, width, height, factor) {
  const w = Math.ceil(width / factor);
  const h = Math.ceil(height / factor);
  const out = new Float64Array(w * h);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      let sum = 0;
      let n = 0;
      for (let yy = y * factor; yy < Math.min((y + 1) * factor, height); yy++)
        for (let xx = x * factor; xx < Math.min((x + 1) * factor, width); xx++, n++) sum += plane[yy * width + xx];
      out[y * w + x] = sum / n;
    }
  return { plane: out, width: w, height: h };
}

function psnr(a, b) {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += (a[i] - b[i]) ** 2;
  return sum === 0 ? Infinity : 10 * Math.log10((255 * 255 * a.length) / sum);
}

/**
 * Reads every tile of every level and channel through Viv, and checks each against
 * zarrita's read of the whole level (exactly: the same decoded samples, windowed by hand)
 * and against the source image averaged to that level (within JPEG tolerance).
 */
async function checkStore(dir, sample, { channels, arrayCodec }) {
  const source = readPlanes(sample);
  const { data: pyramid, metadata } = await loadOmeZarrFromStore(new FileSystemStore(dir));
  assert.ok(metadata.multiscales, "Viv read the OME-Zarr 0.5 metadata");
  assert.ok(pyramid.length >= 2, "a pyramid of levels");
  let tiles = 0;
  for (const [level, pixelSource] of pyramid.entries()) {
    assert.deepEqual(pixelSource.labels, channels === 1 ? ["y", "x"] : ["c", "y", "x"]);
    assert.equal(pixelSource.dtype, "Uint8");
    const array = await zarr.open(zarr.root(new FileSystemStore(dir)).resolve(String(level)), { kind: "array" });
    const metadataCodecs = JSON.parse(fs.readFileSync(path.join(dir, String(level), "zarr.json"), "utf8")).codecs.map((c) => c.name);
    assert.deepEqual(metadataCodecs, arrayCodec);
    const whole = await zarr.get(array);
    const [height, width] = whole.shape.slice(-2);
    const reference = boxAverage(source.planes[0], source.width, source.height, 2 ** level);
    assert.deepEqual([reference.height, reference.width], [height, width], `level ${level} shape`);
    const references = source.planes.map((plane) => boxAverage(plane, source.width, source.height, 2 ** level).plane);
    const size = pixelSource.tileSize;
    for (let ty = 0; ty * size < height; ty++)
      for (let tx = 0; tx * size < width; tx++)
        for (let c = 0; c < channels; c++) {
          const tile = await pixelSource.getTile({ x: tx, y: ty, selection: channels === 1 ? {} : { c } });
          const w = Math.min(size, width - tx * size);
          const h = Math.min(size, height - ty * size);
          assert.deepEqual([tile.width, tile.height], [w, h], `level ${level} tile (${tx}, ${ty}) size`);
          const expected = new Uint8Array(w * h);
          const expectedSource = new Float64Array(w * h);
          const base = channels === 1 ? 0 : c * whole.stride[0];
          const [rowStride, colStride] = whole.stride.slice(-2);
          for (let y = 0; y < h; y++)
            for (let x = 0; x < w; x++) {
              const Y = ty * size + y;
              const X = tx * size + x;
              expected[y * w + x] = whole.data[base + Y * rowStride + X * colStride];
              expectedSource[y * w + x] = references[c][Y * width + X];
            }
          const where = `level ${level}, tile (${tx}, ${ty}), channel ${c}`;
          assert.deepEqual(tile.data, expected, `${where}: Viv's tile equals zarrita's read of the whole level`);
          const quality = psnr(tile.data, expectedSource);
          assert.ok(quality >= MIN_TILE_PSNR, `${where}: ${quality.toFixed(1)} dB against the source`);
          tiles++;
        }
  }
  return tiles;
}

test("colour (ycbcr, (c, y, x) + transpose): every tile of every level and channel", async () => {
  const dir = convertSample("ihc.png", "ihc-ycbcr", "--chunk", "128");
  const tiles = await checkStore(dir, "ihc.png", { channels: 3, arrayCodec: ["transpose", "jpeg"] });
  assert.ok(tiles >= 3 * (16 + 4 + 1), `${tiles} tiles`);
});

test("`rgb` inside sharding_indexed: every tile of every level and channel", async () => {
  const dir = convertSample("ihc.png", "ihc-rgb-sharded", "--color", "rgb", "--chunk", "128", "--shard", "256");
  await checkStore(dir, "ihc.png", { channels: 3, arrayCodec: ["sharding_indexed"] });
});

test("grayscale (cell.png, 550 × 660: partial edge tiles): every tile of every level", async () => {
  const dir = convertSample("cell.png", "cell-gray", "--chunk", "128");
  await checkStore(dir, "cell.png", { channels: 1, arrayCodec: ["jpeg"] });
});

test("a t × c × z stack (OME-TIFF by tifffile, reshape + jpeg): Viv's labels, and every plane's tiles equal zarrita's read", async () => {
  const { PYTHON } = await import("./helpers/python.mjs");
  const input = path.join(tmp, "stack.ome.tif");
  execFileSync(PYTHON, ["-c", `
import sys, numpy as np, tifffile
y, x = np.mgrid[0:150, 0:170]
d = np.array([[[(np.sin(x / (6 + c) + t) + np.cos(y / 9 + z)) * 60 + 40 * c + 70 for z in range(3)] for c in range(2)] for t in range(2)])
tifffile.imwrite(sys.argv[1], d.clip(0, 255).astype(np.uint8), ome=True, photometric="minisblack", metadata={"axes": "TCZYX", "PhysicalSizeZ": 2.0})
`, input]);
  const dir = path.join(tmp, "stack.zarr");
  execFileSync(process.execPath, [path.join(root, "dist/cli.js"), "convert", input, dir, "--chunk", "64", "--quiet"], { stdio: "pipe" });
  const { data: pyramid } = await loadOmeZarrFromStore(new FileSystemStore(dir));
  assert.ok(pyramid.length >= 2);
  const level0 = pyramid[0];
  assert.deepEqual(level0.labels, ["t", "c", "z", "y", "x"]);
  assert.deepEqual(level0.shape, [2, 2, 3, 150, 170]);
  const whole = await zarr.get(await zarr.open(zarr.root(new FileSystemStore(dir)).resolve("0"), { kind: "array" }));
  const [st, sc, sz, sy, sx] = whole.stride;
  for (let t = 0; t < 2; t++)
    for (let c = 0; c < 2; c++)
      for (let z = 0; z < 3; z++) {
        const tile = await level0.getTile({ x: 1, y: 1, selection: { t, c, z } });
        const size = level0.tileSize;
        const expected = new Uint8Array(tile.width * tile.height);
        for (let yy = 0; yy < tile.height; yy++)
          for (let xx = 0; xx < tile.width; xx++)
            expected[yy * tile.width + xx] = whole.data[t * st + c * sc + z * sz + (size + yy) * sy + (size + xx) * sx];
        assert.deepEqual(tile.data, expected, `tile (1, 1) of t=${t} c=${c} z=${z}`);
      }
});
