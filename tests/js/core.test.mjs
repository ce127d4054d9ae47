// The built package in Node: init, validateConfig, encode and decode on every example
// configuration of the spec, with errors as JS Errors and inputs left untouched.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { PNG } from "pngjs";
import { init, initFullDecoder, encode, encodeInto, decode, decodeInto, validateConfig } from "../../dist/index.js";
import { isReady, QUANT_TABLES } from "../../dist/advanced.js";
import { SPEC_EXAMPLES, rgbToYcbcr } from "./helpers/spec-examples.mjs";
import { restartMarkers } from "./helpers/restart-markers.mjs";


/** A crop of a sample image (ihc.png for colour, cell.png for grayscale) as C-order samples. */
export function sampleCrop(name, h, w, c, top = 100, left = 100) {
  const png = PNG.sync.read(readFileSync(new URL(`../../samples/${name}`, import.meta.url)));
  const data = new Uint8Array(h * w * c);
  const channels = png.data.length / (png.width * png.height); // pngjs gives RGBA
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++)
      for (let k = 0; k < c; k++) data[(y * w + x) * c + k] = png.data[((top + y) * png.width + left + x) * channels + k];
  return data;
}

const gradient = (h, w, c) => sampleCrop(c === 1 ? "cell.png" : "ihc.png", h, w, c, c === 1 ? 330 : 100, c === 1 ? 380 : 100);

function psnr(a, b) {
  let se = 0;
  for (let i = 0; i < a.length; i++) se += (a[i] - b[i]) ** 2;
  return se === 0 ? Infinity : 10 * Math.log10((255 * 255) / (se / a.length));
}

test("calls before init() throw a clear Error", () => {
  if (isReady()) return; // another test in this process initialised first
  assert.throws(() => validateConfig(SPEC_EXAMPLES[1]), /call `await init\(\)` first/);
});

test("init() is idempotent", async () => {
  const first = init();
  assert.equal(init(), first);
  await first;
  await init();
  assert.equal(isReady(), true);
});

test("every spec example round-trips in Node", async () => {
  await init();
  for (const config of SPEC_EXAMPLES) {
    const shape = config.encoded_color_space === "grayscale" ? [61, 47] : [61, 47, 3];
    const crop = gradient(61, 47, shape[2] ?? 1);
    const data = config.decoded_color_space === "ycbcr" ? rgbToYcbcr(crop) : crop;
    const copy = data.slice();
    const jpeg = encode(config, data, shape);
    assert.ok(jpeg instanceof Uint8Array);
    assert.deepEqual([...jpeg.subarray(0, 2)], [0xff, 0xd8]);
    const back = decode(config, jpeg, shape);
    assert.ok(back instanceof Uint8Array);
    assert.equal(back.length, data.length);
    assert.ok(psnr(back, data) > 35, `${JSON.stringify(config)}: PSNR ${psnr(back, data)}`);
    assert.deepEqual(data, copy, "encode leaves its input untouched");
  }
});

test("validateConfig normalises and rejects with the field named", async () => {
  await init();
  assert.deepEqual(validateConfig({ quality: 90, encoded_color_space: "rgb" }), {
    quality: 90,
    encoded_color_space: "rgb",
    decoded_color_space: "rgb",
  });
  const cases = [
    [{ encoded_color_space: "rgb" }, /quality is required/],
    [{ quality: 0, encoded_color_space: "rgb" }, /quality must be an integer from 1 to 100, got 0/],
    [{ quality: 101, encoded_color_space: "rgb" }, /got 101/],
    [{ quality: 90.5, encoded_color_space: "rgb" }, /got 90.5/],
    [{ quality: "90", encoded_color_space: "rgb" }, /got "90" \(a string\)/],
    [{ quality: 90, encoded_color_space: "ycbcr" }, /subsampling is required/],
    [{ quality: 90, encoded_color_space: "rgb", decoded_color_space: "ycbcr" }, /cannot be combined/],
    [{ quality: 90, encoded_color_space: "ycbcr", subsampling: [[3, 1], [1, 1], [1, 1]] }, /not supported by this implementation/],
    [{ quality: 90, encoded_color_space: "grayscale", level: 1 }, /unknown member "level"/],
  ];
  for (const [config, pattern] of cases) {
    assert.throws(() => validateConfig(config), (e) => e instanceof Error && pattern.test(e.message) && e.kind === "InvalidConfiguration");
  }
});

test("messages show numbers as written (15 significant digits): a non-integer never shows as an integer", async () => {
  await init();
  const message = (config) => {
    try {
      validateConfig(config);
    } catch (error) {
      return error.message;
    }
    return null;
  };
  assert.match(message({ quality: 90.0000001, encoded_color_space: "grayscale" }), /integer from 1 to 100, got 90\.0000001$/);
  assert.match(message({ quality: 99.99999999, encoded_color_space: "grayscale" }), /got 99\.99999999$/);
  assert.match(message({ quality: 1e21, encoded_color_space: "grayscale" }), /got 1e21$/);
  assert.match(message({ quality: 90, encoded_color_space: "ycbcr", subsampling: [[2.0000001, 2], [1, 1], [1, 1]] }), /2\.0000001/);
  // any double: the number in the message reads back as n to 14 digits, and has a
  // fraction exactly when n does
  const bits = new DataView(new ArrayBuffer(8));
  let state = 0x2545f491n;
  for (let i = 0; i < 2000; i++) {
    state = (state * 6364136223846793005n + 1442695040888963407n) & 0xffffffffffffffffn;
    bits.setBigUint64(0, state);
    const n = i % 2 ? bits.getFloat64(0) : 100 + bits.getUint32(0) / 2 ** 32 - 0.5; // anything, and near the range
    if (!Number.isFinite(n) || (Number.isInteger(n) && n >= 1 && n <= 100)) continue;
    const text = message({ quality: n, encoded_color_space: "grayscale" }).split(", got ").pop();
    const back = Number(text);
    assert.ok(Math.abs(back - n) <= 1e-14 * Math.max(1, Math.abs(n)), `${text} (n = ${String(n)})`);
    if (Math.abs(n) < 1e15) assert.equal(text.includes("."), !Number.isInteger(n), `${text} (n = ${String(n)})`);
  }
});

test("bad data, shapes and streams throw Errors naming the problem; the module keeps working", async () => {
  await init();
  const config = SPEC_EXAMPLES[0];
  const data = gradient(32, 32, 3);
  const jpeg = encode(config, data, [32, 32, 3]);
  const cases = [
    [() => encode(config, new Uint16Array(32 * 32 * 3), [32, 32, 3]), /must be a Uint8Array, got a Uint16Array/],
    [() => encode(config, Array.from(data), [32, 32, 3]), /must be a Uint8Array, got an Array/],
    [() => encode(config, data, [32, 32]), /stores 3/],
    [() => encode(config, data, [3072]), /1-D/],
    [() => encode(config, data, [1, 32, 32, 3]), /4-D/],
    [() => encode(config, data, [32, 32, 4]), /4 channels/],
    [() => encode(config, data.subarray(1), [32, 32, 3]), /holds 3071 bytes/],
    [() => decode(config, jpeg, [32, 31, 3]), /32 × 32 .* chunk is 32 × 31/],
    [() => decode(config, jpeg.subarray(0, 100), [32, 32, 3]), /corrupt JPEG stream/],
    [() => decode(config, new Uint8Array(), [32, 32, 3]), /empty/],
    [() => decode(config, readFileSync(new URL("../../samples/ihc.png", import.meta.url)), [32, 32, 3]), /PNG/],
    [() => decode(config, readFileSync(new URL("../fixtures/reject_arithmetic_ycc420_cjpeg_61x47.jpg", import.meta.url)), [47, 61, 3]), /arithmetic coding/],
  ];
  for (const [call, pattern] of cases) {
    assert.throws(call, (e) => e instanceof Error && pattern.test(e.message), String(call));
  }
  assert.equal(decode(config, jpeg, [32, 32, 3]).length, 32 * 32 * 3);
});

/** Decodes a file with libjpeg-turbo's `djpeg -pnm` (the independent reference). */
function djpeg(file) {
  const pnm = execFileSync("djpeg", ["-pnm", file], { maxBuffer: 1 << 26 });
  // P5/P6, width, height, maxval, one whitespace byte, then the samples.
  const header = /^(P[56])\s+(\d+)\s+(\d+)\s+(\d+)\s/.exec(pnm.subarray(0, 64).toString("latin1"));
  assert.ok(header && header[4] === "255", `djpeg wrote an unexpected header for ${file}`);
  return { channels: header[1] === "P6" ? 3 : 1, width: Number(header[2]), height: Number(header[3]), samples: pnm.subarray(header[0].length) };
}

// What tests/interop.rs allows natively (measured over the fixtures: max 4 in 4:2:0,
// where zune-jpeg's chroma upsampling rounds differently from libjpeg-turbo's).
const MAX_DIFF_VS_LIBJPEG = 4;
const MEAN_DIFF_VS_LIBJPEG = 0.4;

// Every decodable fixture against libjpeg-turbo's own decode of it: this checks the
// WebAssembly module actually loaded (whichever build the loader picked, e.g. the
// simd128 one), not only the native code that tests/interop.rs covers.
test("libjpeg-turbo fixtures decode in Node like libjpeg-turbo (djpeg)", async () => {
  await init();
  const manifest = JSON.parse(readFileSync(new URL("../fixtures/manifest.json", import.meta.url), "utf8"));
  let decoded = 0;
  let progressive = 0;
  let deferred = 0;
  for (const f of manifest) {
    if (f.expect !== "decode" || f.file.includes("y3x1") || f.file.includes("cb2x2")) continue;
    const file = fileURLToPath(new URL(`../fixtures/${f.file}`, import.meta.url));
    const bytes = readFileSync(file);
    const gray = f.components === 1;
    const config = gray ? SPEC_EXAMPLES[1] : SPEC_EXAMPLES[3];
    const shape = gray ? [f.height, f.width] : [f.height, f.width, 3];
    let out;
    try {
      out = decode(config, bytes, shape);
    } catch (error) {
      // The whole codec leaves progressive streams, and only those, to the full decoder.
      if (error.kind !== "NeedsFullDecoder") throw error;
      assert.match(f.file, /progressive/, `${f.file}: ${error.message}`);
      await initFullDecoder();
      out = decode(config, bytes, shape);
      deferred++;
    }
    if (f.file.includes("progressive")) progressive++;
    assert.equal(out.length, f.height * f.width * f.components);
    const ref = djpeg(file);
    assert.deepEqual([ref.height, ref.width, ref.channels], [f.height, f.width, f.components], f.file);
    assert.equal(ref.samples.length, out.length, f.file);
    let max = 0;
    let sum = 0;
    for (let i = 0; i < out.length; i++) {
      const d = Math.abs(out[i] - ref.samples[i]);
      sum += d;
      if (d > max) max = d;
    }
    const mean = sum / out.length;
    assert.ok(max <= MAX_DIFF_VS_LIBJPEG, `${f.file}: max |ours - djpeg| = ${max} > ${MAX_DIFF_VS_LIBJPEG}`);
    assert.ok(mean <= MEAN_DIFF_VS_LIBJPEG, `${f.file}: mean |ours - djpeg| = ${mean.toFixed(3)} > ${MEAN_DIFF_VS_LIBJPEG}`);
    decoded++;
  }
  assert.ok(decoded >= 35, `only ${decoded} fixtures decoded`);
  // The first progressive fixture needed initFullDecoder(); decode() retried the others there itself.
  assert.equal(progressive, 3);
  assert.equal(deferred, 1);
});

test("configuration values that are not JSON-like are refused with their type and member named", async () => {
  await init();
  const gray = { quality: 90, encoded_color_space: "grayscale" };
  const cases = [
    [new Map([["quality", 90]]), /not a JSON-like object: a Map is not a JSON-like value/],
    [{ ...gray, extra: new Set([1]) }, /member "extra": a Set is not a JSON-like value/],
    [{ ...gray, extra: () => 1 }, /member "extra": a function is not/],
    [{ ...gray, extra: Symbol("s") }, /member "extra": a symbol is not/],
    [{ ...gray, extra: [1, new Uint8Array(2)] }, /member "extra": a Uint8Array is not/],
    [{ ...gray, quality: 2n ** 70n }, /BigInt outside the 64-bit range/],
    [{ quality: 90, get encoded_color_space() { throw new Error("getter says no"); } }, /reading it threw: getter says no/],
  ];
  for (const [config, pattern] of cases) {
    assert.throws(() => validateConfig(config), (e) => e.kind === "InvalidConfiguration" && pattern.test(e.message), String(pattern));
  }
  // Numbers in messages, formatted without the wasm carrying float formatting code.
  for (const [quality, text] of [[90.5, "90.5"], [1.5e-7, "1.5e-7"], [2 ** 60, "1.15292150460685e18"], [900n, "900"], [-0.25, "-0.25"]]) {
    assert.throws(() => validateConfig({ ...gray, quality }), (e) => e.message.endsWith(`got ${text}`), text);
  }
  // Own enumerable string keys only, as JSON.stringify sees the object.
  const hidden = Object.defineProperty({ ...gray }, "hidden", { value: new Set(), enumerable: false });
  hidden[Symbol("s")] = 1;
  assert.deepEqual(validateConfig(hidden), { ...gray, decoded_color_space: "grayscale" });
  // A member whose value is undefined is absent, as JSON.stringify leaves it out; an array
  // item that is undefined is null, as JSON.stringify writes it.
  const ycbcr = { quality: 90, encoded_color_space: "ycbcr", subsampling: [[2, 2], [1, 1], [1, 1]] };
  assert.deepEqual(validateConfig({ ...gray, decoded_color_space: undefined, subsampling: undefined }), { ...gray, decoded_color_space: "grayscale" });
  assert.deepEqual(validateConfig({ ...ycbcr, decoded_color_space: undefined }), JSON.parse(JSON.stringify(validateConfig(ycbcr))));
  assert.throws(() => validateConfig({ ...ycbcr, subsampling: undefined }), (e) => e.kind === "InvalidConfiguration" && /subsampling is required/.test(e.message));
  assert.throws(() => validateConfig({ ...ycbcr, subsampling: [[2, 2], undefined, [1, 1]] }), (e) => /subsampling\[1\] must be .* got null$/.test(e.message));
  assert.throws(() => validateConfig({ ...gray, quality: undefined }), (e) => /quality is required/.test(e.message));
  // A missing configuration is named as undefined, not as the null JSON would make of it.
  assert.throws(() => validateConfig(undefined), (e) => e.kind === "InvalidConfiguration" && /must be an object with members .*, got undefined$/.test(e.message));
  assert.throws(() => validateConfig(null), (e) => /, got null$/.test(e.message));
});

test("encode options whose value is undefined take their defaults, as if left out", async () => {
  await init();
  const gray = { quality: 90, encoded_color_space: "grayscale" };
  const data = gradient(200, 40, 1);
  const reference = encode(gray, data, [200, 40]);
  // e.g. { trellis: options.trellis } from a caller whose own options leave it unset
  const unset = encode(gray, data, [200, 40], { restartIntervals: undefined, trellis: undefined, quantTable: undefined });
  assert.deepEqual(unset, reference);
  assert.deepEqual(encode(gray, data, [200, 40], { trellis: undefined, quantTable: "flat" }), encode(gray, data, [200, 40], { quantTable: "flat" }));
  assert.throws(() => encode(gray, data, [200, 40], { trellis: null }), (e) => /trellis must be true or false, got null/.test(e.message));
});

test("encode reads the caller's array in place, band by band: a view into a larger buffer gives a copy's stream and stays untouched", async () => {
  await init();
  // 400² (several 64 KiB bands of MCU rows, the last one partial) and 2048 × 1536 × 3
  // (one or two MCU rows per band): the encoder copies rows from the array as it goes.
  const cases = SPEC_EXAMPLES.map((config) => {
    const c = config.encoded_color_space === "grayscale" ? 1 : 3;
    return [config, gradient(400, 400, c), c === 1 ? [400, 400] : [400, 400, 3]];
  });
  const tile = gradient(400, 400, 3);
  const big = new Uint8Array(2048 * 1536 * 3);
  for (let y = 0; y < 2048; y++)
    for (let x = 0; x < 1536; x += 400) {
      const row = tile.subarray((y % 400) * 1200, (y % 400) * 1200 + Math.min(400, 1536 - x) * 3);
      big.set(row, (y * 1536 + x) * 3);
    }
  cases.push([SPEC_EXAMPLES[2], big, [2048, 1536, 3]]);
  for (const [config, data, shape] of cases) {
    const buffer = new Uint8Array(data.length + 29).fill(201);
    buffer.set(data, 11);
    const before = buffer.slice();
    const view = buffer.subarray(11, 11 + data.length);
    const stream = encode(config, view, shape);
    assert.deepEqual(stream, encode(config, data.slice(), shape), `${JSON.stringify(config)} ${shape}`);
    assert.deepEqual(buffer, before, "encode leaves the caller's buffer untouched");
    const back = decode(config, stream, shape);
    assert.ok(psnr(back, data) > 30, `${JSON.stringify(config)} ${shape}: PSNR ${psnr(back, data)}`);
  }
});

test("decodeInto writes exactly decode()'s samples into the caller's buffer, and leaves it untouched on any error", async () => {
  await init();
  for (const config of SPEC_EXAMPLES) {
    const gray = config.encoded_color_space === "grayscale";
    const shape = gray ? [37, 53] : [37, 53, 3];
    const data = new Uint8Array(shape.reduce((a, b) => a * b)).map((_, i) => (i * 13 + (i >> 7)) & 255);
    const stream = encode(config, data, shape);
    const out = new Uint8Array(data.length).fill(7);
    assert.equal(decodeInto(config, stream, shape, out), undefined);
    assert.deepEqual(out, decode(config, stream, shape));
  }
  const config = SPEC_EXAMPLES[1];
  const stream = encode(config, new Uint8Array(64 * 48).fill(90), [64, 48]);
  const sentinel = () => new Uint8Array(64 * 48).fill(7);
  const untouched = (out) => out.every((v) => v === 7);
  for (const [out, pattern] of [
    [new Uint8Array(64 * 48 - 1).fill(7), /output buffer holds 3071 bytes but the chunk shape needs 3072/],
    [new Uint8Array(64 * 48 + 1).fill(7), /output buffer holds 3073 bytes/],
  ]) {
    assert.throws(() => decodeInto(config, stream, [64, 48], out), (e) => e.kind === "InvalidData" && pattern.test(e.message));
    assert.ok(untouched(out));
  }
  for (const out of [new Uint8ClampedArray(64 * 48), new Array(64 * 48).fill(0), null]) {
    assert.throws(() => decodeInto(config, stream, [64, 48], out), (e) => e.kind === "InvalidData" && /output buffer must be a Uint8Array/.test(e.message));
  }
  const out = sentinel();
  assert.throws(() => decodeInto(config, stream.subarray(0, stream.length - 40), [64, 48], out), (e) => /^jpeg: /.test(e.message));
  assert.throws(() => decodeInto(config, stream, [48, 64], out), (e) => e.kind === "StreamMismatch");
  assert.ok(untouched(out), "a failed decodeInto wrote into the caller's buffer");
});

test("arrays larger than wasm memory can take are errors, not traps, and a wrong-size output buffer is refused before anything is allocated", async () => {
  await init();
  const config = { quality: 90, encoded_color_space: "grayscale" };
  const stream = encode(config, new Uint8Array(256).fill(9), [16, 16]);
  const huge = new Uint8Array(2 ** 31 + 5); // untouched pages: no real memory
  huge.set(stream);
  const noTrap = (e) => !/trapped/.test(e.message);
  assert.throws(() => decode(config, huge, [16, 16]), (e) => noTrap(e) && e.kind === "InvalidData" && /the encoded chunk holds 2147483653 bytes, more than this platform's memory can take/.test(e.message));
  assert.throws(() => decodeInto(config, huge, [16, 16], new Uint8Array(256)), (e) => noTrap(e) && e.kind === "InvalidData");
  assert.throws(() => decodeInto(config, stream, [16, 16], huge), (e) => noTrap(e) && e.kind === "InvalidData" && /output buffer holds 2147483653 bytes but the chunk shape needs 256/.test(e.message));
  assert.equal(huge[300], 0, "a refused output buffer was written");
  assert.equal(decode(config, stream, [16, 16]).length, 256);
});

test("encode options: restart intervals of 64 rows by default in taller chunks, none with { restartIntervals: false }; bad options are Errors that name them", async () => {
  await init();
  const config = { quality: 90, encoded_color_space: "ycbcr", subsampling: [[2, 2], [1, 1], [1, 1]] };
  const shape = [200, 50, 3];
  const data = gradient(200, 50, 3);
  const copy = data.slice();
  // 4:2:0: MCUs of 16 rows, so 4 MCU rows (64 image rows) of 4 MCUs per interval; 13 MCU rows
  assert.deepEqual(restartMarkers(encode(config, data, shape)), { dri: 16, rst: 3 });
  assert.deepEqual(restartMarkers(encode(config, data, shape, {})), { dri: 16, rst: 3 });
  assert.deepEqual(restartMarkers(encode(config, data, shape, null)), { dri: 16, rst: 3 });
  const options = { restartIntervals: false };
  const plain = encode(config, data, shape, options);
  assert.deepEqual(restartMarkers(plain), { dri: null, rst: 0 });
  assert.deepEqual(options, { restartIntervals: false }, "options changed");
  assert.deepEqual(data, copy, "samples changed");
  // the same samples either way (djpeg reads both: tests/interop.rs)
  assert.deepEqual(decode(config, plain, shape), decode(config, encode(config, data, shape), shape));
  const out = new Uint8Array(64 * 1024);
  const n = encodeInto(config, data, shape, out, options);
  assert.deepEqual(out.subarray(0, n), plain);
  for (const [bad, message] of [
    [{ restartIntervals: "no" }, /restartIntervals must be true or false, got "no"/],
    [{ restartInterval: false }, /unknown encode option "restartInterval"/],
    [7, /encode options must be an object, got 7/],
  ]) {
    for (const call of [() => encode(config, data, shape, bad), () => encodeInto(config, data, shape, out, bad)]) {
      assert.throws(call, (e) => e instanceof Error && e.kind === "InvalidConfiguration" && message.test(e.message), JSON.stringify(bad));
    }
  }
});

test("encode option trellis: fewer bytes at a PSNR close to the default's, in every mode; encodeInto writes the same stream; bad values are Errors that name them", async () => {
  await init();
  for (const config of SPEC_EXAMPLES) {
    const gray = config.encoded_color_space === "grayscale";
    const shape = gray ? [120, 90] : [120, 90, 3];
    const data = gradient(120, 90, gray ? 1 : 3);
    const plain = encode(config, data, shape);
    assert.deepEqual(encode(config, data, shape, { trellis: false }), plain, "trellis: false is the default");
    const options = { trellis: true };
    const trellis = encode(config, data, shape, options);
    assert.deepEqual(options, { trellis: true }, "options changed");
    const label = JSON.stringify(config);
    assert.ok(trellis.length < plain.length, `${label}: ${trellis.length} ≥ ${plain.length} bytes`);
    if (config.decoded_color_space !== "ycbcr") {
      const [p, t] = [decode(config, plain, shape), decode(config, trellis, shape)].map((d) => psnr(data, d));
      assert.ok(t > p - 3 && t > 30, `${label}: PSNR ${t.toFixed(2)} dB, default ${p.toFixed(2)} dB`);
    }
    const out = new Uint8Array(64 * 1024);
    const n = encodeInto(config, data, shape, out, { trellis: true, restartIntervals: false });
    assert.deepEqual(out.subarray(0, n), encode(config, data, shape, { restartIntervals: false, trellis: true }));
    assert.deepEqual(restartMarkers(out.subarray(0, n)), { dri: null, rst: 0 });
  }
  const config = { quality: 90, encoded_color_space: "grayscale" };
  for (const [bad, message] of [
    [{ trellis: "yes" }, /the encode option trellis must be true or false, got "yes"/],
    [{ trellis: 1 }, /the encode option trellis must be true or false, got 1/],
    [{ Trellis: true }, /unknown encode option "Trellis" \(known: restartIntervals, trellis, quantTable\)/],
  ]) {
    assert.throws(() => encode(config, new Uint8Array(64), [8, 8], bad), (e) => e instanceof Error && e.kind === "InvalidConfiguration" && message.test(e.message), JSON.stringify(bad));
  }
});

// The quantisation tables of a stream (DQT segments, 8-bit), by table id, in zig-zag order.
function dqtTables(stream) {
  const tables = {};
  for (let pos = 2; pos + 4 <= stream.length && stream[pos] === 0xff && stream[pos + 1] !== 0xda;) {
    const length = (stream[pos + 2] << 8) | stream[pos + 3];
    if (stream[pos + 1] === 0xdb) {
      for (let at = pos + 4; at < pos + 2 + length; at += 65) tables[stream[at] & 15] = [...stream.subarray(at + 1, at + 65)];
    }
    pos += 2 + length;
  }
  return tables;
}

test("encode option quantTable: every table of QUANT_TABLES is accepted, written and decoded by libjpeg-turbo; encodeInto writes the same stream; other values are Errors that list them", async () => {
  await init();
  const { djpeg } = await import("./helpers/djpeg.mjs");
  const fs = await import("node:fs");
  const os = await import("node:os");
  const path = await import("node:path");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "zarr-jpeg-qt-"));
  try {
    assert.equal(QUANT_TABLES.length, 9);
    assert.ok(Object.isFrozen(QUANT_TABLES));
    for (const config of SPEC_EXAMPLES.filter((c) => c.decoded_color_space !== "ycbcr")) {
      const gray = config.encoded_color_space === "grayscale";
      const shape = gray ? [120, 90] : [120, 90, 3];
      const data = gradient(120, 90, gray ? 1 : 3);
      const before = data.slice();
      const label = JSON.stringify(config);
      assert.deepEqual(encode(config, data, shape, { quantTable: "annex-k" }), encode(config, data, shape), `${label}: annex-k is the default`);
      const seen = new Set();
      for (const quantTable of QUANT_TABLES) {
        const options = { quantTable };
        const stream = encode(config, data, shape, options);
        assert.deepEqual(options, { quantTable }, "options changed");
        const tables = dqtTables(stream);
        seen.add(JSON.stringify(tables));
        if (quantTable === "flat") {
          // 16 × (200 − 2 × quality) / 100, rounded, for every coefficient of every table
          const step = Math.round((16 * (200 - 2 * config.quality)) / 100);
          for (const t of Object.values(tables)) assert.deepEqual(t, new Array(64).fill(step), `${label} flat`);
        }
        const file = path.join(dir, `${quantTable}.jpg`);
        fs.writeFileSync(file, stream);
        const reference = djpeg(file);
        assert.equal(reference.samples.length, data.length, `${label} ${quantTable}`);
        const p = psnr(data, reference.samples);
        assert.ok(p > 30, `${label} ${quantTable}: ${p.toFixed(2)} dB on djpeg's decode`);
        const out = new Uint8Array(64 * 1024);
        const n = encodeInto(config, data, shape, out, { quantTable, trellis: true });
        assert.deepEqual(out.subarray(0, n), encode(config, data, shape, { trellis: true, quantTable }), `${label} ${quantTable}: encodeInto`);
      }
      assert.equal(seen.size, QUANT_TABLES.length, `${label}: every table writes other tables`);
      assert.deepEqual(data, before, "input changed");
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const config = { quality: 90, encoded_color_space: "grayscale" };
  const list = QUANT_TABLES.map((t) => JSON.stringify(t)).join(", ");
  for (const [bad, got] of [["Flat", '"Flat" (a string)'], [3, "3"], [null, "null"], [["flat"], '["flat"]']]) {
    assert.throws(
      () => encode(config, new Uint8Array(64), [8, 8], { quantTable: bad }),
      (e) => e instanceof Error && e.kind === "InvalidConfiguration" && e.message.includes(`the encode option quantTable must be one of ${list}, got ${got}`),
      JSON.stringify(bad),
    );
  }
});

test("encodeInto writes exactly encode()'s stream into the caller's buffer and returns its length; a buffer too small is left untouched", async () => {
  await init();
  const reused = new Uint8Array(64 * 1024);
  for (const config of SPEC_EXAMPLES) {
    const gray = config.encoded_color_space === "grayscale";
    const shape = gray ? [37, 53] : [37, 53, 3];
    const data = gradient(37, 53, gray ? 1 : 3);
    const copy = data.slice();
    const stream = encode(config, data, shape);
    reused.fill(7);
    const n = encodeInto(config, data, shape, reused);
    assert.equal(n, stream.length);
    assert.deepEqual(reused.subarray(0, n), stream, JSON.stringify(config));
    assert.ok(reused.subarray(n).every((v) => v === 7), "encodeInto wrote past the stream");
    assert.deepEqual(data, copy, "encodeInto changed the samples");
    // an exact fit, and a view into a larger buffer
    const exact = new Uint8Array(n);
    assert.equal(encodeInto(config, data, shape, exact), n);
    assert.deepEqual(exact, stream);
    const view = new Uint8Array(n + 20).fill(7).subarray(10, 10 + n);
    assert.equal(encodeInto(config, data, shape, view), n);
    assert.deepEqual(view, stream);
    assert.ok(new Uint8Array(view.buffer, 0, 10).every((v) => v === 7) && new Uint8Array(view.buffer, 10 + n).every((v) => v === 7));
  }
  const config = SPEC_EXAMPLES[1];
  const data = gradient(64, 48, config.encoded_color_space === "grayscale" ? 1 : 3);
  const shape = config.encoded_color_space === "grayscale" ? [64, 48] : [64, 48, 3];
  const needed = encode(config, data, shape).length;
  const small = new Uint8Array(needed - 1).fill(7);
  assert.throws(
    () => encodeInto(config, data, shape, small),
    (e) => e.kind === "InvalidData" && e.message.includes(`output buffer holds ${needed - 1} bytes but the encoded chunk needs ${needed}`),
  );
  assert.ok(small.every((v) => v === 7), "a failed encodeInto wrote into the caller's buffer");
  for (const out of [new Uint8ClampedArray(needed), new Array(needed).fill(0), null]) {
    assert.throws(() => encodeInto(config, data, shape, out), (e) => e.kind === "InvalidData" && /output buffer must be a Uint8Array/.test(e.message));
  }
  const out = new Uint8Array(needed).fill(7);
  assert.throws(() => encodeInto(config, data.subarray(1), shape, out), (e) => e.kind === "InvalidData");
  assert.throws(() => encodeInto({ ...config, quality: 0 }, data, shape, out), (e) => e.kind === "InvalidConfiguration");
  assert.ok(out.every((v) => v === 7), "a failed encodeInto wrote into the caller's buffer");
});
