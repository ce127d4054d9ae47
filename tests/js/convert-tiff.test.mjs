// The converter on TIFF input (the Rust core's src/convert/tiff/) through the built package, with
// inputs written at test time by independent writers — libvips (`vips tiffsave`), libtiff
// (`tiffcp`), tifffile + imagecodecs / Pillow (tests/python/write_tiff_inputs.py) — and
// checked by independent readers (tests/python/check_tiff_store.py: tifffile's decode of the
// TIFF against Pillow's decode of each chunk, each chunk's entropy-coded data against its
// tile's bytes, OpenSlide's level-0 region against the chunks), then read back by zarrita.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { execFileSync, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import * as zarr from "zarrita";
import FileSystemStore from "@zarrita/storage/fs";
import { init, register, encode } from "../../dist/index.js";
import { convert } from "../../dist/convert.js";
import { PYTHON } from "./helpers/python.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const samples = path.join(root, "samples");
const py = (script, ...args) => execFileSync(PYTHON, [path.join(root, "tests/python", script), ...args], { encoding: "utf8" });
register(zarr.registry);
await init();

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "zarr-jpeg-tiff-"));
process.on("exit", () => fs.rmSync(tmp, { recursive: true, force: true }));
let n = 0;
const out = (name = "out") => path.join(tmp, `${name}-${n++}.zarr`);
const at = (name) => path.join(tmp, name);
const vips = (...args) => execFileSync("vips", args, { stdio: "pipe" });
const readJson = (...p) => JSON.parse(fs.readFileSync(path.join(...p), "utf8"));

// The inputs, written once.
vips("tiffsave", path.join(samples, "ihc.png"), at("q85.tif"), "--tile", "--pyramid", "--compression", "jpeg", "--Q", "85");
vips("tiffsave", path.join(samples, "ihc.png"), at("q95.tif"), "--tile", "--pyramid", "--compression", "jpeg", "--Q", "95",
  "--tile-width", "256", "--tile-height", "256");
vips("tiffsave", path.join(samples, "cell.png"), at("gray.tif"), "--tile", "--pyramid", "--compression", "jpeg", "--Q", "90");
vips("tiffsave", path.join(samples, "ihc.png"), at("big.tif"), "--tile", "--pyramid", "--compression", "jpeg", "--Q", "85", "--bigtiff");
vips("tiffsave", path.join(samples, "ihc.png"), at("plain.tif"), "--tile");
// libtiff: JPEG-compressed big-endian tiles (tiffcp -B)
execFileSync("tiffcp", ["-B", "-c", "jpeg:90", "-t", "-w", "128", "-l", "128", at("plain.tif"), at("tiffcp-be.tif")]);
py("write_tiff_inputs.py", "aperio", path.join(samples, "ihc.png"), at("aperio.svs"));
py("write_tiff_inputs.py", "ome", path.join(samples, "ihc.png"), at("ome.tif"));
py("write_tiff_inputs.py", "progressive-tile", path.join(samples, "ihc.png"), at("progressive.tif"));

const check = (tif, store) => JSON.parse(py("check_tiff_store.py", tif, store));

async function readLevel(store, level) {
  const array = await zarr.open(zarr.root(new FileSystemStore(store)).resolve(String(level)), { kind: "array" });
  return zarr.get(array);
}

const cases = [
  // [file, what, tiles, colour space the level-0 array declares]
  ["q85.tif", "libvips Q85: YCbCr 4:2:0, shared JPEGTables", 16, "ycbcr"],
  ["q95.tif", "libvips Q95: RGB photometric, ids R,G,B", 4, "rgb"],
  ["gray.tif", "libvips grayscale, edge tiles", 30, "grayscale"],
  ["big.tif", "libvips BigTIFF", 16, "ycbcr"],
  ["tiffcp-be.tif", "libtiff tiffcp -c jpeg, big-endian", 16, "ycbcr"],
  ["aperio.svs", "Aperio-style SVS: RGB, ids 0,1,2, no JFIF/Adobe", 9, "rgb"],
  ["ome.tif", "tifffile OME-TIFF with a SubIFD pyramid", 16, "ycbcr"],
];

for (const [file, what, tiles, color] of cases) {
  test(`${what}: every tile copied; Pillow's decode of each chunk = tifffile's decode of the TIFF; entropy-coded data identical`, async () => {
    const store = out(file);
    const summary = await convert(at(file), store, { workers: file === "q85.tif" ? 1 : 0 });
    assert.equal(summary.tiles.copied, tiles, JSON.stringify(summary.tiles));
    assert.equal(summary.tiles.reencoded, 0);
    assert.equal(summary.config.encoded_color_space, color);
    const result = check(at(file), store);
    assert.equal(result.chunks, tiles);
    assert.equal(result.max_diff, 0, JSON.stringify(result));
    assert.equal(result.identical_entropy, tiles, JSON.stringify(result));
    // OpenSlide (where it opens the file: all of these) reads the same level 0
    assert.ok(result.openslide, "openslide-python is installed (tests/python/requirements.txt)");
    if (result.openslide.vendor) assert.equal(result.openslide.max_diff, 0, JSON.stringify(result.openslide));
    if (file === "aperio.svs") assert.equal(result.openslide.vendor, "aperio");
    // zarrita reads every level; level 0 has the TIFF's shape
    const [h, w, c] = result.shape;
    const level0 = await readLevel(store, 0);
    assert.deepEqual(level0.shape, c === 1 ? [h, w] : [3, h, w]);
    for (let level = 1; level < summary.levels.length; level++) {
      const got = await readLevel(store, level);
      assert.deepEqual(got.shape, summary.levels[level].shape);
    }
    const meta = readJson(store, "0", "zarr.json");
    assert.equal(meta.attributes.zarr_jpeg.copied_from_tiff_tiles, tiles);
  });
}

test("the quality declared is the IJG quality nearest the tiles' tables (libvips writes IJG tables)", async () => {
  for (const [file, q] of [["q85.tif", 85], ["q95.tif", 95], ["gray.tif", 90], ["tiffcp-be.tif", 90]]) {
    const summary = await convert(at(file), out(), {});
    assert.equal(summary.config.quality, q, file);
    assert.equal(summary.qualityEstimated, true);
  }
});

test("level 1 is level 0 averaged over 2×2 areas (level 0 read by zarrita)", async () => {
  const store = out();
  await convert(at("gray.tif"), store, {});
  const l0 = await readLevel(store, 0);
  const l1 = await readLevel(store, 1);
  const [h, w] = l0.shape;
  assert.deepEqual(l1.shape, [Math.ceil(h / 2), Math.ceil(w / 2)]);
  let sum = 0;
  for (let y = 0; y < l1.shape[0]; y++) {
    for (let x = 0; x < l1.shape[1]; x++) {
      const px = (yy, xx) => l0.data[Math.min(yy, h - 1) * w + Math.min(xx, w - 1)];
      const mean = (px(2 * y, 2 * x) + px(2 * y, 2 * x + 1) + px(2 * y + 1, 2 * x) + px(2 * y + 1, 2 * x + 1)) / 4;
      sum += (l1.data[y * l1.shape[1] + x] - mean) ** 2;
    }
  }
  const psnr = 10 * Math.log10((255 * 255) / (sum / (l1.shape[0] * l1.shape[1])));
  assert.ok(psnr > 38, `level 1 PSNR against the 2×2 means of level 0: ${psnr.toFixed(1)} dB`);
});

test("pixel sizes: OME-XML PhysicalSizeX/Y and Aperio MPP, in micrometres, doubling per level", async () => {
  for (const [file, size] of [["ome.tif", 0.25], ["aperio.svs", 0.499]]) {
    const store = out();
    const summary = await convert(at(file), store, {});
    const ms = readJson(store, "zarr.json").attributes.ome.multiscales[0];
    assert.ok(ms.axes.filter((a) => a.type === "space").every((a) => a.unit === "micrometer"), file);
    ms.datasets.forEach((d, level) => {
      const [, sy, sx] = d.coordinateTransformations[0].scale;
      assert.ok(Math.abs(sy - size * 2 ** level) < 1e-9 && Math.abs(sx - size * 2 ** level) < 1e-9, `${file} level ${level}: ${sy}, ${sx}`);
    });
    assert.ok(summary.levels.length >= 2);
  }
});

test("a progressive tile among baseline ones is decoded and re-encoded; the others are copied", async () => {
  const store = out();
  const summary = await convert(at("progressive.tif"), store, {});
  assert.equal(summary.tiles.reencoded, 1);
  assert.equal(summary.tiles.copied, 15);
  assert.deepEqual(readJson(store, "0", "zarr.json").attributes.zarr_jpeg.reencoded_chunks, [[0, 1]]);
  const result = check(at("progressive.tif"), store);
  assert.equal(result.identical_entropy, 15);
  assert.deepEqual(result.differing_entropy, [[0, 1]]);
});

test("sharded output (by option, and by the default rule for large levels) is read back the same", async () => {
  const plain = out();
  const sharded = out();
  await convert(at("q85.tif"), plain, { shard: 0 });
  await convert(at("q85.tif"), sharded, { shard: 256 });
  const meta = readJson(sharded, "0", "zarr.json");
  assert.equal(meta.codecs[0].name, "sharding_indexed");
  const result = check(at("q85.tif"), sharded);
  assert.equal(result.max_diff, 0);
  assert.equal(result.identical_entropy, 16);
  for (let level = 0; level < 3; level++) {
    const a = await readLevel(plain, level);
    const b = await readLevel(sharded, level);
    assert.deepEqual(b.data, a.data, `level ${level}`);
  }
});

// ---------------------------------------------------------------- tiles that are not JPEG

vips("tiffsave", path.join(samples, "ihc.png"), at("lzw.tif"), "--tile", "--compression", "lzw");
vips("tiffsave", path.join(samples, "ihc.png"), at("deflate.tif"), "--tile", "--compression", "deflate", "--predictor", "horizontal", "--bigtiff");
vips("tiffsave", path.join(samples, "ihc.png"), at("strips.tif"));
vips("tiffsave", path.join(samples, "cell.png"), at("gray-lzw.tif"), "--compression", "lzw");
execFileSync("tiffcp", ["-B", "-c", "lzw:2", "-r", "37", at("plain.tif"), at("tiffcp-lzw-be.tif")]);
execFileSync("tiffcp", ["-s", "-p", "separate", "-c", "zip", at("plain.tif"), at("planar.tif")]);

/** tifffile's decode of the first page: { data, shape } (an independent reader). */
function tifffileSamples(file) {
  const raw = at(`${path.basename(file)}.raw`);
  const shape = JSON.parse(execFileSync(PYTHON, ["-c",
    "import sys, json, numpy, tifffile; a = tifffile.imread(sys.argv[1], key=0); a = numpy.moveaxis(a, 0, -1) if a.ndim == 3 and a.shape[0] == 3 and a.shape[-1] != 3 else a; " +
    "open(sys.argv[2], 'wb').write(numpy.ascontiguousarray(a).tobytes()); print(json.dumps(list(a.shape)))", file, raw], { encoding: "utf8" }));
  return { data: new Uint8Array(fs.readFileSync(raw)), shape };
}

for (const [file, what] of [
  ["lzw.tif", "libvips LZW tiles"],
  ["deflate.tif", "libvips Deflate tiles with the horizontal predictor, BigTIFF"],
  ["strips.tif", "libvips uncompressed strips"],
  ["gray-lzw.tif", "libvips grayscale LZW strips"],
  ["tiffcp-lzw-be.tif", "libtiff LZW strips with the predictor, big-endian"],
  ["planar.tif", "libtiff Deflate strips, planar (separate) RGB"],
]) {
  test(`${what}: decoded and encoded; the store equals convert() of tifffile's decode, byte for byte`, async () => {
    const a = out();
    const b = out();
    const summary = await convert(at(file), a, { name: "x", workers: 1 });
    await convert(tifffileSamples(at(file)), b, { name: "x" });
    assert.equal(summary.tiles, undefined);
    assert.match(summary.source.page, /LZW|Deflate|none/);
    const files = (dir) => fs.readdirSync(dir, { recursive: true }).filter((f) => fs.statSync(path.join(dir, f)).isFile()).sort();
    assert.deepEqual(files(a), files(b));
    for (const f of files(a)) assert.ok(fs.readFileSync(path.join(a, f)).equals(fs.readFileSync(path.join(b, f))), f);
  });
}

// ---------------------------------------------------------------- levels 1+ of JPEG tiles

// Odd-sized tiled JPEG TIFFs (libvips), one with sparse tiles (byte count 0, which tifffile
// and zarrita read as zeros): 1405 × 923 in 128-px tiles, so that the levels have an odd last
// row and column and the top one a chunk smaller than a tile. The levels' chunks are made by
// the converter depth-first over the tiles (and sharded as they come in Z-order); the test's
// reference makes each level whole, from the level below.
vips("replicate", path.join(samples, "ihc.png"), at("rep.v"), "3", "2");
vips("crop", at("rep.v"), at("odd.v"), "0", "0", "1405", "923");
vips("tiffsave", at("odd.v"), at("odd-rgb.tif"), "--tile", "--compression", "jpeg", "--Q", "85", "--tile-width", "128", "--tile-height", "128");
vips("colourspace", at("odd.v"), at("odd-gray.v"), "b-w");
vips("tiffsave", at("odd-gray.v"), at("odd-gray.tif"), "--tile", "--compression", "jpeg", "--Q", "90", "--tile-width", "128", "--tile-height", "128");
fs.copyFileSync(at("odd-rgb.tif"), at("odd-sparse.tif"));
execFileSync(PYTHON, ["-c", `
import tifffile
with tifffile.TiffFile(${JSON.stringify(at("odd-sparse.tif"))}, mode="r+b") as tf:
    for name in ("TileOffsets", "TileByteCounts"):
        tag = tf.pages[0].tags[name]
        values = list(tag.value)
        for i in (0, 1, 11, 12, 30, 47, len(values) - 1):  # a 2×2 block, a lone tile, edges
            values[i] = 0
        tag.overwrite(tuple(values))
`]);

/** Level n+1 from level n: each pixel the rounded mean of its 2×2 area (of what there is in a last odd row or column). */
function halve({ data, height, width, channels: C }) {
  const h = Math.ceil(height / 2);
  const w = Math.ceil(width / 2);
  const out = new Uint8Array(h * w * C);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      for (let c = 0; c < C; c++) {
        let sum = 0;
        let n = 0;
        for (let yy = 2 * y; yy < Math.min(2 * y + 2, height); yy++) {
          for (let xx = 2 * x; xx < Math.min(2 * x + 2, width); xx++, n++) sum += data[(yy * width + xx) * C + c];
        }
        out[(y * w + x) * C + c] = Math.floor((sum + n / 2) / n);
      }
    }
  }
  return { data: out, height: h, width: w, channels: C };
}

/** A chunk's stream: its own file, or its slice of a shard (the index at the shard's end). */
function chunkBytes(store, level, meta, cy, cx, C) {
  const sharded = meta.codecs[0].name === "sharding_indexed";
  const inner = sharded ? meta.codecs[0].configuration.chunk_shape : meta.chunk_grid.configuration.chunk_shape;
  const outer = meta.chunk_grid.configuration.chunk_shape;
  const key = (y, x) => path.join(store, String(level), "c", String(y), String(x), ...(C === 3 ? ["0"] : []));
  if (!sharded) return fs.existsSync(key(cy, cx)) ? fs.readFileSync(key(cy, cx)) : null;
  const [py, px] = [outer[0] / inner[0], outer[1] / inner[1]];
  const file = key(Math.floor(cy / py), Math.floor(cx / px));
  if (!fs.existsSync(file)) return null;
  const shard = fs.readFileSync(file);
  const index = shard.subarray(shard.length - 4 - py * px * 16, shard.length - 4);
  const at = ((cy % py) * px + (cx % px)) * 16;
  const offset = index.readBigUInt64LE(at);
  if (offset === 0xffffffffffffffffn) return null;
  return shard.subarray(Number(offset), Number(offset + index.readBigUInt64LE(at + 8)));
}

for (const [file, what, options] of [
  ["odd-rgb.tif", "libvips YCbCr, 1405 × 923 in 128-px tiles", {}],
  ["odd-rgb.tif", "the same, in shards of 256 px", { shard: 256 }],
  ["odd-gray.tif", "libvips grayscale, 1405 × 923", {}],
  ["odd-sparse.tif", "the same YCbCr with 7 sparse tiles, in shards of 512 px", { shard: 512 }],
]) {
  test(`levels 1+ (${what}): each chunk is the encode of the 2×2 means of level 0 as read back, byte for byte; the means within level 0's difference of tifffile's`, async () => {
    const store = out();
    const summary = await convert(at(file), store, { channelAxis: "last", workers: 1, ...options });
    // level 0 as zarrita reads it (this package's decoder, the one the converter averaged);
    // tifffile's decode (libjpeg-turbo) of the TIFF differs from it by rounding (the IDCT's,
    // and the chroma upsampling's for YCbCr 4:2:0): a few units at most, and the means of the
    // two by no more than level 0 does
    const decoded = tifffileSamples(at(file));
    const C = decoded.shape[2] ?? 1;
    const l0 = await readLevel(store, 0);
    assert.deepEqual(l0.shape, decoded.shape);
    let level = { data: l0.data, height: decoded.shape[0], width: decoded.shape[1], channels: C };
    let independent = { ...level, data: decoded.data };
    const maxDiff = (a, b) => {
      let max = 0;
      for (let i = 0; i < a.length; i++) max = Math.max(max, Math.abs(a[i] - b[i]));
      return max;
    };
    const bound = maxDiff(level.data, independent.data);
    assert.ok(bound <= (C === 1 ? 1 : 4), `level 0 differs from tifffile's decode by ${bound}`);
    assert.ok(summary.levels.length >= 4);
    for (let l = 1; l < summary.levels.length; l++) {
      level = halve(level);
      independent = halve(independent);
      const diff = maxDiff(level.data, independent.data);
      assert.ok(diff <= bound, `level ${l}'s 2×2 means differ from those of tifffile's decode by ${diff} (level 0: ${bound})`);
      const meta = readJson(store, String(l), "zarr.json");
      assert.deepEqual(meta.shape.slice(0, 2), [level.height, level.width]);
      // each level's own configuration (levels 1+ may differ in quality: levelQualities)
      const codecs = meta.codecs[0].name === "sharding_indexed" ? meta.codecs[0].configuration.codecs : meta.codecs;
      const levelJpeg = codecs.find((c) => c.name === "jpeg").configuration;
      assert.equal(levelJpeg.quality, summary.levelQualities[l - 1], `level ${l}'s quality`);
      const [ch, cw] = summary.levels[l].chunkShape;
      const shape = C === 3 ? [ch, cw, 3] : [ch, cw];
      for (let cy = 0; cy * ch < level.height; cy++) {
        for (let cx = 0; cx * cw < level.width; cx++) {
          // the chunk cut from the level, its edges filled by repeating the last row and column
          const samples = new Uint8Array(ch * cw * C);
          for (let y = 0; y < ch; y++) {
            for (let x = 0; x < cw; x++) {
              const sy = Math.min(cy * ch + y, level.height - 1);
              const sx = Math.min(cx * cw + x, level.width - 1);
              for (let c = 0; c < C; c++) samples[(y * cw + x) * C + c] = level.data[(sy * level.width + sx) * C + c];
            }
          }
          const want = encode(levelJpeg, samples, shape, summary.encodeOptions);
          const got = chunkBytes(store, l, meta, cy, cx, C);
          assert.ok(got && Buffer.from(want).equals(got), `level ${l} chunk (${cy}, ${cx})`);
        }
      }
    }
    if (file === "odd-sparse.tif") {
      assert.equal(summary.tiles.empty, 7);
      const meta = readJson(store, "0", "zarr.json");
      for (const [ty, tx] of [[0, 0], [1, 1], [2, 8], [7, 10]]) assert.equal(chunkBytes(store, 0, meta, ty, tx, C), null, `tile (${ty}, ${tx})`);
      assert.notEqual(chunkBytes(store, 0, meta, 0, 2, C), null);
    }
  });
}

// ---------------------------------------------------------------- several channels

execFileSync(PYTHON, ["-c", `
import numpy as np, tifffile
from PIL import Image
g = np.asarray(Image.open(${JSON.stringify(path.join(samples, "cell.png"))}))
rgb = np.asarray(Image.open(${JSON.stringify(path.join(samples, "ihc.png"))}).resize((550, 660)))
stack = np.stack([g, rgb[:, :, 0], rgb[:, :, 1], rgb[:, :, 2], 255 - g])
tifffile.imwrite(${JSON.stringify(at("mc-planar.tif"))}, stack, photometric="minisblack", planarconfig="separate", tile=(128, 128), compression="zlib")
tifffile.imwrite(${JSON.stringify(at("mc-chunky.tif"))}, np.moveaxis(stack, 0, -1), photometric="minisblack", planarconfig="contig", compression="lzw", metadata=None)
tifffile.imwrite(${JSON.stringify(at("mc-two.tif"))}, stack[:2], photometric="minisblack", planarconfig="separate", compression="zlib")
`]);

test("several uint8 channels (planar, chunky, 2 or 5) become a c axis of grayscale chunks: each channel's chunks equal convert() of tifffile's plane, byte for byte; zarrita selects a channel", async () => {
  for (const [file, count] of [["mc-planar.tif", 5], ["mc-chunky.tif", 5], ["mc-two.tif", 2]]) {
    const store = out();
    const summary = await convert(at(file), store, { name: "x", shard: file === "mc-chunky.tif" ? 512 : undefined });
    const meta = readJson(store, "0", "zarr.json");
    assert.deepEqual(meta.shape, [count, 660, 550]);
    assert.deepEqual(meta.dimension_names, ["c", "y", "x"]);
    assert.equal(readJson(store, "zarr.json").attributes.ome.omero.channels.length, count);
    assert.deepEqual(summary.levels[0].shape, [count, 660, 550]);
    const all = tifffileSamples(at(file)); // (C, H, W) as tifffile returns it for planar; (H, W, C) for chunky
    const planar = all.shape[0] === count;
    for (let c = 0; c < count; c++) {
      const plane = new Uint8Array(660 * 550);
      for (let i = 0; i < plane.length; i++) plane[i] = planar ? all.data[c * plane.length + i] : all.data[i * count + c];
      const single = out();
      await convert({ data: plane, shape: [660, 550] }, single, { name: "x", shard: file === "mc-chunky.tif" ? 512 : undefined });
      for (const level of ["0", "1"]) {
        for (const f of fs.readdirSync(path.join(single, level, "c"), { recursive: true })) {
          const a = path.join(single, level, "c", f);
          if (!fs.statSync(a).isFile()) continue;
          const b = path.join(store, level, "c", String(c), f);
          assert.ok(fs.readFileSync(a).equals(fs.readFileSync(b)), `${file} channel ${c} level ${level} ${f}`);
        }
      }
      if (c === count - 1) {
        const array = await zarr.open(zarr.root(new FileSystemStore(store)).resolve("0"), { kind: "array" });
        const got = await zarr.get(array, [c, null, null]);
        const ref = await zarr.get(await zarr.open(zarr.root(new FileSystemStore(single)).resolve("0"), { kind: "array" }));
        assert.deepEqual(got.data, ref.data);
      }
    }
  }
});

// ---------------------------------------------------------------- 16-bit

execFileSync(PYTHON, ["-c", `
import numpy as np, tifffile
from PIL import Image
a = np.asarray(Image.open(${JSON.stringify(path.join(samples, "cell.png"))})).astype(np.uint16) * 200 + 1000
tifffile.imwrite(${JSON.stringify(at("u16.tif"))}, a, tile=(128, 128), compression="zlib")
tifffile.imwrite(${JSON.stringify(at("u16be.tif"))}, a, tile=(128, 128), compression="lzw", byteorder=">", predictor=True)
rgb = np.asarray(Image.open(${JSON.stringify(path.join(samples, "ihc.png"))})).astype(np.uint16) * 257
tifffile.imwrite(${JSON.stringify(at("u16rgb.tif"))}, rgb, photometric="rgb", compression="lzw")
`]);

/** tifffile's decode mapped to uint8 by numpy: floor((clip(v, lo, hi) - lo) * 255 / (hi - lo) + 0.5). */
function rescaledByNumpy(file, window) {
  const raw = at(`${path.basename(file)}.u8`);
  const result = JSON.parse(execFileSync(PYTHON, ["-c", `
import sys, json, numpy as np, tifffile
a = tifffile.imread(sys.argv[1]).astype(np.float64)
lo, hi = (a.min(), a.max()) if sys.argv[3] == "auto" else map(float, sys.argv[3].split(":"))
u = np.floor((np.clip(a, lo, hi) - lo) * (255 / (hi - lo)) + 0.5).astype(np.uint8)
open(sys.argv[2], "wb").write(u.tobytes())
print(json.dumps({"shape": list(u.shape), "lo": lo, "hi": hi}))`, file, raw, window], { encoding: "utf8" }));
  return { data: new Uint8Array(fs.readFileSync(raw)), shape: result.shape, lo: result.lo, hi: result.hi };
}

test("16-bit: refused by default naming uint16; --rescale auto|MIN:MAX maps linearly to uint8 (numpy's map of tifffile's decode, byte for byte), recorded in omero", async () => {
  refuse(at("u16.tif"), /page 0: the samples are uint16.*--rescale/);
  for (const [file, window] of [["u16.tif", "auto"], ["u16be.tif", "auto"], ["u16be.tif", "5000:40000"], ["u16rgb.tif", "auto"]]) {
    const a = out();
    const b = out();
    await convert(at(file), a, { name: "x", rescale: window });
    const ref = rescaledByNumpy(at(file), window);
    await convert({ data: ref.data, shape: ref.shape }, b, { name: "x" });
    for (const level of fs.readdirSync(b).filter((d) => /^\d+$/.test(d))) {
      for (const f of fs.readdirSync(path.join(b, level), { recursive: true })) {
        const p = path.join(level, f);
        if (fs.statSync(path.join(b, p)).isFile()) assert.ok(fs.readFileSync(path.join(a, p)).equals(fs.readFileSync(path.join(b, p))), `${file} ${window}: ${p}`);
      }
    }
    const channels = readJson(a, "zarr.json").attributes.ome.omero.channels;
    for (const c of channels) assert.deepEqual(c.rescaled_from, { data_type: "uint16", start: ref.lo, end: ref.hi }, `${file} ${window}`);
  }
  await assert.rejects(convert(at("q85.tif"), out(), { rescale: "auto" }), /rescale applies to 16-bit input/);
  await assert.rejects(convert(at("u16.tif"), out(), { rescale: "9:3" }), /rescale must be "auto" or "MIN:MAX"/);
});

// ---------------------------------------------------------------- bad files

const cli = path.join(root, "dist/cli.js");
function refuse(file, pattern) {
  const store = out("refused");
  const r = spawnSync(process.execPath, [cli, "convert", file, store, "--quiet"], { encoding: "utf8" });
  assert.equal(r.status, 1, r.stderr);
  const lines = r.stderr.trim().split("\n");
  assert.equal(lines.length, 1, r.stderr);
  assert.match(lines[0], /^zarr-jpeg convert: /);
  assert.ok(lines[0].includes(file), `names the file: ${lines[0]}`);
  assert.match(lines[0], pattern);
  assert.equal(fs.existsSync(store), false);
  assert.deepEqual(fs.readdirSync(tmp).filter((f) => f.includes(".partial-")), []);
}

/** A copy of a classic little-endian TIFF with `patch(bytes, view, ifd0)` applied. */
function patched(name, patch) {
  const bytes = new Uint8Array(fs.readFileSync(at("q85.tif")));
  const view = new DataView(bytes.buffer);
  patch(bytes, view, view.getUint32(4, true));
  fs.writeFileSync(at(name), bytes);
  return at(name);
}
function entry(view, ifd, tag) {
  const count = view.getUint16(ifd, true);
  for (let i = 0; i < count; i++) if (view.getUint16(ifd + 2 + 12 * i, true) === tag) return ifd + 2 + 12 * i;
  throw new Error(`no tag ${tag}`);
}

test("bad files are refused in one line naming the file, the page or tile, and the reason; exit 1; nothing written", () => {
  const whole = fs.readFileSync(at("q85.tif"));
  // truncated: the first IFD is at the end in libvips' files, so keep the header and
  // IFDs but cut a tile short
  const truncated = patched("truncated.tif", (bytes, view, ifd) => {
    const offsets = view.getUint32(entry(view, ifd, 324) + 8, true);
    const counts = view.getUint32(entry(view, ifd, 325) + 8, true);
    const last = view.getUint32(offsets + 4 * 15, true);
    view.setUint32(counts + 4 * 15, whole.length - last + 1000, true); // tile 15 runs past the end
  });
  refuse(truncated, /page 0.*tile 15.*past the end of the file/);
  const past = patched("offset-past.tif", (bytes, view, ifd) => {
    const offsets = view.getUint32(entry(view, ifd, 324) + 8, true);
    view.setUint32(offsets + 4 * 3, whole.length + 10, true);
  });
  refuse(past, /page 0.*tile 3.*past the end of the file/);
  fs.writeFileSync(at("cut.tif"), whole.subarray(0, 1000));
  refuse(at("cut.tif"), /past the end of the file|truncated/);
  const huge = patched("huge.tif", (bytes, view, ifd) => {
    // 65535 × 65535 (2^32 pixels) claimed over the same 16 tile offsets
    for (const tag of [256, 257]) {
      const e = entry(view, ifd, tag);
      if (view.getUint16(e + 2, true) === 3) view.setUint16(e + 8, 65535, true);
      else view.setUint32(e + 8, 65535, true);
    }
  });
  refuse(huge, /page 0.*tiles needed but 16 offsets given/);
  const loop = patched("loop.tif", (bytes, view, ifd) => {
    const count = view.getUint16(ifd, true);
    view.setUint32(ifd + 2 + 12 * count, ifd, true);
  });
  refuse(loop, /page 1.*loop of IFD offsets/);
  vips("tiffsave", path.join(samples, "ihc.png"), at("zstd.tif"), "--tile", "--compression", "zstd");
  refuse(at("zstd.tif"), /page 0.*Zstandard is not supported/);
  execFileSync("vips", ["cast", path.join(samples, "cell.png"), at("u16.v"), "ushort"]);
  vips("tiffsave", at("u16.v"), at("u16.tif"), "--tile", "--compression", "deflate");
  refuse(at("u16.tif"), /page 0.*uint16/);
});

test("mutated TIFFs (random bytes of the header, IFDs and tag values overwritten): only a ConvertError naming the file, or a store; never another error", async () => {
  // (a deterministic generator: the same cases every run)
  let seed = 12345;
  const random = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
  const sources = ["q85.tif", "tiffcp-be.tif", "big.tif", "lzw.tif", "aperio.svs"].map((f) => new Uint8Array(fs.readFileSync(at(f))));
  for (let round = 0; round < 150; round++) {
    const source = sources[round % sources.length];
    const bytes = Uint8Array.from(source);
    // the IFDs and tag data sit in the first few hundred bytes or the last few KB (libvips, tifffile, libtiff)
    for (let k = 0; k < 1 + Math.floor(random() * 6); k++) {
      const nearEnd = random() < 0.5;
      const at_ = nearEnd ? bytes.length - 1 - Math.floor(random() * Math.min(4096, bytes.length)) : Math.floor(random() * Math.min(512, bytes.length));
      bytes[at_] = random() < 0.3 ? 0xff : Math.floor(random() * 256);
    }
    const file = at(`mutated-${round}.tif`);
    fs.writeFileSync(file, bytes);
    const store = out("mutated");
    try {
      await convert(file, store, { levels: 2 });
    } catch (error) {
      assert.equal(error?.name, "ConvertError", `round ${round}: ${error?.stack ?? error}`);
      assert.ok(error.message.includes(file), `round ${round}: names the file: ${error.message}`);
      assert.ok(!error.message.includes("\n"), `round ${round}: one line: ${error.message}`);
      assert.equal(fs.existsSync(store), false);
    }
    fs.rmSync(file);
  }
});
