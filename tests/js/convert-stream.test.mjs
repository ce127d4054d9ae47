// PNG input streamed a band of rows at a time (the Rust core's PNG source): the
// store is byte for byte the one convert() writes from the same samples held in memory,
// where those samples come from an independent decoder (pngjs) of PNGs written at test
// time by independent writers (libvips `vips pngsave`, Pillow) in every colour type the
// streaming reader takes, with every PNG row filter (libvips --filter all / Pillow's
// adaptive filtering), odd sizes, palettes and alpha. Bad PNGs are refused by name.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { execFileSync, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { PNG } from "pngjs";
import { init } from "../../dist/index.js";
import { convert, ConvertError } from "../../dist/convert.js";
import { storeFiles } from "./helpers/store-files.mjs";
import { PYTHON } from "./helpers/python.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const samples = path.join(root, "samples");
await init();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "zarr-jpeg-stream-"));
process.on("exit", () => fs.rmSync(tmp, { recursive: true, force: true }));
let n = 0;
const out = () => path.join(tmp, `out-${n++}.zarr`);
const at = (name) => path.join(tmp, name);

// libvips: a crop of odd size, every filter; Pillow: palette, grayscale+alpha, RGBA with transparency
execFileSync("vips", ["crop", path.join(samples, "ihc.png"), at("rgb.v"), "3", "5", "509", "389"]);
execFileSync("vips", ["pngsave", at("rgb.v"), at("rgb.png"), "--filter", "all", "--compression", "9"]);
execFileSync("vips", ["pngsave", path.join(samples, "cell.png"), at("gray.png"), "--filter", "all"]);
execFileSync(PYTHON, ["-c", `
from PIL import Image
import numpy as np
im = Image.open(${JSON.stringify(path.join(samples, "ihc.png"))}).convert("RGB").crop((0, 0, 301, 277))
im.quantize(64).save(${JSON.stringify(at("palette.png"))})
a = np.asarray(im)
alpha = ((np.arange(a.shape[1])[None, :] + np.arange(a.shape[0])[:, None]) % 256).astype(np.uint8)
Image.fromarray(np.dstack([a, alpha]), "RGBA").save(${JSON.stringify(at("rgba.png"))})
Image.fromarray(np.dstack([a[:, :, 1], alpha]), "LA").save(${JSON.stringify(at("la.png"))})
`]);

/** pngjs's decode → the converter's samples (alpha dropped, palette expanded, as the reader documents). */
function reference(file) {
  const png = PNG.sync.read(fs.readFileSync(file));
  const gray = png.colorType === 0 || png.colorType === 4;
  const C = gray ? 1 : 3;
  const data = new Uint8Array(png.width * png.height * C);
  for (let i = 0, o = 0; i < png.data.length; i += 4) {
    data[o++] = png.data[i];
    if (!gray) {
      data[o++] = png.data[i + 1];
      data[o++] = png.data[i + 2];
    }
  }
  return { data, shape: gray ? [png.height, png.width] : [png.height, png.width, 3] };
}

function assertSameStore(a, b) {
  const fa = storeFiles(a);
  const fb = storeFiles(b);
  assert.deepEqual([...fb.keys()].sort(), [...fa.keys()].sort());
  for (const [rel, bytes] of fa) assert.ok(bytes.equals(fb.get(rel)), `${rel} differs`);
}

const variants = [
  ["defaults", {}],
  ["sharded, 64-px chunks, 4:4:4, 2 workers", { chunk: 64, shard: 128, subsampling: "4:4:4", workers: 2 }],
  ["channel axis last, quality 80", { channelAxis: "last", quality: 80 }],
];
for (const file of ["rgb.png", "gray.png", "palette.png", "rgba.png", "la.png"]) {
  for (const [label, options] of variants) {
    test(`${file}, ${label}: the streamed store equals convert() of pngjs's samples, byte for byte`, async () => {
      const streamed = out();
      const whole = out();
      const gray = file === "gray.png" || file === "la.png";
      const { subsampling, ...rest } = options;
      const opts = { ...(gray ? rest : options), name: "x" };
      const s = await convert(at(file), streamed, opts);
      const w = await convert(reference(at(file)), whole, opts);
      assert.equal(s.streamed, true);
      assertSameStore(whole, streamed);
      assert.equal(s.psnr, w.psnr);
      assert.deepEqual(s.levels, w.levels);
      if (file === "rgba.png" || file === "la.png") assert.ok(s.warnings.some((m) => /alpha is dropped/.test(m)));
    });
  }
}

test("--color grayscale on a colour PNG: luma, as the in-memory path", async () => {
  const streamed = out();
  const whole = out();
  await convert(at("rgb.png"), streamed, { color: "grayscale", name: "x" });
  await convert(reference(at("rgb.png")), whole, { color: "grayscale", name: "x" });
  assertSameStore(whole, streamed);
});

test("bad PNGs: cut short, corrupt image data, a filter type that does not exist; named, nothing written", async () => {
  const good = fs.readFileSync(at("rgb.png"));
  const cases = [
    ["short.png", good.subarray(0, good.length - 2000), /truncated PNG/],
    ["zlib.png", (() => {
      const b = Buffer.from(good);
      const idat = b.indexOf("IDAT");
      b.fill(0x55, idat + 40, idat + 400); // (the chunk's CRC is not checked; zlib's checks fail)
      return b;
    })(), /corrupt PNG|filter type/],
  ];
  for (const [name, bytes, pattern] of cases) {
    fs.writeFileSync(at(name), bytes);
    const dir = out();
    await assert.rejects(convert(at(name), dir), (e) => e instanceof ConvertError && e.message.includes(name) && pattern.test(e.message), name);
    assert.equal(fs.existsSync(dir), false);
    assert.deepEqual(fs.readdirSync(tmp).filter((f) => f.includes(".partial-")), []);
  }
});

// ------------------------------------------------------------------ JPEG input
// Single-file JPEGs stream too (the Rust core's JPEG source): a baseline or extended
// sequential JPEG is decoded a band of rows at a time by the core's row decoder, pulled as
// the pyramid takes them; a progressive one is decoded whole, when it fits. The store is
// byte for byte the one convert() writes from the package's whole-image decode() of the
// same file, for JPEGs written at test time by libjpeg-turbo's cjpeg, Pillow and libvips in
// every sampling, odd sizes, restart intervals, RGB and grayscale (the rows against djpeg's
// are tests/row_decoder.rs's); bad files are refused by name, nothing written.
const { decodeAsync } = await import("../../dist/index.js");
const { flatProgressive } = await import("./helpers/flat-progressive.mjs");

/** A JPEG's frame size and component count, from its SOF segment. */
function jpegFrame(bytes) {
  for (let at = 2; at + 10 <= bytes.length; ) {
    if (bytes[at] !== 0xff) return null;
    const marker = bytes[at + 1];
    if (marker >= 0xc0 && marker <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(marker)) {
      return { height: (bytes[at + 5] << 8) | bytes[at + 6], width: (bytes[at + 7] << 8) | bytes[at + 8], components: bytes[at + 9] };
    }
    at += 2 + ((bytes[at + 2] << 8) | bytes[at + 3]);
  }
  return null;
}

execFileSync("vips", ["copy", at("rgb.v"), at("rgb.ppm")]);
execFileSync("vips", ["copy", path.join(samples, "cell.png"), at("gray.pgm")]);
const cjpeg = (name, input, args) => fs.writeFileSync(at(name), execFileSync("cjpeg", [...args, at(input)]));
cjpeg("gray.jpg", "gray.pgm", ["-quality", "90"]);
cjpeg("420.jpg", "rgb.ppm", ["-quality", "90", "-sample", "2x2"]);
cjpeg("444.jpg", "rgb.ppm", ["-quality", "90", "-sample", "1x1"]);
cjpeg("422.jpg", "rgb.ppm", ["-quality", "85", "-sample", "2x1", "-optimize"]);
cjpeg("restart-rows.jpg", "rgb.ppm", ["-quality", "90", "-restart", "1"]);
cjpeg("restart-blocks.jpg", "rgb.ppm", ["-quality", "90", "-sample", "1x2", "-restart", "7B"]);
cjpeg("rgb.jpg", "rgb.ppm", ["-quality", "90", "-rgb"]);
cjpeg("progressive.jpg", "rgb.ppm", ["-quality", "90", "-progressive"]);
execFileSync(PYTHON, ["-c", `
from PIL import Image
im = Image.open(${JSON.stringify(path.join(samples, "ihc.png"))}).convert("RGB")
im.crop((7, 3, 7 + 301, 3 + 277)).save(${JSON.stringify(at("pil444.jpg"))}, quality=92, subsampling=0)
im.crop((0, 0, 333, 251)).save(${JSON.stringify(at("pil420.jpg"))}, quality=80, subsampling=2, optimize=True)
im.crop((0, 0, 255, 129)).convert("L").save(${JSON.stringify(at("pil-gray.jpg"))}, quality=90)
im.crop((1, 1, 200, 150)).save(${JSON.stringify(at("pil-progressive.jpg"))}, quality=90, progressive=True)
`]);
execFileSync("vips", ["jpegsave", at("rgb.v"), at("vips.jpg"), "--Q", "80"]);

const JPEGS = [
  "gray.jpg", "420.jpg", "444.jpg", "422.jpg", "restart-rows.jpg", "restart-blocks.jpg", "rgb.jpg",
  "pil444.jpg", "pil420.jpg", "pil-gray.jpg", "vips.jpg", "progressive.jpg", "pil-progressive.jpg",
];

/** The package's whole-image decode() of a JPEG file (its stored colour space honoured, as RGB), as convert()'s in-memory input. */
async function wholeImage(file) {
  const bytes = new Uint8Array(fs.readFileSync(file));
  const { height, width, components } = jpegFrame(bytes);
  const gray = components === 1;
  const config = { quality: 95, encoded_color_space: gray ? "grayscale" : "rgb" };
  const shape = gray ? [height, width] : [height, width, 3];
  return { data: await decodeAsync(config, bytes, shape), shape };
}

const jpegVariants = [
  ["defaults", {}],
  ["sharded, 64-px chunks, 2 workers, channel axis last", { chunk: 64, shard: 128, workers: 2, channelAxis: "last" }],
];
for (const file of JPEGS) {
  for (const [label, options] of jpegVariants) {
    test(`${file}, ${label}: the store equals convert() of the whole decoded image, byte for byte`, async () => {
      const streamed = out();
      const whole = out();
      const opts = { ...options, name: "x" };
      const s = await convert(at(file), streamed, opts);
      const w = await convert(await wholeImage(at(file)), whole, opts);
      // baseline JPEGs are read in bands, progressive ones decoded whole
      assert.equal(s.streamed, !/progressive/.test(file), "streamed");
      assertSameStore(whole, streamed);
      assert.equal(s.psnr, w.psnr);
      assert.deepEqual(s.levels, w.levels);
    });
  }
}

/** Asserts `convert(file)` is refused with a one-line ConvertError naming the file and matching `pattern`, and leaves nothing. */
async function assertRefused(file, pattern) {
  const dir = out();
  await assert.rejects(convert(file, dir), (e) => {
    assert.ok(e instanceof ConvertError, `${file}: ${e}`);
    assert.equal(e.kind, "InvalidInput");
    assert.ok(e.message.includes(file), `${file}: not named in ${e.message}`);
    assert.ok(!e.message.includes("\n"), `one line: ${e.message}`);
    assert.match(e.message, pattern);
    return true;
  });
  assert.equal(fs.existsSync(dir), false);
  assert.deepEqual(fs.readdirSync(tmp).filter((f) => f.includes(".partial-")), []);
}

test("bad JPEGs: truncated, a frame claiming more than the data holds, no frame; named in one line, nothing written", async () => {
  const good = fs.readFileSync(at("420.jpg"));
  fs.writeFileSync(at("cut.jpg"), good.subarray(0, good.length - 3000));
  await assertRefused(at("cut.jpg"), /cut\.jpg: cannot decode JPEG: jpeg: corrupt JPEG stream: the stream is truncated/);
  // the frame header claims 65535 × 65535 pixels of the few kilobytes there are
  const huge = Buffer.from(good);
  const sof = huge.indexOf(Buffer.from([0xff, 0xc0]));
  huge.writeUInt16BE(65535, sof + 5);
  huge.writeUInt16BE(65535, sof + 7);
  fs.writeFileSync(at("claims.jpg"), huge);
  await assertRefused(at("claims.jpg"), /too short for the 65,?535 × 65,?535 image its header claims/);
  fs.writeFileSync(at("noframe.jpg"), Uint8Array.from([0xff, 0xd8, 0xff, 0xe0, 0, 4, 0, 0, 0xff, 0xd9]));
  await assertRefused(at("noframe.jpg"), /cannot find a JPEG frame header/);
});

test("corrupt entropy-coded data part-way: the same outcome as today's whole decode (the stream is decoded whole again)", async () => {
  const good = fs.readFileSync(at("444.jpg"));
  const bad = Buffer.from(good);
  const scan = bad.indexOf(Buffer.from([0xff, 0xda]));
  const from = scan + Math.floor(((bad.length - scan) * 2) / 3);
  for (let i = from; i < from + 300; i += 2) bad.set([0xff, 0x00], i); // destuffed: 0xFF bytes, codes no table has
  fs.writeFileSync(at("corrupt.jpg"), bad);
  let today;
  try {
    today = await wholeImage(at("corrupt.jpg"));
  } catch (error) {
    today = error;
  }
  if (today instanceof Error) {
    await assertRefused(at("corrupt.jpg"), /corrupt\.jpg: cannot decode JPEG: jpeg: /);
  } else {
    const streamed = out();
    const whole = out();
    const s = await convert(at("corrupt.jpg"), streamed, { name: "x" });
    await convert(today, whole, { name: "x" });
    assert.equal(s.streamed, false);
    assertSameStore(whole, streamed);
  }
});

test("damaged JPEGs (bytes changed, cut short): a store, or a one-line ConvertError naming the file; never another error, never a partial store", async () => {
  execFileSync("vips", ["crop", at("rgb.v"), at("small.v"), "0", "0", "61", "47"]);
  execFileSync("vips", ["copy", at("small.v"), at("small.ppm")]);
  // 4:2:0, 4:2:2 with restart intervals of 3 blocks, grayscale, progressive (decoded whole)
  const small = [["-sample", "2x2"], ["-restart", "3B", "-sample", "2x1"], ["-grayscale"], ["-progressive"]]
    .map((args) => Buffer.from(execFileSync("cjpeg", [...args, at("small.ppm")])));
  let seed = 0x2545f491;
  const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);
  const outcomes = { store: 0, refused: 0 };
  for (let round = 0; round < 120; round++) {
    let damaged = Buffer.from(small[round % small.length]);
    for (let k = 0; k < 1 + (round % 3); k++) {
      const i = next() % damaged.length;
      damaged[i] = next() & 255;
      if ((next() & 7) === 0) damaged = damaged.subarray(0, i);
    }
    const file = at(`damaged-${round}.jpg`);
    fs.writeFileSync(file, damaged);
    const dir = out();
    try {
      await convert(file, dir, { levels: 1 });
      outcomes.store++;
    } catch (e) {
      assert.ok(e instanceof ConvertError, `round ${round}: ${e?.stack ?? e}`);
      assert.ok(e.message.includes(file) && !e.message.includes("\n"), `round ${round}: ${e.message}`);
      assert.equal(fs.existsSync(dir), false);
      outcomes.refused++;
    }
  }
  assert.deepEqual(fs.readdirSync(tmp).filter((f) => f.includes(".partial-")), []);
  assert.ok(outcomes.store > 0 && outcomes.refused > 0, JSON.stringify(outcomes));
});

test("a progressive JPEG too large to decode whole is refused by name before it is decoded (the same limit on every platform)", async () => {
  // 30,000² 4:4:4: 2.7 GB of samples, more than 2 GiB in one piece; a 5 MB file
  fs.writeFileSync(at("big-progressive.jpg"), flatProgressive(30000, 30000, [[1, 1], [1, 1], [1, 1]]));
  await assertRefused(at("big-progressive.jpg"), /is a progressive JPEG, which is decoded whole: its 30000 × 30000 \(height × width\) image needs .* more than the converter takes for a whole decode \(4 GiB in all, the image at most 2 GiB\).*jpegtran -copy all/);
});

// A 16,000² baseline JPEG (libvips, 768 MB of RGB samples) converts with a peak RSS far
// below its raw size: Node, the stream (69 MB, in WebAssembly memory) and a chunk row per
// level (measured on this thread alone: each worker adds its own ~50 MB). The whole-image
// path this replaced peaked at 1.3 GB.
test("memory: a 16,000 × 16,000 baseline JPEG converts with a peak RSS well below its raw size", { timeout: 600_000 }, () => {
  const big = at("big.jpg");
  execFileSync("vips", ["replicate", path.join(samples, "ihc.png"), at("rep.v"), "32", "32"]);
  execFileSync("vips", ["crop", at("rep.v"), at("big.v"), "0", "0", "16000", "16000"]);
  fs.rmSync(at("rep.v"));
  execFileSync("vips", ["jpegsave", at("big.v"), big, "--Q", "85"]);
  fs.rmSync(at("big.v"));
  const raw = 16000 * 16000 * 3;
  const script = `
    import { convert } from ${JSON.stringify(path.join(root, "dist/convert.js"))};
    const s = await convert(${JSON.stringify(big)}, ${JSON.stringify(out())}, { workers: 0, levels: 3 });
    console.log(JSON.stringify({ streamed: s.streamed, shape: s.inputShape }));
  `;
  const run = spawnSync("/usr/bin/time", ["-v", process.execPath, "--input-type=module", "-e", script], { encoding: "utf8" });
  assert.equal(run.status, 0, run.stderr);
  const result = JSON.parse(run.stdout.trim().split("\n").pop());
  assert.deepEqual(result, { streamed: true, shape: [16000, 16000, 3] });
  const rss = Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(run.stderr)[1]) * 1024;
  const file = fs.statSync(big).size;
  console.log(`16,000² baseline JPEG (${(file / 1e6).toFixed(0)} MB): peak RSS ${(rss / 1e6).toFixed(0)} MB, raw ${(raw / 1e6).toFixed(0)} MB`);
  assert.ok(rss < raw / 2, `peak RSS ${rss} B against ${raw} B of samples`);
});
