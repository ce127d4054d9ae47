// The converter (js/convert.js, js/convert-files.js, js/convert-cli.js) through the built
// package: OME-Zarr 0.5 layout, pyramid shapes and 2×2 area averaging, round trips read
// back by zarrita (unsharded and sharded, partial shards included, sharding_indexed per the
// Zarr v3 sharding spec: index at the end, bytes + crc32c index codecs), RFC-16
// conformance, and the refusals (unreadable file, 16-bit PNG, bad options, never a
// half-written store). Small images only.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import zlib from "node:zlib";
import os from "node:os";
import path from "node:path";
import { spawnSync, execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import * as zarr from "zarrita";
import FileSystemStore from "@zarrita/storage/fs";
import { PNG } from "pngjs";
import jpegJs from "jpeg-js";
import { init, decode, register } from "../../dist/index.js";
import { checkDataset, formatReport } from "../../dist/check.js";
import { convert, ConvertError, formatSummary } from "../../dist/convert.js";
import { parseArgs } from "../../dist/convert-cli.js";
import { restartMarkers } from "./helpers/restart-markers.mjs";
import { storeFiles } from "./helpers/store-files.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
register(zarr.registry);
await init();

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "zarr-jpeg-convert-"));
process.on("exit", () => fs.rmSync(tmp, { recursive: true, force: true }));
let n = 0;
const out = (name = "out") => path.join(tmp, `${name}-${n++}.zarr`);

/** A smooth colour test image (H, W, 3), with a little texture. */
function rgbImage(h, w) {
  const data = new Uint8Array(h * w * 3);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      const i = (y * w + x) * 3;
      data[i] = (40 + x * 2 + ((x * y) % 7)) & 255;
      data[i + 1] = (200 - y) & 255;
      data[i + 2] = (60 + ((x + y) >> 1)) & 255;
    }
  return data;
}

function grayImage(h, w) {
  const data = new Uint8Array(h * w);
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) data[y * w + x] = (30 + x + 2 * y + ((x ^ y) & 3)) & 255;
  return data;
}

function psnr(a, b) {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += (a[i] - b[i]) ** 2;
  return 10 * Math.log10((255 * 255) / (sum / a.length));
}

const readJson = (...p) => JSON.parse(fs.readFileSync(path.join(...p), "utf8"));
const openLevel = (dir, level) => zarr.open(zarr.root(new FileSystemStore(dir)).resolve(String(level)), { kind: "array" });

/** zarrita's (c, y, x) result → interleaved (y, x, c). */
function interleave(got) {
  const [c, h, w] = got.shape;
  const out = new Uint8Array(c * h * w);
  for (let k = 0; k < c; k++)
    for (let y = 0; y < h; y++)
      for (let x = 0; x < w; x++) out[(y * w + x) * c + k] = got.data[k * got.stride[0] + y * got.stride[1] + x * got.stride[2]];
  return out;
}

function writePng(file, width, height, data, { colorType = 2, bitDepth = 8 } = {}) {
  const png = new PNG({ width, height, colorType, inputColorType: colorType, bitDepth, inputHasAlpha: colorType === 6 || colorType === 4 });
  png.data = Buffer.from(data);
  fs.writeFileSync(file, PNG.sync.write(png, { colorType, inputColorType: colorType, bitDepth, inputHasAlpha: colorType === 6 || colorType === 4 }));
}

test("OME-Zarr 0.5 layout: group metadata, axes with types, scale transforms, (c, y, x) with transpose before jpeg", async () => {
  const dir = out();
  const summary = await convert({ data: rgbImage(100, 150), shape: [100, 150, 3] }, dir, { chunk: 32, quality: 90, pixelSize: 0.5, unit: "micrometer" });
  const group = readJson(dir, "zarr.json");
  assert.equal(group.zarr_format, 3);
  assert.equal(group.node_type, "group");
  const { ome } = group.attributes;
  assert.equal(ome.version, "0.5");
  const [ms] = ome.multiscales;
  assert.deepEqual(ms.axes, [
    { name: "c", type: "channel" },
    { name: "y", type: "space", unit: "micrometer" },
    { name: "x", type: "space", unit: "micrometer" },
  ]);
  assert.deepEqual(ms.datasets.map((d) => d.path), ["0", "1", "2", "3"]);
  assert.deepEqual(ms.datasets.map((d) => d.coordinateTransformations[0].scale), [[1, 0.5, 0.5], [1, 1, 1], [1, 2, 2], [1, 4, 4]]);
  const level0 = readJson(dir, "0", "zarr.json");
  assert.equal(level0.data_type, "uint8");
  assert.deepEqual(level0.shape, [3, 100, 150]);
  assert.deepEqual(level0.chunk_grid.configuration.chunk_shape, [3, 32, 32]);
  assert.deepEqual(level0.codecs, [
    { name: "transpose", configuration: { order: [1, 2, 0] } },
    { name: "jpeg", configuration: { quality: 90, encoded_color_space: "ycbcr", decoded_color_space: "rgb", subsampling: [[2, 2], [1, 1], [1, 1]] } },
  ]);
  assert.deepEqual(level0.dimension_names, ["c", "y", "x"]);
  // Chunks are plain JPEG streams under the default chunk key encoding.
  const first = fs.readFileSync(path.join(dir, "0", "c", "0", "0", "0"));
  assert.deepEqual([...first.subarray(0, 2)], [0xff, 0xd8]);
  assert.equal(summary.levels.length, 4);
  assert.ok(summary.psnr > 30, `PSNR ${summary.psnr}`);
  assert.ok(summary.ratio > 1);
  // No temporary directory is left next to the store.
  assert.deepEqual(fs.readdirSync(tmp).filter((f) => f.includes("partial")), []);
});

test("pyramid: 2× per level until one chunk holds the image; odd sides round up; --levels caps it", async () => {
  const levelsOf = async (h, w, options) => (await convert({ data: grayImage(h, w), shape: [h, w] }, out(), { chunk: 32, ...options })).levels.length;
  assert.equal(await levelsOf(100, 150), 4); // 150 → 75 → 38 → 19
  assert.equal(await levelsOf(32, 32), 1);
  assert.equal(await levelsOf(33, 10), 2);
  assert.equal(await levelsOf(100, 150, { levels: 2 }), 2);
  await assert.rejects(levelsOf(4, 4, { levels: 4 }), (e) => e instanceof ConvertError && /levels 4 is too many for a 4×4 image/.test(e.message));
  const dir = out();
  await convert({ data: grayImage(101, 67), shape: [101, 67] }, dir, { chunk: 16 });
  const shapes = [0, 1, 2, 3].map((l) => readJson(dir, String(l), "zarr.json").shape);
  assert.deepEqual(shapes, [[101, 67], [51, 34], [26, 17], [13, 9]]);
  assert.ok(!fs.existsSync(path.join(dir, "4")));
  const capped = out();
  await convert({ data: grayImage(101, 67), shape: [101, 67] }, capped, { chunk: 16, levels: 2 });
  assert.deepEqual(readJson(capped, "zarr.json").attributes.ome.multiscales[0].datasets.length, 2);
});

// The spec: chunk width SHOULD be a multiple of 8·h_max and height of 8·v_max (the MCU).
test("chunk sizes that are not whole MCUs (8·v_max × 8·h_max) warn; small levels round up to whole MCUs", async () => {
  const warningsOf = async (options, channels = 3) => {
    const data = channels === 3 ? rgbImage(64, 64) : grayImage(64, 64);
    return (await convert({ data, shape: channels === 3 ? [64, 64, 3] : [64, 64] }, out(), options)).warnings;
  };
  const mcuWarning = async (options, channels) => (await warningsOf(options, channels)).filter((w) => /MCU/.test(w));
  // 8 · 4 = 32 rows (v 4) or 32 columns (h 4): 48 and 16 are multiples of 16 but not of 32
  assert.match((await mcuWarning({ subsampling: [[2, 4], [1, 1], [1, 1]], chunk: 48 }))[0], /chunk 48 .* 32 × 16 \(height × width\) MCU/);
  assert.match((await mcuWarning({ subsampling: [[4, 1], [1, 1], [1, 1]], chunk: 16 }))[0], /chunk 16 .* 8 × 32 \(height × width\) MCU/);
  assert.match((await mcuWarning({ subsampling: [[1, 4], [1, 1], [1, 1]], chunk: 16 }))[0], /32 × 8/);
  assert.match((await mcuWarning({ subsampling: "4:2:0", chunk: 24 }))[0], /16 × 16/);
  // whole MCUs: no warning (8 is enough without subsampling)
  for (const [options, channels] of [
    [{ subsampling: [[2, 4], [1, 1], [1, 1]], chunk: 64 }, 3],
    [{ subsampling: [[4, 2], [1, 1], [1, 1]], chunk: 32 }, 3],
    [{ subsampling: "4:2:2", chunk: 16 }, 3],
    [{ subsampling: "4:4:4", chunk: 8 }, 3],
    [{ color: "rgb", chunk: 40 }, 3],
    [{ chunk: 24 }, 1],
  ]) {
    assert.deepEqual(await mcuWarning(options, channels), [], JSON.stringify(options));
  }
  // A level smaller than a chunk gets a chunk of whole MCUs: 4:1:1 (MCU 8 × 32) on 20 × 20.
  const dir = out();
  await convert({ data: rgbImage(20, 20), shape: [20, 20, 3] }, dir, { subsampling: [[4, 1], [1, 1], [1, 1]], chunk: 64, channelAxis: "last" });
  assert.deepEqual(readJson(dir, "0", "zarr.json").chunk_grid.configuration.chunk_shape, [24, 32, 3]);
  const gray = out();
  await convert({ data: grayImage(20, 20), shape: [20, 20] }, gray, { chunk: 64 });
  assert.deepEqual(readJson(gray, "0", "zarr.json").chunk_grid.configuration.chunk_shape, [24, 24]);
});

test("color rgb warns that not every decoder reads rgb streams (the spec's caveat), in the API and the CLI", async () => {
  const rgbWarning = /color rgb .*not every JPEG decoder supports.*jpgjs.*Neuroglancer.*only when portability does not matter/;
  const warningsOf = async (options, shape) => (await convert({ data: rgbImage(16, 16).subarray(0, shape.reduce((a, b) => a * b)), shape }, out(), options)).warnings;
  assert.equal((await warningsOf({ color: "rgb" }, [16, 16, 3])).filter((w) => rgbWarning.test(w)).length, 1);
  assert.deepEqual(await warningsOf({ color: "ycbcr" }, [16, 16, 3]), []);
  assert.deepEqual(await warningsOf({}, [16, 16]), []);
  const input = path.join(tmp, "rgb-caveat.png");
  writePng(input, 16, 16, rgbImage(16, 16));
  const cli = path.join(root, "dist/cli.js");
  const run = (...args) => spawnSync(process.execPath, [cli, "convert", input, out(), "--chunk", "16", ...args], { encoding: "utf8" });
  const rgb = run("--color", "rgb");
  assert.equal(rgb.status, 0, rgb.stderr);
  assert.match(rgb.stderr, /zarr-jpeg convert: warning: color rgb .*jpgjs/);
  const ycbcr = run();
  assert.equal(ycbcr.status, 0, ycbcr.stderr);
  assert.doesNotMatch(ycbcr.stderr, /warning/);
});

test("options are their own members only: inherited ones are ignored, a non-object is a named error", async () => {
  // an inherited quality or color is not an option (register() and configurations read own members too)
  const inherited = Object.create({ quality: 10, color: "rgb", bogus: 1 });
  const sample = { data: rgbImage(16, 16), shape: [16, 16, 3] };
  const plain = await convert(sample, out(), inherited);
  assert.equal(plain.config.quality, 95);
  assert.equal(plain.config.encoded_color_space, "ycbcr");
  assert.equal((await convert(sample, out(), Object.assign(Object.create({ quality: 10 }), { quality: 80 }))).config.quality, 80);
  for (const bad of [null, 5, "quality=80"]) {
    await assert.rejects(convert(sample, out(), bad), (e) => e instanceof ConvertError && /options must be an object/.test(e.message), String(bad));
  }
  await assert.rejects(convert({ data: new Uint8Array(16 * 16), height: 16, width: 16, channels: 1 }, "/tmp/never-written.zarr", null), (e) => e instanceof ConvertError && /options must be an object, got null/.test(e.message));
});

// Level n+1 is the rounded 2×2 mean of level n (edges average what exists), read back through
// zarrita: at quality 100 without a colour transform JPEG moves a sample by at most 1 here.
const roundedMeans = (data, height, width, channels) => {
  const [h, w] = [Math.ceil(height / 2), Math.ceil(width / 2)];
  const means = new Uint8Array(h * w * channels);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++)
      for (let c = 0; c < channels; c++) {
        const covered = [];
        for (const yy of [2 * y, 2 * y + 1]) for (const xx of [2 * x, 2 * x + 1]) if (yy < height && xx < width) covered.push(data[(yy * width + xx) * channels + c]);
        means[(y * w + x) * channels + c] = Math.floor(covered.reduce((p, q) => p + q, 0) / covered.length + 0.5);
      }
  return means;
};

test("downsampling is 2×2 area averaging (rounded), edges average what exists", async () => {
  assert.deepEqual([...roundedMeans(Uint8Array.from([0, 2, 10, 4, 6, 20, 100, 101, 255]), 3, 3, 1)], [3, 15, 101, 255]);
  let seed = 7;
  const random = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 24);
  for (const [height, width] of [[16, 16], [17, 16], [16, 17], [33, 31], [9, 9]]) {
    for (const channels of [1, 3]) {
      // smooth content (a ramp plus a little noise), which JPEG at quality 100 keeps within 1
      const data = Uint8Array.from({ length: height * width * channels }, (_, i) => {
        const x = Math.floor(i / channels) % width;
        const y = Math.floor(i / channels / width);
        return 40 + 3 * x + 2 * y + (random() & 3);
      });
      const dir = out();
      await convert({ data, shape: channels === 3 ? [height, width, 3] : [height, width] }, dir,
        { chunk: 8, levels: 2, quality: 100, ...(channels === 3 ? { color: "rgb", channelAxis: "last" } : {}) });
      const level1 = await zarr.get(await openLevel(dir, 1));
      const means = roundedMeans(data, height, width, channels);
      assert.deepEqual(level1.shape.slice(0, 2), [Math.ceil(height / 2), Math.ceil(width / 2)]);
      let worst = 0;
      for (let i = 0; i < means.length; i++) worst = Math.max(worst, Math.abs(level1.data[i] - means[i]));
      assert.ok(worst <= 1, `${height}×${width}×${channels}: level 1 is ${worst} from the rounded means`);
    }
  }
});

for (const [label, options, tol] of [
  ["grayscale", { color: "grayscale", quality: 95 }, 40],
  ["ycbcr 4:2:0", { quality: 95 }, 34],
  ["rgb", { color: "rgb", quality: 95 }, 40],
  ["ycbcr 4:4:4, channel axis last", { quality: 95, subsampling: "4:4:4", channelAxis: "last" }, 38],
]) {
  test(`round trip through zarrita (FileSystemStore), ${label}: each chunk is what decode() gives for its stream`, async () => {
    const gray = options.color === "grayscale";
    const [h, w] = [70, 90];
    const input = gray ? grayImage(h, w) : rgbImage(h, w);
    const dir = out();
    const summary = await convert({ data: input, shape: gray ? [h, w] : [h, w, 3] }, dir, { ...options, chunk: 32 });
    const arr = await openLevel(dir, 0);
    const got = await zarr.get(arr);
    const samples = gray ? got.data : options.channelAxis === "last" ? got.data : interleave(got);
    const p = psnr(samples, input);
    assert.ok(p > tol, `${label}: PSNR ${p.toFixed(2)} dB ≤ ${tol}`);
    assert.ok(Math.abs(p - summary.psnr) < 0.01, `summary PSNR ${summary.psnr} = zarrita's ${p}`);
    // The chunk at (1, 1) read by zarrita equals decode() of its stored stream.
    const key = gray ? ["c", "1", "1"] : options.channelAxis === "last" ? ["c", "1", "1", "0"] : ["c", "0", "1", "1"];
    const config = readJson(dir, "0", "zarr.json").codecs.at(-1).configuration;
    const ref = decode(config, fs.readFileSync(path.join(dir, "0", ...key)), gray ? [32, 32] : [32, 32, 3]);
    const C = gray ? 1 : 3;
    for (let y = 0; y < 32; y++)
      for (let x = 0; x < 32 * C; x++) assert.equal(samples[(32 + y) * w * C + 32 * C + x], ref[y * 32 * C + x]);
  });
}

test("sharded output (sharding_indexed, index at end, bytes+crc32c) is read by zarrita, partial shards included", async () => {
  const [h, w] = [100, 150]; // 32-pixel chunks in 64-pixel shards: right and bottom shards are partial
  const input = rgbImage(h, w);
  const plain = out("plain");
  const sharded = out("sharded");
  await convert({ data: input, shape: [h, w, 3] }, plain, { chunk: 32, quality: 90 });
  const summary = await convert({ data: input, shape: [h, w, 3] }, sharded, { chunk: 32, shard: 64, quality: 90 });
  const meta = readJson(sharded, "0", "zarr.json");
  assert.deepEqual(meta.chunk_grid.configuration.chunk_shape, [3, 64, 64]);
  assert.equal(meta.codecs.length, 1);
  assert.deepEqual(meta.codecs[0], {
    name: "sharding_indexed",
    configuration: {
      chunk_shape: [3, 32, 32],
      codecs: [
        { name: "transpose", configuration: { order: [1, 2, 0] } },
        { name: "jpeg", configuration: { quality: 90, encoded_color_space: "ycbcr", decoded_color_space: "rgb", subsampling: [[2, 2], [1, 1], [1, 1]] } },
      ],
      index_codecs: [{ name: "bytes", configuration: { endian: "little" } }, { name: "crc32c" }],
      index_location: "end",
    },
  });
  // A partial shard (bottom right: rows 64–99, columns 128–149): its index marks the
  // chunks beyond the array as absent (2^64-1, 2^64-1) and ends with the CRC-32C of the index.
  const shard = fs.readFileSync(path.join(sharded, "0", "c", "0", "1", "2"));
  const indexBytes = shard.subarray(shard.length - 4 - 4 * 16, shard.length - 4);
  assert.equal(shard.readUInt32LE(shard.length - 4), crc32c(indexBytes));
  const index = new BigUint64Array(indexBytes.buffer.slice(indexBytes.byteOffset, indexBytes.byteOffset + indexBytes.length));
  const entries = [0, 1, 2, 3].map((i) => [index[2 * i], index[2 * i + 1]]);
  const absent = 0xffffffffffffffffn;
  assert.notEqual(entries[0][0], absent); // (2, 4)
  assert.deepEqual(entries[1], [absent, absent]); // (2, 5): x 160 ≥ 150
  assert.notEqual(entries[2][0], absent); // (3, 4)
  assert.deepEqual(entries[3], [absent, absent]);
  // Each stored chunk is the same JPEG stream the unsharded store holds.
  const [off, len] = entries[2].map(Number);
  assert.deepEqual(shard.subarray(off, off + len), fs.readFileSync(path.join(plain, "0", "c", "0", "3", "4")));
  // zarrita reads the whole level and a region, identical to the unsharded store.
  for (let level = 0; level < summary.levels.length; level++) {
    const a = await zarr.get(await openLevel(plain, level));
    const b = await zarr.get(await openLevel(sharded, level));
    assert.deepEqual(b.shape, a.shape);
    assert.deepEqual(b.data, a.data, `level ${level}: sharded = unsharded`);
  }
  const region = await zarr.get(await openLevel(sharded, 0), [null, zarr.slice(60, 100), zarr.slice(120, 150)]);
  assert.deepEqual(region.shape, [3, 40, 30]);
  // Sharded and unsharded stores hold the same chunk bytes; the shards add 68 bytes of index each.
  assert.ok(fs.existsSync(path.join(sharded, "0", "c", "0", "1", "2")));
});

// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), bit by bit: the reference for the shard index check.
function crc32c(bytes) {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0x82f63b78 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

test("crc32c (the reference here) matches the Castagnoli check value", () => {
  assert.equal(crc32c(new TextEncoder().encode("123456789")), 0xe3069283);
});

test("RFC-16: a converted store (sharded, with transpose) conforms, and every extension is readable", async () => {
  const dir = out();
  await convert({ data: rgbImage(64, 80), shape: [64, 80, 3] }, dir, { chunk: 32, shard: 64 });
  const result = await checkDataset(new FileSystemStore(dir), { registry: zarr.registry });
  assert.equal(result.ok, true, formatReport(result));
  assert.deepEqual(result.unsupported, []);
  assert.deepEqual(result.arrays.map((a) => a.path), ["0", "1", "2"]);
  const names = result.requiredExtensions.map((r) => r.name);
  for (const name of ["uint8", "jpeg", "transpose", "sharding_indexed", "crc32c", "bytes"]) assert.ok(names.includes(name), `${name} in ${names}`);
});

test("PNG input: RGB, grayscale, RGBA (alpha dropped with a warning), the grayscale sample", async () => {
  const [h, w] = [40, 48];
  const rgb = rgbImage(h, w);
  const rgbFile = path.join(tmp, "rgb.png");
  writePng(rgbFile, w, h, rgb, { colorType: 2 });
  const a = await convert(rgbFile, out(), { chunk: 16 });
  assert.deepEqual(a.inputShape, [h, w, 3]);
  assert.equal(a.name, "rgb");
  assert.deepEqual(a.warnings, []);
  const rgba = new Uint8Array(h * w * 4);
  for (let i = 0; i < h * w; i++) rgba.set([...rgb.subarray(3 * i, 3 * i + 3), i % 2 ? 255 : 128], 4 * i);
  const rgbaFile = path.join(tmp, "rgba.png");
  writePng(rgbaFile, w, h, rgba, { colorType: 6 });
  const warned = [];
  const dirA = out();
  const b = await convert(rgbaFile, dirA, { chunk: 16, onWarning: (m) => warned.push(m) });
  assert.equal(warned.length, 1);
  assert.match(warned[0], /alpha channel.*dropped/);
  assert.deepEqual(b.warnings, warned);
  assert.ok(Math.abs(a.psnr - b.psnr) < 1e-9, "alpha does not change the colour samples");
  const gray = grayImage(h, w);
  const grayFile = path.join(tmp, "gray.png");
  writePng(grayFile, w, h, gray, { colorType: 0 });
  const c = await convert(grayFile, out(), { chunk: 16 });
  assert.deepEqual(c.inputShape, [h, w]);
  assert.equal(c.config.encoded_color_space, "grayscale");
  // The shipped sample: 550 × 660 grayscale.
  const cell = await convert(path.join(root, "samples/cell.png"), out(), { chunk: 256, levels: 1 });
  assert.deepEqual(cell.inputShape, [660, 550]);
});

test("JPEG input (baseline, colour and grayscale) written by jpeg-js and by this package", async () => {
  const [h, w] = [32, 48];
  const rgba = new Uint8Array(h * w * 4);
  const rgb = rgbImage(h, w);
  for (let i = 0; i < h * w; i++) rgba.set([...rgb.subarray(3 * i, 3 * i + 3), 255], 4 * i);
  const file = path.join(tmp, "in.jpg");
  fs.writeFileSync(file, jpegJs.encode({ data: rgba, width: w, height: h }, 95).data);
  const s = await convert(file, out(), { chunk: 16 });
  assert.deepEqual(s.inputShape, [h, w, 3]);
  assert.ok(s.psnr > 30);
  // A grayscale JPEG from our own encoder.
  const { encode } = await import("../../dist/index.js");
  const grayFile = path.join(tmp, "gray.jpg");
  fs.writeFileSync(grayFile, encode({ quality: 95, encoded_color_space: "grayscale" }, grayImage(h, w), [h, w]));
  const g = await convert(grayFile, out(), { chunk: 16 });
  assert.deepEqual(g.inputShape, [h, w]);
});

/** Runs libjpeg-turbo's `cjpeg` with `args` on `data` (PGM or PPM); returns the JPEG file. */
function cjpegFile(name, data, h, w, channels, args) {
  const src = path.join(tmp, `${name}.${channels === 1 ? "pgm" : "ppm"}`);
  fs.writeFileSync(src, Buffer.concat([Buffer.from(`${channels === 1 ? "P5" : "P6"}\n${w} ${h}\n255\n`), data]));
  const file = path.join(tmp, `${name}.jpg`);
  fs.writeFileSync(file, execFileSync("cjpeg", [...args, src]));
  return file;
}

/** libjpeg-turbo's `djpeg -pnm` decode of `file`: the reference (it honours JFIF / Adobe markers). */
function djpegSamples(file) {
  const pnm = execFileSync("djpeg", ["-pnm", file], { maxBuffer: 1 << 26 });
  const header = /^(P[56])\s+(\d+)\s+(\d+)\s+255\s/.exec(pnm.subarray(0, 64).toString("latin1"));
  assert.ok(header, `djpeg output header for ${file}`);
  return new Uint8Array(pnm.subarray(header[0].length));
}

function maxAbsDiff(a, b) {
  assert.equal(a.length, b.length);
  let max = 0;
  for (let i = 0; i < a.length; i++) max = Math.max(max, Math.abs(a[i] - b[i]));
  return max;
}

// JPEG input goes through this package's decoder, which reads the stored colour space from
// the markers: an RGB JPEG (cjpeg -rgb: Adobe transform 0, ids R,G,B) must not get the
// inverse YCbCr transform (jpeg-js applied it: max difference 255). Level 0, stored at
// quality 100 without a colour transform, is compared with djpeg's decode of the input (up
// to 4 from zune-jpeg's chroma upsampling, which rounds otherwise than libjpeg-turbo's, and
// the re-encode's own).
test("JPEG input from cjpeg (RGB, grayscale, 4:2:0, 4:1:1, progressive) reads as djpeg decodes it", async () => {
  const [h, w] = [40, 56];
  const rgb = rgbImage(h, w);
  // saturated patches, where a wrong colour transform shows most
  for (let y = 8; y < 24; y++) for (let x = 8; x < 24; x++) rgb.set([250, 10, 30], 3 * (y * w + x));
  const cases = [
    ["rgb", 3, ["-quality", "90", "-rgb"]],
    ["gray", 1, ["-quality", "90", "-grayscale"]],
    ["ycc420", 3, ["-quality", "90", "-sample", "2x2"]],
    ["ycc411", 3, ["-quality", "90", "-sample", "4x1"]],
    ["ycc444-progressive", 3, ["-quality", "90", "-sample", "1x1", "-progressive"]],
    ["ycc420-progressive", 3, ["-quality", "90", "-progressive"]],
    ["rgb-progressive", 3, ["-quality", "90", "-rgb", "-progressive"]],
    ["gray-input", 1, ["-quality", "90"]],
  ];
  for (const [name, channels, args] of cases) {
    const input = name === "gray-input" ? grayImage(h, w) : rgb;
    const file = cjpegFile(name, input, h, w, name === "gray-input" ? 1 : 3, args);
    const dir = out();
    const options = { chunk: 16, quality: 100, levels: 1, ...(channels === 3 ? { color: "rgb", channelAxis: "last" } : {}) };
    const s = await convert(file, dir, options);
    assert.deepEqual(s.inputShape, channels === 3 ? [h, w, 3] : [h, w], name);
    assert.equal(s.streamed, !/progressive/.test(name), `${name}: streamed`);
    const stored = await zarr.get(await openLevel(dir, 0));
    const diff = maxAbsDiff(stored.data, djpegSamples(file));
    assert.ok(diff <= 8, `${name}: level 0 vs djpeg up to ${diff}`);
  }
});

test("JPEG input the decoder cannot honour is refused by name (CMYK, 12-bit, arithmetic, YCCK, lossless)", async () => {
  const fixture = (f) => path.join(root, "tests/fixtures", f);
  const refused = async (file, pattern) => {
    const dir = out();
    await assert.rejects(convert(file, dir), (e) => e instanceof ConvertError && e.kind === "InvalidInput" && e.message.includes(file) && pattern.test(e.message), file);
    assert.equal(fs.existsSync(dir), false);
  };
  await refused(fixture("reject_cmyk_q90_pil_61x47.jpg"), /4 colour components/);
  await refused(fixture("reject_arithmetic_ycc420_cjpeg_61x47.jpg"), /arithmetic coding/);
  await refused(fixture("reject_lossless_gray_libjpegtools_61x47.jpg"), /lossless/);
  const deep = path.join(tmp, "deep.jpg");
  fs.writeFileSync(deep, Uint8Array.from([0xff, 0xd8, 0xff, 0xc1, 0, 11, 12, 0, 8, 0, 8, 1, 1, 0x11, 0, 0xff, 0xd9]));
  await refused(deep, /12-bit JPEG/);
  // A 3-component stream whose Adobe marker says YCCK (transform 2): rejected, not guessed.
  const ycc = fs.readFileSync(cjpegFile("ycck", rgbImage(16, 16), 16, 16, 3, ["-quality", "90"]));
  const adobe2 = Uint8Array.from([0xff, 0xee, 0, 14, ...Buffer.from("Adobe"), 0, 100, 0, 0, 0, 0, 2]);
  const jfifEnd = 4 + ((ycc[4] << 8) | ycc[5]); // SOI, then cjpeg's JFIF APP0
  const ycck = path.join(tmp, "ycck.jpg");
  fs.writeFileSync(ycck, new Uint8Array([...ycc.subarray(0, 2), ...adobe2, ...ycc.subarray(jfifEnd)]));
  await refused(ycck, /transform 2 \(YCCK\)/);
});

test("refuses: unreadable file, directory, not an image, 16-bit PNG, truncated PNG, CMYK JPEG, missing output parent — with clear messages and no store", async () => {
  const dir = out();
  await assert.rejects(convert(path.join(tmp, "missing.png"), dir), (e) => e instanceof ConvertError && /cannot read .*missing\.png: no such file/.test(e.message));
  const text = path.join(tmp, "notes.txt");
  fs.writeFileSync(text, "not an image");
  await assert.rejects(convert(text, dir), /is not a PNG, JPEG, TIFF or DICOM file/);
  const png16 = path.join(tmp, "deep.png");
  writePng(png16, 8, 8, new Uint8Array(8 * 8 * 3 * 2).fill(7), { colorType: 2, bitDepth: 16 });
  await assert.rejects(convert(png16, dir), (e) => e instanceof ConvertError && /16-bit RGB PNG: the samples are uint16; the jpeg codec stores uint8 \(8-bit\) samples only: pass --rescale/.test(e.message));
  await assert.rejects(convert(tmp, dir), /is a directory with no DICOM file in it/);
  const good = path.join(tmp, "good.png");
  writePng(good, 16, 16, rgbImage(16, 16));
  const truncated = path.join(tmp, "truncated.png");
  fs.writeFileSync(truncated, fs.readFileSync(good).subarray(0, 60));
  await assert.rejects(convert(truncated, dir), (e) => e instanceof ConvertError && /truncated\.png: (cannot decode PNG|truncated PNG)/.test(e.message));
  const cmyk = path.join(tmp, "cmyk.jpg"); // SOI + a baseline frame header announcing 4 components
  fs.writeFileSync(cmyk, Uint8Array.from([0xff, 0xd8, 0xff, 0xc0, 0, 20, 8, 0, 8, 0, 8, 4, 1, 0x11, 0, 2, 0x11, 0, 3, 0x11, 0, 4, 0x11, 0, 0xff, 0xd9]));
  await assert.rejects(convert(cmyk, dir), /4 colour components/);
  await assert.rejects(convert(good, path.join(tmp, "no", "such", "parent.zarr")), /parent directory .* does not exist/);
  assert.ok(!fs.existsSync(dir));
});

test("refuses options the spec does not allow, before writing anything", async () => {
  const rgb = { data: rgbImage(16, 16), shape: [16, 16, 3] };
  const gray = { data: grayImage(16, 16), shape: [16, 16] };
  const cases = [
    [rgb, { quality: 0 }, /quality must be an integer from 1 to 100/],
    [rgb, { quality: 101 }, /quality must be an integer from 1 to 100/],
    [rgb, { quality: 9.5 }, /quality/],
    [rgb, { color: "cmyk" }, /color must be ycbcr, rgb or grayscale/],
    [rgb, { color: "rgb", subsampling: "4:2:0" }, /subsampling applies only to color ycbcr/],
    [rgb, { subsampling: "4:1:1" }, /subsampling must be one of 4:4:4, 4:2:2, 4:4:0, 4:2:0/],
    [gray, { color: "ycbcr" }, /input is grayscale.*needs 3 channels/],
    [rgb, { chunk: 0 }, /chunk must be a positive integer/],
    [rgb, { chunk: 70000 }, /at most 65535/],
    [rgb, { chunk: 32, shard: 48 }, /shard must be a positive multiple of chunk/],
    [rgb, { levels: 0 }, /levels must be a positive integer/],
    [rgb, { channelAxis: "middle" }, /channelAxis/],
    [rgb, { qualty: 90 }, /unknown option "qualty"/],
    [rgb, { restartIntervals: "no" }, /restartIntervals must be true or false, got "no"/],
    [rgb, { trellis: 1 }, /trellis must be true or false, got 1/],
    [rgb, { quantTable: "Flat" }, /quantTable must be one of "annex-k", "flat", .*"peterson", got "Flat"/],
    [{ data: new Uint16Array(16), shape: [4, 4] }, {}, /must be a Uint8Array/],
    [{ data: new Uint8Array(10), shape: [4, 4] }, {}, /holds 10 samples but shape \[4,4\] needs 16/],
    [{ data: new Uint8Array(32), shape: [4, 4, 2] }, {}, /channels must be 1/],
  ];
  for (const [input, options, message] of cases) {
    const dir = out();
    await assert.rejects(convert(input, dir, options), (e) => e instanceof ConvertError && message.test(e.message), `${JSON.stringify(options)} → ${message}`);
    assert.ok(!fs.existsSync(dir), `no store after ${JSON.stringify(options)}`);
  }
  assert.deepEqual(fs.readdirSync(tmp).filter((f) => f.includes("partial")), []);
});

test("never leaves a half-written store: a failure mid-conversion removes the temporary directory; existing output is kept unless --overwrite", async () => {
  const dir = out();
  const input = { data: rgbImage(64, 64), shape: [64, 64, 3] };
  let seen = 0;
  await assert.rejects(
    convert(input, dir, { chunk: 16, onProgress: (e) => { if (e.phase === "chunk" && ++seen === 5) throw new Error("interrupted"); } }),
    /interrupted/,
  );
  assert.ok(!fs.existsSync(dir), "no store at the output path");
  assert.deepEqual(fs.readdirSync(tmp).filter((f) => f.includes("partial")), [], "temporary directory removed");
  await convert(input, dir, { chunk: 16, quality: 50 });
  await assert.rejects(convert(input, dir, { chunk: 16 }), /already exists.*--overwrite/);
  assert.equal(readJson(dir, "0", "zarr.json").codecs.at(-1).configuration.quality, 50);
  await convert(input, dir, { chunk: 16, quality: 80, overwrite: true });
  assert.equal(readJson(dir, "0", "zarr.json").codecs.at(-1).configuration.quality, 80);
  assert.deepEqual(fs.readdirSync(tmp).filter((f) => f.includes("partial")), []);
});

// Before: `zarr-jpeg convert image.png . --overwrite` renamed the current directory
// aside and deleted it, the input image and everything else in it with it; any
// directory or file at the output path was replaced the same way. And a PNG whose IHDR
// says 0 pixels wide (pngjs reads it) was "converted" into a store with a 0-sized chunk
// shape, exit code 0.
test("--overwrite replaces only a Zarr store or an empty directory, never the input image; a 0-pixel image is refused", async () => {
  const dir = fs.mkdtempSync(path.join(tmp, "overwrite-"));
  const image = path.join(dir, "image.png");
  writePng(image, 20, 12, rgbImage(12, 20));
  fs.writeFileSync(path.join(dir, "precious.txt"), "keep me");
  const cases = [
    [dir, /holds the input image .*image\.png; --overwrite would delete it/],
    [image, /is the input image; --overwrite would delete it/],
    [path.join(dir, "precious.txt"), /exists and is not a Zarr store \(not a directory\)/],
    [tmp, /holds the input image/],
  ];
  const other = fs.mkdtempSync(path.join(tmp, "not-a-store-"));
  fs.writeFileSync(path.join(other, "notes.txt"), "keep me too");
  cases.push([other, /exists and is not a Zarr store \(no zarr.json at its top\)/]);
  for (const [output, message] of cases) {
    await assert.rejects(convert(image, output, { overwrite: true }), (e) => e instanceof ConvertError && message.test(e.message), output);
  }
  assert.equal(fs.readFileSync(path.join(dir, "precious.txt"), "utf8"), "keep me");
  assert.equal(fs.readFileSync(path.join(other, "notes.txt"), "utf8"), "keep me too");
  assert.ok(fs.existsSync(image));
  // a store, and an empty directory, are replaced
  const store = path.join(dir, "out.zarr");
  await convert(image, store, { quality: 50 });
  await convert(image, store, { quality: 80, overwrite: true });
  assert.equal(readJson(store, "0", "zarr.json").codecs.at(-1).configuration.quality, 80);
  const empty = fs.mkdtempSync(path.join(tmp, "empty-"));
  await convert(image, empty, { overwrite: true });
  assert.ok(fs.existsSync(path.join(empty, "zarr.json")));
  // a PNG whose IHDR says 0 × 12 (no image data)
  const chunk = (type, data) => {
    const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(zlibCrc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const ihdr = Buffer.from([0, 0, 0, 0, 0, 0, 0, 12, 8, 2, 0, 0, 0]);
  const zero = path.join(dir, "zero.png");
  fs.writeFileSync(zero, Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr), chunk("IDAT", zlib.deflateSync(Buffer.alloc(0))), chunk("IEND", Buffer.alloc(0)),
  ]));
  const zeroOut = out();
  await assert.rejects(convert(zero, zeroOut), (e) => e instanceof ConvertError && /the image is 0 × 12 pixels \(width × height\); it needs at least 1 × 1/.test(e.message));
  assert.ok(!fs.existsSync(zeroOut));
});

/** CRC-32 as PNG chunks carry it. */
function zlibCrc32(bytes) {
  let crc = 0xffffffff;
  for (const b of bytes) {
    crc ^= b;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? 0xedb88320 ^ (crc >>> 1) : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

test("progress events count levels and chunks", async () => {
  const events = [];
  await convert({ data: grayImage(64, 64), shape: [64, 64] }, out(), { chunk: 32, onProgress: (e) => events.push(e) });
  const levels = events.filter((e) => e.phase === "level");
  assert.deepEqual(levels.map((e) => e.level), [0, 1]);
  const chunks = events.filter((e) => e.phase === "chunk");
  assert.equal(chunks.length, 5);
  assert.deepEqual(chunks.at(-1), { levels: 2, chunksTotal: 5, chunksDone: 5, phase: "chunk", level: 1, levelChunksDone: 1, levelChunksTotal: 1 });
});

test("CLI: parses the issue's options; `zarr-jpeg convert` writes a store and prints the summary; usage errors exit 2, refusals 1", () => {
  assert.deepEqual(parseArgs(["a.png", "b.zarr", "--quality", "90", "--color=rgb", "--chunk", "128", "--shard", "1024", "--levels", "3"]), {
    input: "a.png", output: "b.zarr", options: { quality: 90, color: "rgb", chunk: 128, shard: 1024, levels: 3 }, flags: {},
  });
  assert.match(parseArgs(["a.png", "b.zarr", "--quality", "high"]).error, /--quality must be an integer/);
  assert.match(parseArgs(["a.png", "b.zarr", "--fast"]).error, /unknown option --fast/);
  assert.match(parseArgs(["a.png"]).error, /expected <image> and <out.zarr>/);
  const cli = path.join(root, "dist/cli.js");
  const input = path.join(tmp, "cli.png");
  writePng(input, 40, 40, rgbImage(40, 40), { colorType: 2 });
  const dir = out();
  const ok = spawnSync(process.execPath, [cli, "convert", input, dir, "--quality", "80", "--subsampling", "4:2:2", "--chunk", "16", "--shard", "32"], { encoding: "utf8" });
  assert.equal(ok.status, 0, ok.stderr);
  assert.match(ok.stdout, /wrote .* in [\d.]+ s/);
  assert.match(ok.stdout, /compression ratio [\d.]+:1/);
  assert.match(ok.stdout, /PSNR of level 0 against the input: [\d.]+ dB/);
  assert.match(ok.stderr, /level 1\/3/); // not a TTY: one progress line per level
  assert.deepEqual(readJson(dir, "0", "zarr.json").codecs[0].configuration.codecs[1].configuration.subsampling, [[2, 1], [1, 1], [1, 1]]);
  const bad = spawnSync(process.execPath, [cli, "convert", input, out(), "--color", "rgb", "--subsampling", "4:2:0"], { encoding: "utf8" });
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /subsampling applies only to color ycbcr/);
  const usage = spawnSync(process.execPath, [cli, "convert", "--bogus"], { encoding: "utf8" });
  assert.equal(usage.status, 2);
  const missing = spawnSync(process.execPath, [cli, "convert", path.join(tmp, "nope.png"), out()], { encoding: "utf8" });
  assert.equal(missing.status, 1);
  assert.match(missing.stderr, /cannot read .*nope\.png/);
});

// Before: `--version` was an unknown command, `help` too, and a file-system error while
// writing printed Node's stack trace.
test("CLI: --version prints package.json's version; help is --help; a file-system error is one line naming the output and the cause", () => {
  const cli = path.join(root, "dist/cli.js");
  const { version } = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"));
  const v = spawnSync(process.execPath, [cli, "--version"], { encoding: "utf8" });
  assert.equal(v.status, 0, v.stderr);
  assert.equal(v.stdout, `${version}\n`);
  const help = spawnSync(process.execPath, [cli, "help"], { encoding: "utf8" });
  const dashHelp = spawnSync(process.execPath, [cli, "--help"], { encoding: "utf8" });
  assert.equal(help.status, 0, help.stderr);
  assert.equal(help.stdout, dashHelp.stdout);
  assert.match(help.stdout, /^usage: zarr-jpeg <command>/);
  const input = path.join(tmp, "cli-fs.png");
  writePng(input, 16, 16, rgbImage(16, 16), { colorType: 2 });
  const r = spawnSync(process.execPath, [cli, "convert", input, "/proc/nope.zarr"], { encoding: "utf8" });
  assert.equal(r.status, 1);
  assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
  assert.match(r.stderr, /^zarr-jpeg convert: cannot write \/proc\/nope\.zarr: E[A-Z]+: /);
  assert.doesNotMatch(r.stderr, /\n\s+at /);
});

test("convert() rejects a file-system error while writing as a ConvertError naming the output, its cause on .cause", async () => {
  await assert.rejects(convert({ data: new Uint8Array(16 * 16), shape: [16, 16] }, "/proc/nope.zarr"), (e) =>
    e instanceof ConvertError && /^zarr-jpeg convert: cannot write \/proc\/nope\.zarr: /.test(e.message) && e.kind === "OutputUnavailable" && typeof e.cause?.code === "string");
});

test("restart intervals: written in chunks taller than 64 rows by default, none with { restartIntervals: false } or --no-restart-intervals", async () => {
  const input = { data: grayImage(200, 100), shape: [200, 100] };
  const chunkHasDri = (dir) => {
    const files = fs.readdirSync(path.join(dir, "0", "c"), { recursive: true }).map(String);
    const chunk = files.map((f) => path.join(dir, "0", "c", f)).find((f) => fs.statSync(f).isFile());
    return restartMarkers(fs.readFileSync(chunk)).dri !== null;
  };
  const plain = out();
  await convert(input, plain, { chunk: 128, levels: 1, restartIntervals: false });
  assert.equal(chunkHasDri(plain), false);
  const withIntervals = out();
  await convert(input, withIntervals, { chunk: 128, levels: 1 });
  assert.equal(chunkHasDri(withIntervals), true);
  const parsed = parseArgs(["a.png", "b.zarr", "--no-restart-intervals"]);
  assert.equal(parsed.options.restartIntervals, false);
  assert.equal(parseArgs(["a.png", "b.zarr"]).options.restartIntervals, undefined);
});

test("trellis: { trellis: true } or --trellis writes smaller chunks (trellis quantisation) that still decode", async () => {
  const input = { data: grayImage(200, 100), shape: [200, 100] };
  const chunkBytes = (dir) => {
    const files = fs.readdirSync(path.join(dir, "0", "c"), { recursive: true }).map(String);
    return files.map((f) => path.join(dir, "0", "c", f)).filter((f) => fs.statSync(f).isFile()).reduce((n, f) => n + fs.statSync(f).size, 0);
  };
  const plain = out();
  await convert(input, plain, { chunk: 128, levels: 1 });
  const small = out();
  const summary = await convert(input, small, { chunk: 128, levels: 1, trellis: true });
  assert.ok(chunkBytes(small) < chunkBytes(plain), `${chunkBytes(small)} ≥ ${chunkBytes(plain)} bytes`);
  assert.ok(summary.psnr > 30, `PSNR ${summary.psnr}`);
  assert.equal(parseArgs(["a.png", "b.zarr", "--trellis"]).options.trellis, true);
  assert.equal(parseArgs(["a.png", "b.zarr"]).options.trellis, undefined);
});

test("quantTable: { quantTable: \"flat\" } or --quant-table flat writes chunks with flat quantisation tables", async () => {
  const input = { data: grayImage(200, 100), shape: [200, 100] };
  const dir = out();
  const summary = await convert(input, dir, { chunk: 128, levels: 1, quality: 90, quantTable: "flat", trellis: true });
  assert.ok(summary.psnr > 30, `PSNR ${summary.psnr}`);
  assert.deepEqual(summary.encodeOptions, { restartIntervals: true, trellis: true, quantTable: "flat" });
  assert.match(formatSummary(summary), /jpeg quality 90, grayscale, flat quantisation tables, trellis quantisation\n/);
  const files = fs.readdirSync(path.join(dir, "0", "c"), { recursive: true }).map((f) => path.join(dir, "0", "c", String(f))).filter((f) => fs.statSync(f).isFile());
  assert.ok(files.length > 0);
  for (const file of files) {
    const stream = fs.readFileSync(file);
    const at = stream.indexOf(Buffer.from([0xff, 0xdb]));
    // one 8-bit table: every step 16 × (200 − 2 × 90) / 100 ≈ 3
    assert.deepEqual([...stream.subarray(at + 5, at + 69)], new Array(64).fill(3), file);
  }
  assert.equal(parseArgs(["a.png", "b.zarr", "--quant-table", "flat"]).options.quantTable, "flat");
  assert.equal(parseArgs(["a.png", "b.zarr", "--quant-table=ms-ssim"]).options.quantTable, "ms-ssim");
  assert.equal(parseArgs(["a.png", "b.zarr"]).options.quantTable, undefined);
});

test("workers: the store written with worker_threads is byte for byte the one written without", async () => {
  const cases = [
    ["ycbcr 4:2:0", { data: rgbImage(100, 90), shape: [100, 90, 3] }, { chunk: 16 }],
    ["ycbcr 4:2:0 in shards", { data: rgbImage(100, 90), shape: [100, 90, 3] }, { chunk: 16, shard: 32, quality: 80 }],
    ["grayscale, trellis", { data: grayImage(70, 130), shape: [70, 130] }, { chunk: 32, trellis: true }],
  ];
  for (const [label, input, options] of cases) {
    const [a, b] = [out("threads0"), out("threads2")];
    const plain = await convert(input, a, { ...options, workers: 0 });
    const pooled = await convert(input, b, { ...options, workers: 2 });
    assert.ok(plain.chunks > 8, label);
    assert.deepEqual([plain.workers, pooled.workers], [0, 2], `${label}: encoded in two worker threads`);
    assert.equal(pooled.psnr, plain.psnr, `${label}: the same PSNR`);
    assert.equal(pooled.encodedBytes, plain.encodedBytes, label);
    const [fa, fb] = [storeFiles(a), storeFiles(b)];
    assert.deepEqual([...fb.keys()].sort(), [...fa.keys()].sort(), `${label}: the same files`);
    for (const [rel, bytes] of fa) assert.ok(bytes.equals(fb.get(rel)), `${label}: ${rel}`);
  }
});

test("workers: a count other than a whole number from 0 to 256 is refused before anything is written", async () => {
  for (const workers of [-1, 1.5, "2", 257]) {
    const target = out("bad-workers");
    await assert.rejects(convert({ data: grayImage(16, 16), shape: [16, 16] }, target, { workers }), (e) => e instanceof ConvertError && /workers must be a whole number from 0 to 256/.test(e.message), String(workers));
    assert.equal(fs.existsSync(target), false);
  }
  assert.deepEqual(parseArgs(["a.png", "b.zarr", "--workers", "3"]).options.workers, 3);
  assert.match(parseArgs(["a.png", "b.zarr", "--workers", "many"]).error, /--workers must be an integer/);
});
