// zarrita integration: register(), JpegCodec round trips in memory and on disk, the
// channel-axis-not-innermost layout (transpose), eager validation, v2 imagecodecs_jpeg,
// and RFC-16's "name the unknown codec" behaviour. Real zarrita, no mocks.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import * as zarr from "zarrita";
import FileSystemStore from "@zarrita/storage/fs";
import * as pkg from "../../dist/index.js";
import { QUANT_TABLES } from "../../dist/advanced.js";
import { restartMarkers } from "./helpers/restart-markers.mjs";

const api = pkg;
const { init, encode, decode, register, JpegCodec } = api;

register(zarr.registry);

// Smooth, channel-distinct test image, C order (H, W, C).
export function image(h, w, c) {
  const data = new Uint8Array(h * w * c);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++)
      for (let k = 0; k < c; k++)
        data[(y * w + x) * c + k] = [20 + 2 * x, 200 - 2 * y, 60 + x + y][k];
  return data;
}

function maxDiff(a, b) {
  assert.equal(a.length, b.length);
  let max = 0;
  for (let i = 0; i < a.length; i++) max = Math.max(max, Math.abs(a[i] - b[i]));
  return max;
}

const CASES = [
  { name: "grayscale", channels: 0, config: { quality: 95, encoded_color_space: "grayscale" }, tol: 6 },
  { name: "ycbcr 4:2:0", channels: 3, config: { quality: 95, encoded_color_space: "ycbcr", subsampling: [[2, 2], [1, 1], [1, 1]] }, tol: 32 }, // fill-value padding of edge chunks shares blocks and chroma with real samples,
  { name: "rgb", channels: 3, config: { quality: 95, encoded_color_space: "rgb" }, tol: 6 },
];

async function roundTrip(store, c) {
  // 50×70 in 32×32 chunks: the right and bottom chunks are partial.
  const shape = c.channels ? [50, 70, 3] : [50, 70];
  const chunkShape = c.channels ? [32, 32, 3] : [32, 32];
  const arr = await zarr.create(store, { shape, chunkShape, dtype: "uint8", codecs: [{ name: "jpeg", configuration: c.config }] });
  const data = image(50, 70, c.channels || 1);
  await zarr.set(arr, null, { data, shape, stride: c.channels ? [210, 3, 1] : [70, 1] });
  const reopened = await zarr.open(store, { kind: "array" });
  const got = await zarr.get(reopened);
  assert.deepEqual(got.shape, shape);
  const diff = maxDiff(got.data, data);
  assert.ok(diff <= c.tol, `${c.name}: max |decoded - original| = ${diff} > ${c.tol}`);
  return { arr: reopened, got };
}

for (const c of CASES) {
  test(`round trip in memory (Map store), ${c.name}, partial edge chunks`, async () => {
    const store = new Map();
    const { got } = await roundTrip(store, c);
    // The first (full) chunk is exactly what the core codec decodes from the stored stream.
    const key = c.channels ? "/c/0/0/0" : "/c/0/0";
    const chunkShape = c.channels ? [32, 32, 3] : [32, 32];
    const samples = decode(c.config, store.get(key), chunkShape);
    const C = c.channels || 1;
    for (let y = 0; y < 32; y++)
      for (let x = 0; x < 32 * C; x++) assert.equal(got.data[y * 70 * C + x], samples[y * 32 * C + x]);
  });

  test(`round trip on disk (@zarrita/storage FileSystemStore), ${c.name}`, async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "zarr-jpeg-fs-"));
    try {
      await roundTrip(zarr.root(new FileSystemStore(dir)), c);
      const meta = JSON.parse(fs.readFileSync(path.join(dir, "zarr.json"), "utf8"));
      assert.equal(meta.codecs[0].name, "jpeg");
      const first = fs.readFileSync(path.join(dir, "c", "0", "0", ...(c.channels ? ["0"] : [])));
      assert.deepEqual([...first.subarray(0, 2)], [0xff, 0xd8], "chunks are JPEG streams");
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
}

test("jpeg spec 'Channel axis not innermost': [transpose [1,2,0], jpeg] on (3, H, W) chunks with distinct channels", async () => {
  const store = new Map();
  const H = 48, W = 40;
  const config = { quality: 95, encoded_color_space: "rgb" };
  const arr = await zarr.create(store, {
    shape: [3, H, W], chunkShape: [3, 32, 32], dtype: "uint8",
    codecs: [{ name: "transpose", configuration: { order: [1, 2, 0] } }, { name: "jpeg", configuration: config }],
  });
  const planes = new Uint8Array(3 * H * W);
  for (let k = 0; k < 3; k++) for (let i = 0; i < H * W; i++) planes[k * H * W + i] = [30, 120, 220][k] + ((i % W) >> 3);
  await zarr.set(arr, null, { data: planes, shape: [3, H, W], stride: [H * W, W, 1] });
  // The stored stream is an (H, W, 3) image: channel k of pixel (0,0) is plane k.
  const pixels = decode(config, store.get("/c/0/0/0"), [32, 32, 3]);
  for (let k = 0; k < 3; k++) assert.ok(Math.abs(pixels[k] - planes[k * H * W]) <= 3, `JPEG channel ${k}`);
  const got = await zarr.get(await zarr.open(store, { kind: "array" }), [null, null, null]);
  assert.deepEqual(got.shape, [3, H, W]);
  for (let k = 0; k < 3; k++)
    for (const [y, x] of [[0, 0], [10, 33], [H - 1, W - 1]]) {
      const v = got.data[k * got.stride[0] + y * got.stride[1] + x * got.stride[2]];
      assert.ok(Math.abs(v - planes[k * H * W + y * W + x]) <= 4, `plane ${k} at (${y}, ${x}): ${v}`);
    }
  const one = await zarr.get(await zarr.open(store, { kind: "array" }), [1, null, null]);
  assert.ok(Math.abs(one.data[0] - 120) <= 3);
});

test("fromConfig validates eagerly: bad configuration names the field; non-uint8 names the data type; data_type alias accepted", async () => {
  await init();
  const meta = { dataType: "uint8", shape: [16, 16, 3], codecs: [], fillValue: 0 };
  assert.throws(() => JpegCodec.fromConfig({ quality: 0, encoded_color_space: "rgb" }, meta), /quality/);
  assert.throws(() => JpegCodec.fromConfig({ quality: 90, encoded_color_space: "ycbcr" }, meta), /subsampling/);
  assert.throws(() => JpegCodec.fromConfig({ quality: 90, encoded_color_space: "rgb" }, { ...meta, dataType: "uint16" }), /uint16/);
  assert.throws(() => JpegCodec.fromConfig({ quality: 90, encoded_color_space: "rgb" }, { ...meta, dataType: "float32" }), (e) => /float32/.test(e.message) && /^jpeg: /.test(e.message));
  const codec = JpegCodec.fromConfig({ quality: 90, encoded_color_space: "rgb" }, { data_type: "uint8", shape: [16, 16, 3] });
  assert.equal(codec.kind, "array_to_bytes");
  assert.equal(codec.configuration.decoded_color_space, "rgb");
  // and through zarrita: opening an int16 jpeg array fails on first read, naming int16
  const store = new Map();
  const arr = await zarr.create(store, { shape: [8, 8], chunkShape: [8, 8], dtype: "int16", codecs: [{ name: "jpeg", configuration: { quality: 90, encoded_color_space: "grayscale" } }] });
  await assert.rejects(zarr.set(arr, null, { data: new Int16Array(64), shape: [8, 8], stride: [8, 1] }), (e) => /int16/.test(e.message + (e.cause?.message ?? "")));
});

// Before: the jpeg codec's encode() took the first samples of a longer array without a
// word (encode() refuses wrong lengths), said "got undefined" for null data, and an
// imagecodecs_jpeg `tables`/`header` that is not base64 threw atob's bare DOMException.
test("codec objects used directly: wrong data lengths and types, and bad base64 fields, are Errors that name them", async () => {
  await init();
  const config = { quality: 90, encoded_color_space: "rgb" };
  const codec = JpegCodec.fromConfig(config, { dataType: "uint8", shape: [16, 16, 3], codecs: [{ name: "jpeg", configuration: config }] });
  const data = Uint8Array.from({ length: 16 * 16 * 3 }, (_, i) => i % 251);
  const stride = [48, 3, 1];
  const stream = await codec.encode({ data, shape: [16, 16, 3], stride });
  assert.deepEqual([...(await codec.decode(stream)).data], [...decode(config, stream, [16, 16, 3])]);
  const longer = new Uint8Array(data.length + 100);
  longer.set(data);
  for (const wrong of [longer, data.subarray(1)]) {
    await assert.rejects(codec.encode({ data: wrong, shape: [16, 16, 3], stride }), (e) => e.kind === "InvalidData" && new RegExp(`holds ${wrong.length} samples but the chunk shape \\[16, 16, 3\\] needs 768`).test(e.message));
  }
  for (const [value, name] of [[null, "null"], [undefined, "undefined"], [new Float32Array(768), "a Float32Array"], [Array.from(data), "an Array"], ["abc", '"abc" (a string)']]) {
    await assert.rejects(codec.encode({ data: value, shape: [16, 16, 3], stride }), (e) => e.kind === "InvalidData" && e.message === `jpeg: invalid chunk data: chunk data must be a Uint8Array, got ${name}`);
  }
  const registry = new Map();
  register(registry);
  const Imagecodecs = await registry.get("imagecodecs_jpeg")();
  for (const field of ["tables", "header"]) {
    assert.throws(() => Imagecodecs.fromConfig({ [field]: "!!! not base64" }, { dataType: "uint8", shape: [16, 16, 3] }), (e) => e.kind === "InvalidConfiguration" && new RegExp(`imagecodecs_jpeg: ${field} is not valid base64`).test(e.message));
  }
});

test("a corrupt chunk: zarr.get rejects with zarrita's wrapper, the codec's named Error on .cause (README, errors)", async () => {
  for (const workers of [0, 1]) {
    const handle = register(zarr.registry, { workers });
    try {
      const store = new Map();
      const config = { quality: 90, encoded_color_space: "ycbcr", subsampling: [[2, 2], [1, 1], [1, 1]] };
      const arr = await zarr.create(store, { shape: [16, 16, 3], chunkShape: [16, 16, 3], dtype: "uint8", codecs: [{ name: "jpeg", configuration: config }] });
      await zarr.set(arr, null, { data: image(16, 16, 3), shape: [16, 16, 3], stride: [48, 3, 1] });
      const key = [...store.keys()].find((k) => k.includes("/c/"));
      store.set(key, store.get(key).subarray(0, 40)); // cut inside the headers
      await assert.rejects(zarr.get(await zarr.open(store, { kind: "array" })), (e) => {
        assert.match(e.message, /jpeg/, "zarrita names the codec");
        assert.ok(e.cause instanceof Error, `no cause on ${e.name}: ${e.message}`);
        assert.match(e.cause.message, /^jpeg: /);
        assert.ok(["CorruptStream", "NeedsFullDecoder", "UnsupportedStream"].includes(e.cause.kind), `${e.cause.kind}: ${e.cause.message}`);
        return true;
      }, `${workers} workers`);
    } finally {
      await handle.close();
    }
  }
  register(zarr.registry);
});

// Before: TypeErrors of the engine's ("Cannot read properties of null (reading 'lossless')",
// "(reading 'filter')", "(reading 'slice')") and a getter's own exception, unwrapped.
test("codec constructors called directly with odd metadata or configurations throw Errors naming their codec and the problem", async () => {
  await init();
  const registry = new Map();
  register(registry);
  const Imagecodecs = await registry.get("imagecodecs_jpeg")();
  const meta = { dataType: "uint8", shape: [16, 16, 3] };
  const config = { quality: 90, encoded_color_space: "rgb" };
  // each message names its codec first (docs/api.md, "Errors")
  const named = (kind, pattern) => (e) => e instanceof Error && e.kind === kind && /^(jpeg|imagecodecs_jpeg): /.test(e.message) && pattern.test(e.message);
  const cases = [
    [() => Imagecodecs.fromConfig(null, meta), named("InvalidConfiguration", /^imagecodecs_jpeg: the configuration must be an object, got null$/)],
    [() => Imagecodecs.fromConfig("jpeg", meta), named("InvalidConfiguration", /must be an object, got "jpeg" \(a string\)/)],
    [() => Imagecodecs.fromConfig({}, { dataType: "uint8" }), named("InvalidShape", /^imagecodecs_jpeg: the chunk metadata's shape must be an array of integers ≥ 0, got undefined$/)],
    [() => Imagecodecs.fromConfig({}, null), named("InvalidConfiguration", /the chunk metadata must be an object with the chunk's shape, got null/)],
    [() => Imagecodecs.fromConfig({ get lossless() { throw new Error("getter says no"); } }, meta), named("InvalidConfiguration", /^imagecodecs_jpeg: the configuration could not be read: reading it threw: getter says no$/)],
    [() => Imagecodecs.fromConfig(new Proxy({}, { get() { throw new Error("proxy says no"); } }), meta), named("InvalidConfiguration", /reading it threw: proxy says no/)],
    [() => Imagecodecs.fromConfig({ colorspace_data: { toString() { throw new Error("no"); } } }, meta), named("InvalidConfiguration", /colorspace_data must be a colour space name or libjpeg J_COLOR_SPACE number, got an Object/)],
    [() => Imagecodecs.fromConfig({ bitspersample: Symbol("b") }, meta), named("InvalidConfiguration", /bitspersample Symbol\(b\) is not supported/)],
    [() => JpegCodec.fromConfig(config, { dataType: "uint8" }), named("InvalidShape", /^jpeg: the chunk metadata's shape must be an array of integers ≥ 0, got undefined$/)],
    [() => JpegCodec.fromConfig(config, { dataType: "uint8", shape: "16,16,3" }), named("InvalidShape", /got "16,16,3"$/)],
    [() => JpegCodec.fromConfig(config, undefined), named("InvalidConfiguration", /the chunk metadata must be an object with the chunk's shape, got undefined/)],
    [() => JpegCodec.fromConfig(config, { dataType: "uint8", shape: [16, 16, 3], codecs: "jpeg" }), named("InvalidConfiguration", /codecs must be an array, got "jpeg" \(a string\)/)],
    [() => JpegCodec.fromConfig(config, { get dataType() { throw new Error("getter says no"); }, shape: [16, 16, 3] }), named("InvalidConfiguration", /the chunk metadata could not be read: reading it threw: getter says no/)],
    [() => JpegCodec.fromConfig(config, { shape: [16, 16, 3] }), named("InvalidConfiguration", /data type undefined is not supported/)],
  ];
  for (const [call, check] of cases) assert.throws(call, check, call.toString());
  // a null entry in the codec list is skipped, not read
  assert.equal(JpegCodec.fromConfig(config, { ...meta, codecs: [null, { name: "jpeg", configuration: config }] }).imageShape.length, 3);
});

test("an unknown codec still gives zarrita's UnknownCodecError naming it (RFC-16)", async () => {
  const store = new Map();
  const arr = await zarr.create(store, { shape: [8, 8], chunkShape: [8, 8], dtype: "uint8", codecs: [{ name: "jpeg_xl_made_up", configuration: {} }] });
  store.set("/c/0/0", new Uint8Array([1, 2, 3]));
  await assert.rejects(zarr.get(arr), (e) => e instanceof zarr.UnknownCodecError && /jpeg_xl_made_up/.test(e.message));
});

test("Zarr v2 with imagecodecs' compressor {id: 'imagecodecs_jpeg', …} opens and decodes (decode-only)", async () => {
  await init();
  const store = new Map();
  const enc = new TextEncoder();
  for (const [name, shape, chunks, channels] of [["rgb", [40, 40, 3], [32, 32, 3], 3], ["gray", [40, 40], [32, 32], 1]]) {
    // imagecodecs.numcodecs.Jpeg(level=90).get_config() fields
    const compressor = { id: "imagecodecs_jpeg", level: 90, bitspersample: null, tables: null, header: null, colorspace_data: null, colorspace_jpeg: null, subsampling: null, optimize: null, smoothing: null, lossless: null, predictor: null, squeeze: null };
    store.set(`/${name}/.zarray`, enc.encode(JSON.stringify({ zarr_format: 2, shape, chunks, dtype: "|u1", compressor, fill_value: 0, filters: null, order: "C", dimension_separator: "." })));
    const full = image(64, 64, channels);
    const chunkCfg = channels === 3 ? { quality: 90, encoded_color_space: "ycbcr", subsampling: [[2, 2], [1, 1], [1, 1]] } : { quality: 90, encoded_color_space: "grayscale" };
    const expected = new Map();
    for (const cy of [0, 1]) for (const cx of [0, 1]) {
      const chunk = new Uint8Array(32 * 32 * channels);
      for (let y = 0; y < 32; y++) chunk.set(full.subarray(((cy * 32 + y) * 64 + cx * 32) * channels, ((cy * 32 + y) * 64 + cx * 32 + 32) * channels), y * 32 * channels);
      const key = channels === 3 ? `${cy}.${cx}.0` : `${cy}.${cx}`;
      const stream = encode(chunkCfg, chunk, chunks);
      store.set(`/${name}/${key}`, stream);
      expected.set(`${cy}.${cx}`, decode(chunkCfg, stream, chunks));
    }
    const arr = await zarr.open.v2(zarr.root(store).resolve(name), { kind: "array" });
    const got = await zarr.get(arr);
    assert.deepEqual(got.shape, shape);
    const exp = expected.get("1.1");
    assert.equal(got.data[(39 * 40 + 39) * channels], exp[(7 * 32 + 7) * channels], `${name}: pixel (39, 39)`);
    await assert.rejects(zarr.set(arr, [0, 0, ...(channels === 3 ? [0] : [])], 1), (e) => /decode-only/.test(`${e.message} ${e.cause?.message}`));
  }
});

test("register(registry, { encodeOptions }) passes encode()'s options (restartIntervals, trellis, quantTable) to every chunk the jpeg codec writes", async () => {
  const config = { quality: 90, encoded_color_space: "grayscale" };
  const write = async (data = image(200, 40, 1)) => {
    const store = new Map();
    const arr = await zarr.create(store, { shape: [200, 40], chunkShape: [200, 40], dtype: "uint8", codecs: [{ name: "jpeg", configuration: config }] });
    await zarr.set(arr, null, { data, shape: [200, 40], stride: [40, 1] });
    return store.get("/c/0/0");
  };
  const hasDri = (stream) => restartMarkers(stream).dri !== null;
  const registry = new Map(zarr.registry);
  register(registry, { encodeOptions: { restartIntervals: false } });
  // zarr.create takes codecs from zarr.registry: swap ours in for the write, then restore
  const saved = zarr.registry.get("jpeg");
  try {
    zarr.registry.set("jpeg", registry.get("jpeg"));
    assert.equal(hasDri(await write()), false, "a restart interval despite { restartIntervals: false }");
  } finally {
    zarr.registry.set("jpeg", saved);
  }
  assert.equal(hasDri(await write()), true, "the default writes restart intervals in a 200-row chunk");
  // trellis quantisation: fewer bytes on a textured chunk
  const textured = image(200, 40, 1).map((v, i) => v + ((i * 7919) % 23));
  const trellis = new Map(zarr.registry);
  register(trellis, { encodeOptions: { trellis: true } });
  try {
    zarr.registry.set("jpeg", trellis.get("jpeg"));
    const small = await write(textured);
    zarr.registry.set("jpeg", saved);
    const plain = await write(textured);
    assert.ok(small.length < plain.length, `{ trellis: true }: ${small.length} ≥ ${plain.length} bytes`);
    assert.equal(hasDri(small), true);
  } finally {
    zarr.registry.set("jpeg", saved);
  }
  // other quantisation tables: the stream's DQT is the flat table (16 × (200 − 2 × 90) / 100 ≈ 3)
  const flat = new Map(zarr.registry);
  register(flat, { encodeOptions: { quantTable: "flat" } });
  try {
    zarr.registry.set("jpeg", flat.get("jpeg"));
    const stream = await write(textured);
    const at = stream.findIndex((b, i) => b === 0xff && stream[i + 1] === 0xdb);
    assert.deepEqual([...stream.subarray(at + 5, at + 69)], new Array(64).fill(3), "{ quantTable: \"flat\" }");
  } finally {
    zarr.registry.set("jpeg", saved);
  }
});

test("register() refuses encodeOptions that encode() would refuse, in encode()'s words, before any chunk is written", async () => {
  await api.init();
  const gray = { quality: 90, encoded_color_space: "grayscale" };
  const data = new Uint8Array(64);
  const encodeMessage = (options) => {
    try {
      api.encode(gray, data, [8, 8], options);
    } catch (error) {
      return error.message.replace("jpeg: invalid configuration: ", "");
    }
    return null;
  };
  // The same words as encode()'s message: the two checks cannot drift apart unnoticed.
  const same = [5, "flat", true, { trellis: 1 }, { trellis: "yes" }, { trellis: null }, { restartIntervals: 0 },
    { quantTable: "flatt" }, { quantTable: 3 }, { quantTable: null }, { quantTable: "Flat" }, { trelis: true }, { restartIntervals: false, foo: 1 },
    // strings as the wasm modules quote them: cut after 40 characters, control characters escaped
    { ["k".repeat(45)]: true }, { "a\u001b[31mb\"\\": true }, { quantTable: "\u001b[2J" + "é".repeat(50) }, { trellis: "x\ny" }];
  for (const encodeOptions of same) {
    const registry = new Map();
    const expected = encodeMessage(encodeOptions);
    assert.ok(expected, `encode() accepts ${JSON.stringify(encodeOptions)}`);
    assert.throws(() => api.register(registry, { encodeOptions }), (e) => e instanceof TypeError && e.message === `zarr-jpeg: register()'s encodeOptions: ${expected}`, JSON.stringify(encodeOptions));
    assert.equal(registry.size, 0);
  }
  // Refused by both, worded a little differently (encode() shows an array's items).
  for (const encodeOptions of [[], [true], new Map(), { trellis: {} }, { trellis: [true] }, { quantTable: ["flat"] }]) {
    assert.ok(encodeMessage(encodeOptions), `encode() accepts ${String(encodeOptions)}`);
    assert.throws(() => api.register(new Map(), { encodeOptions }), (e) => /^zarr-jpeg: register\(\)'s encodeOptions: /.test(e.message));
  }
  // Options whose getter or Proxy trap throws: an error of the package's, naming what threw.
  const throwing = [
    { get trellis() { throw new Error("getter says no"); } },
    new Proxy({}, { ownKeys() { throw new Error("proxy says no"); } }),
  ];
  for (const encodeOptions of throwing) {
    assert.ok(encodeMessage(encodeOptions));
    assert.throws(() => api.register(new Map(), { encodeOptions }), (e) => e instanceof TypeError && /^zarr-jpeg: register\(\)'s encodeOptions: the encode options could not be read: reading them threw: (getter|proxy) says no$/.test(e.message));
  }
  // Accepted by both: every table, both booleans, null for the defaults, undefined members.
  const accepted = [null, {}, { restartIntervals: false, trellis: true }, { trellis: undefined, quantTable: undefined },
    ...QUANT_TABLES.map((quantTable) => ({ quantTable }))];
  for (const encodeOptions of accepted) {
    assert.equal(encodeMessage(encodeOptions), null, JSON.stringify(encodeOptions));
    const registry = new Map();
    api.register(registry, { encodeOptions });
    assert.ok(registry.has("jpeg"));
  }
});

test("register() reads its options as own members: inherited ones start no pool and are not options", () => {
  const handle = api.register(new Map(), Object.create({ workers: 2 }));
  assert.equal(handle.pool, null, "an inherited workers starts no pool");
  const inheritedEncodeOptions = api.register(new Map(), Object.create({ encodeOptions: { trelis: true } }));
  assert.equal(inheritedEncodeOptions.pool, null);
  // a getter is read once
  let reads = 0;
  const options = { get workers() { reads++; return 0; } };
  api.register(new Map(), options);
  assert.equal(reads, 1);
});

test("register() refuses a wrong registry, unknown options, a worker count that is not 0–256 and a workerUrl that is not a string or URL, naming them", () => {
  const registry = new Map();
  assert.throws(() => api.register(zarr, {}), (e) => e instanceof TypeError && /takes zarrita's codec registry \(zarr\.registry\), got an object/.test(e.message));
  assert.throws(() => api.register(undefined), (e) => /codec registry.*got undefined/.test(e.message));
  assert.throws(() => api.register(registry, null), (e) => /options must be an object, got null/.test(e.message));
  assert.throws(() => api.register(registry, { worker: 4 }), (e) => /unknown register\(\) option "worker" \(known: workers, workerUrl, encodeOptions\)/.test(e.message));
  for (const workers of [1e9, Infinity, -1, 2.5, NaN, "4", 257]) {
    assert.throws(() => api.register(registry, { workers }), (e) => e instanceof RangeError && /workers must be a whole number from 0 to 256, got /.test(e.message), String(workers));
  }
  for (const [workerUrl, name] of [[42, "42"], [null, "null"], [{ href: "./worker.js" }, "an Object"], ["", "an empty string"], [new Blob([]), "a Blob"]]) {
    assert.throws(
      () => api.register(registry, { workers: 2, workerUrl }),
      (e) => e instanceof TypeError && e.message === `zarr-jpeg: register()'s workerUrl must be the worker script's URL, a non-empty string or a URL, got ${name}`,
      name,
    );
  }
  assert.equal(registry.size, 0, "nothing registered after a refusal");
  for (const workerUrl of ["./worker.js", new URL("https://example.org/worker.js")]) assert.equal(api.register(new Map(), { workerUrl }).pool, null);
  const handle = api.register(registry, { workers: 0, workerUrl: undefined, encodeOptions: undefined });
  assert.equal(handle.pool, null);
  assert.ok(registry.has("jpeg"));
});
