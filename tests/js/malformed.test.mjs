// Malformed input through the built package (dist/) in Node: every truncation of a
// small valid stream of each mode, seeded byte flips and marker shuffles, other
// formats, hostile configuration values, and the worker pool serving good requests
// while bad ones fail. Each decode returns exactly the chunk's bytes or throws an Error
// naming the problem; none traps (the loader would rewrap a trap as "...trapped...");
// the caller's buffer is never changed.
// Run: node --test tests/js/malformed.test.mjs   (after `npm run build`)
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import { init, initFullDecoder, encode, decode, decodeInto, validateConfig } from "../../dist/index.js";
import { CodecPool } from "../../dist/advanced.js";
import { concat } from "../../dist/bytes.js";

await init();
// Progressive bases and their mutations then go to the full decoder.
await initFullDecoder();

const FIXTURES = new URL("../fixtures/", import.meta.url);

/** Seeded PRNG (mulberry32), so every run checks the same cases. */
function rng(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const gray = { quality: 90, encoded_color_space: "grayscale" };
const rgb = { quality: 90, encoded_color_space: "rgb" };
const ycc = (h, v, decoded = "rgb") => ({
  quality: 90,
  encoded_color_space: "ycbcr",
  decoded_color_space: decoded,
  subsampling: [[h, v], [1, 1], [1, 1]],
});

function pattern(n, seed) {
  const random = rng(seed);
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = (i * 7 + Math.floor(random() * 40)) & 255;
  return out;
}

/** Small valid streams of every mode: our encoder's, and libjpeg-turbo's fixtures. */
function validStreams() {
  const out = [];
  const ours = [
    ["gray", gray, [13, 21]],
    ["rgb", rgb, [13, 21, 3]],
    ["ycbcr 4:4:4", ycc(1, 1), [13, 21, 3]],
    ["ycbcr 4:2:2", ycc(2, 1), [13, 21, 3]],
    ["ycbcr 4:4:0", ycc(1, 2), [13, 21, 3]],
    ["ycbcr 4:2:0", ycc(2, 2), [13, 21, 3]],
    ["ycbcr→ycbcr 4:2:0", ycc(2, 2, "ycbcr"), [13, 21, 3]],
  ];
  for (const [name, config, shape] of ours) {
    const data = pattern(shape.reduce((a, b) => a * b), name.length);
    out.push({ name: `ours ${name}`, config, shape, stream: encode(config, data, shape) });
  }
  const manifest = JSON.parse(fs.readFileSync(new URL("manifest.json", FIXTURES), "utf8"));
  const wanted = [
    "gray_progressive_q90_cjpeg_61x47.jpg",
    "gray_restart3blocks_q90_cjpeg_61x47.jpg",
    "ycc420_progressive_q90_cjpeg_61x47.jpg",
    "ycc420_restart1row_q90_cjpeg_61x47.jpg",
    "ycc420_optimize_q90_cjpeg_61x47.jpg",
    "rgb_keeprgb_q90_pil_61x47.jpg",
    "ycc420_q90_pil_7x13.jpg",
    "gray_q90_pil_7x13.jpg",
  ];
  for (const entry of manifest.filter((e) => wanted.includes(e.file) && e.expect === "decode")) {
    const stream = new Uint8Array(fs.readFileSync(new URL(entry.file, FIXTURES)));
    const color = entry.components === 3;
    const config = !color ? gray : entry.markers?.adobe_transform === 0 || entry.file.startsWith("rgb_") ? rgb : ycc(2, 2);
    const shape = color ? [entry.height, entry.width, 3] : [entry.height, entry.width];
    try {
      decode(config, stream, shape);
    } catch {
      continue; // a fixture this configuration does not read: not a valid base stream
    }
    out.push({ name: entry.file, config, shape, stream });
  }
  return out;
}

const BASES = validStreams();
const stats = { calls: 0, ok: 0, errors: 0, kinds: {} };

/** One decode of hostile bytes: the chunk's length or an Error naming the problem. */
function check(config, bytes, shape, what) {
  const before = bytes.slice();
  const expected = shape.reduce((a, b) => a * b, 1);
  stats.calls++;
  try {
    const out = decode(config, bytes, shape);
    assert.ok(out instanceof Uint8Array, `${what}: returns a Uint8Array`);
    assert.equal(out.length, expected, `${what}: output length`);
    stats.ok++;
  } catch (error) {
    assert.ok(error instanceof Error, `${what}: throws an Error, got ${error}`);
    assert.doesNotMatch(error.message, /trapped/, `${what}: the instance trapped: ${error.message}`);
    assert.match(error.message, /^jpeg: .{10,}/, `${what}: the message names the problem: ${error.message}`);
    assert.equal(typeof error.kind, "string", `${what}: error.kind`);
    stats.errors++;
    stats.kinds[error.kind] = (stats.kinds[error.kind] ?? 0) + 1;
  }
  assert.deepEqual(bytes, before, `${what}: the input buffer is unchanged`);
}

/** The header segments (SOI excluded) up to and including SOS, then the rest. */
function segments(stream) {
  const segs = [];
  let pos = 2;
  while (pos + 4 <= stream.length && stream[pos] === 0xff) {
    const marker = stream[pos + 1];
    const len = (stream[pos + 2] << 8) | stream[pos + 3];
    segs.push(stream.subarray(pos, pos + 2 + len));
    pos += 2 + len;
    if (marker === 0xda) break;
  }
  return { segs, rest: stream.subarray(pos) };
}

test("there is a valid base stream of every mode", () => {
  assert.ok(BASES.length >= 12, BASES.map((b) => b.name).join(", "));
  for (const b of BASES) assert.equal(decode(b.config, b.stream, b.shape).length, b.shape.reduce((x, y) => x * y));
});

test("every truncation of a small valid stream of each mode", () => {
  let cases = 0;
  for (const { name, config, shape, stream } of BASES) {
    // Every length for our small streams; for the larger fixtures every length in the
    // header and every 7th in the entropy-coded data.
    const headerEnd = stream.length - segments(stream).rest.length;
    for (let n = 0; n < stream.length; n++) {
      if (!name.startsWith("ours") && n > headerEnd + 16 && n % 7 !== 0) continue;
      check(config, stream.slice(0, n), shape, `${name} cut to ${n} bytes`);
      cases++;
    }
  }
  console.log(`truncations: ${cases} cases`);
});

test("seeded random byte flips (3000 cases)", () => {
  const random = rng(5);
  for (let i = 0; i < 3000; i++) {
    const base = BASES[i % BASES.length];
    const bytes = base.stream.slice();
    const flips = 1 + Math.floor(random() * 4);
    const headerEnd = bytes.length - segments(bytes).rest.length;
    for (let f = 0; f < flips; f++) {
      // Mostly the header (where the decisions are made), sometimes the data.
      const at = random() < 0.7 ? Math.floor(random() * headerEnd) : Math.floor(random() * bytes.length);
      bytes[at] = random() < 0.3 ? 0xff : Math.floor(random() * 256);
    }
    check(base.config, bytes, base.shape, `${base.name} flip case ${i}`);
  }
});

test("seeded marker shuffles, drops and duplicates (1500 cases)", () => {
  const random = rng(11);
  const soi = new Uint8Array([0xff, 0xd8]);
  for (let i = 0; i < 1500; i++) {
    const base = BASES[i % BASES.length];
    const { segs, rest } = segments(base.stream);
    const order = segs.slice();
    const op = i % 4;
    if (op === 0) {
      for (let j = order.length - 1; j > 0; j--) {
        const k = Math.floor(random() * (j + 1));
        [order[j], order[k]] = [order[k], order[j]];
      }
    } else if (op === 1) {
      order.splice(Math.floor(random() * order.length), 1);
    } else if (op === 2) {
      const at = Math.floor(random() * order.length);
      order.splice(at, 0, order[Math.floor(random() * order.length)]);
    } else {
      // Move the SOS (with its data) somewhere earlier and repeat it.
      const sos = order.pop();
      order.splice(Math.floor(random() * (order.length + 1)), 0, concat([sos, rest.subarray(0, Math.floor(random() * rest.length))]));
      order.push(sos);
    }
    check(base.config, concat([soi, ...order, rest]), base.shape, `${base.name} shuffle case ${i}`);
  }
});

test("other formats and empty input are named, not called corrupt JPEG", () => {
  const cases = [
    ["empty", new Uint8Array(0), /empty/],
    ["one byte", new Uint8Array([0xff]), /FF D8|start-of-image/],
    ["SOI only", new Uint8Array([0xff, 0xd8]), /truncated/],
    ["SOI EOI", new Uint8Array([0xff, 0xd8, 0xff, 0xd9]), /start-of-scan|no image/],
    ["PNG", concat([new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), new Uint8Array(64)]), /PNG/],
    ["JPEG 2000 codestream", concat([new Uint8Array([0xff, 0x4f, 0xff, 0x51, 0x00, 0x2f]), new Uint8Array(64)]), /JPEG 2000/],
    ["JPEG 2000 JP2 box", concat([new Uint8Array([0, 0, 0, 0x0c, 0x6a, 0x50, 0x20, 0x20, 0x0d, 0x0a, 0x87, 0x0a]), new Uint8Array(64)]), /JPEG 2000/],
    ["JPEG XL codestream", concat([new Uint8Array([0xff, 0x0a, 0xfa, 0x7f]), new Uint8Array(64)]), /JPEG XL/],
    ["JPEG XL container", concat([new Uint8Array([0, 0, 0, 0x0c, 0x4a, 0x58, 0x4c, 0x20, 0x0d, 0x0a, 0x87, 0x0a]), new Uint8Array(64)]), /JPEG XL/],
    ["GIF", new TextEncoder().encode("GIF89a" + "\0".repeat(32)), /FF D8/],
    ["zeros", new Uint8Array(1000), /FF D8/],
    ["0xFF run", new Uint8Array(1000).fill(0xff), /truncated|marker/],
  ];
  for (const [name, bytes, pattern] of cases) {
    for (const [config, shape] of [[gray, [8, 8]], [ycc(2, 2), [8, 8, 3]]]) {
      check(config, bytes, shape, name);
      assert.throws(() => decode(config, bytes, shape), (e) => pattern.test(e.message), `${name}: ${pattern}`);
    }
  }
});

test("a tiny stream claiming 65535 × 65535 is rejected quickly whatever the chunk shape", () => {
  const base = BASES.find((b) => b.name === "ours gray").stream.slice();
  const sof = base.findIndex((v, i) => v === 0xff && base[i + 1] === 0xc0);
  base.set([0xff, 0xff, 0xff, 0xff], sof + 5);
  for (const shape of [[65535, 65535], [65535, 65535, 1], [65535, 65535, 3], [8, 8], [1, 65535]]) {
    const config = shape.length === 3 && shape[2] === 3 ? ycc(2, 2) : gray;
    const started = performance.now();
    assert.throws(() => decode(config, base, shape), (e) => !/trapped/.test(e.message) && /^jpeg: /.test(e.message));
    assert.ok(performance.now() - started < 500, `${shape}: ${performance.now() - started} ms`);
  }
});

test("hostile configuration and argument values throw Errors, never trap", () => {
  const good = BASES[0];
  const throwing = { quality: 90, get encoded_color_space() { throw new Error("getter says no"); } };
  const cases = [
    ["null", null], ["undefined", undefined], ["string", "grayscale"], ["array", []],
    ["NaN quality", { ...gray, quality: NaN }], ["Infinity quality", { ...gray, quality: Infinity }],
    ["huge quality", { ...gray, quality: 1e300 }], ["bigint quality", { ...gray, quality: 900n }],
    ["throwing getter", throwing],
    ["proxy", new Proxy(gray, { ownKeys() { throw new Error("proxy says no"); } })],
  ];
  for (const [name, config] of cases) {
    for (const call of [() => validateConfig(config), () => decode(config, good.stream, good.shape), () => encode(config, new Uint8Array(good.shape.reduce((a, b) => a * b)), good.shape)]) {
      assert.throws(call, (e) => e instanceof Error, name);
      try {
        call();
      } catch (e) {
        assert.doesNotMatch(e.message, /trapped/, `${name}: ${e.message}`);
      }
    }
    assert.equal(decode(good.config, good.stream, good.shape).length, good.shape.reduce((a, b) => a * b), `after ${name}`);
  }
  const shapes = [null, "8,8", [8, -8], [8, 8.5], [8, NaN], [8, 2 ** 53], [8, 2 ** 64], new Float64Array([8, 8]), [8, "8"]];
  for (const shape of shapes) {
    assert.throws(() => decode(good.config, good.stream, shape), (e) => e instanceof Error && !/trapped/.test(e.message) && /^jpeg: /.test(e.message), String(shape));
  }
  for (const bytes of [null, [0xff, 0xd8], good.stream.buffer, new Uint8ClampedArray(good.stream), new Int8Array(good.stream), new DataView(good.stream.buffer), "jpeg"]) {
    assert.throws(() => decode(good.config, bytes, good.shape), (e) => e instanceof Error && /^jpeg: .*Uint8Array/.test(e.message), String(bytes?.constructor?.name));
  }
});

// ConfigValue's deserializer stops at MAX_DEPTH (src/config_value.rs): without that limit
// a deeply nested configuration overflowed the Rust stack inside wasm and trapped.
test("a deeply nested configuration throws an Error, never traps", () => {
  const good = BASES[0];
  let deepArray = 1;
  for (let i = 0; i < 100_000; i++) deepArray = [deepArray];
  let deepObject = {};
  for (let i = 0, cur = deepObject; i < 5000; i++) cur = cur.a = {};
  for (const [name, config] of [["deep array subsampling", { ...gray, subsampling: deepArray }], ["deep object member", { ...gray, extra: deepObject }]]) {
    for (const call of [() => validateConfig(config), () => decode(config, good.stream, good.shape)]) {
      assert.throws(call, (e) => e instanceof Error && !/trapped/.test(e.message) && /nested more than 32 levels/.test(e.message), name);
    }
    assert.equal(decode(good.config, good.stream, good.shape).length, good.shape.reduce((a, b) => a * b), `after ${name}`);
  }
});

// The reader of JS configuration values stops after MAX_VALUES (src/config_value.rs):
// before, an array of 2^32 - 1 empty slots overflowed a Vec's capacity (a panic: the
// instance trapped) after ~10 s, a 10^7-item array took minutes, and 20 levels of arrays
// that share their items (2^20 values in a few hundred bytes) 5 s, 30 levels hours.
test("configurations with millions of values, or arrays sharing their items, fail fast with an Error, never trap", () => {
  const good = BASES[0];
  const sparse = [];
  sparse.length = 2 ** 32 - 1;
  let shared = [1];
  for (let i = 0; i < 25; i++) shared = [shared, shared];
  const manyMembers = Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => ["k" + i, i]));
  const cases = [
    ["sparse 2^32 - 1 subsampling", { ...gray, subsampling: sparse }],
    ["10^6-item subsampling", { ...gray, subsampling: new Array(1_000_000).fill([1, 1]) }],
    ["2^25 shared values", { ...gray, subsampling: shared }],
    ["10^5 members", { ...manyMembers, ...gray }],
  ];
  for (const [name, config] of cases) {
    for (const call of [() => validateConfig(config), () => decode(config, good.stream, good.shape), () => encode(gray, new Uint8Array(64), [8, 8], { restartIntervals: config })]) {
      const started = performance.now();
      assert.throws(call, (e) => e instanceof Error && !/trapped/.test(e.message) && /more than 1024 values/.test(e.message), name);
      assert.ok(performance.now() - started < 1000, `${name}: failed fast (${(performance.now() - started).toFixed(0)} ms)`);
    }
    assert.equal(decode(good.config, good.stream, good.shape).length, good.shape.reduce((a, b) => a * b), `after ${name}`);
  }
  // the limit is far above what a configuration holds
  assert.deepEqual(validateConfig({ ...ycc(2, 2), decoded_color_space: "rgb" }).subsampling, [[2, 2], [1, 1], [1, 1]]);
});

// Strings from the input are quoted as JSON does and cut after 40 characters in messages
// (src/config_value.rs `quote`): before, a 1 MB string gave a 1 MB message, and control
// characters (terminal escapes, newlines) went into logs as they were.
test("strings from a hostile configuration are cut and escaped in error messages", () => {
  const long = "x".repeat(1_000_000);
  const cases = [
    [{ quality: 90, encoded_color_space: long }, /encoded_color_space must be .*, got "x{40}…"$/],
    [{ ...gray, decoded_color_space: long }, /decoded_color_space must be .*, got "x{40}…"$/],
    [{ ...gray, [long]: 1 }, /unknown member "x{40}…";/],
    [{ ...gray, "a\u001b[31mred\nline\"q\\": 1 }, /unknown member "a\\u001B\[31mred\\u000Aline\\"q\\\\";/],
    [{ quality: 90, encoded_color_space: "rgb\u0000" }, /got "rgb\\u0000"$/],
  ];
  for (const [config, pattern] of cases) {
    assert.throws(() => validateConfig(config), (e) => e.message.length < 400 && pattern.test(e.message) && !/[\u0000-\u001f]/.test(e.message), pattern.source);
  }
  assert.throws(() => decode(gray, BASES[0].stream, [8, long]), (e) => e.message.length < 200 && /shape\[1\] must be a non-negative integer, got "x{40}…" \(a string\)/.test(e.message));
  assert.throws(() => encode(gray, new Uint8Array(64), [8, 8], { [long]: true }), (e) => e.message.length < 200 && /unknown encode option "x{40}…"/.test(e.message));
});

// The chunk shape is read through Reflect like the configuration (src/wasm.rs parse_shape):
// before, a throwing getter or Proxy trap on the shape unwound through the wasm frames as
// the caller's own exception (no "jpeg:" message, no kind), a Proxy claiming a length of
// 10^9 made the instance "trap" (a RangeError from Array.from), and a detached or
// out-of-bounds stream threw V8's TypeError from inside the copy into wasm memory.
test("hostile shapes and detached or out-of-bounds streams are Errors with a kind, and the module keeps working", () => {
  const good = BASES[0];
  const getter = [...good.shape];
  Object.defineProperty(getter, 1, { get() { throw new Error("shape getter says no"); } });
  const cases = [
    ["throwing index getter", getter, /InvalidShape/, /the chunk shape could not be read: reading it threw: shape getter says no/],
    ["proxy throwing on length", new Proxy([...good.shape], { get: (t, k) => { if (k === "length") throw new Error("no length"); return t[k]; } }), /InvalidShape/, /could not be read: reading it threw: no length/],
    ["proxy length 1e9", new Proxy([...good.shape], { get: (t, k) => (k === "length" ? 1e9 : t[k]) }), /InvalidShape/, /the chunk shape has 1000000000 dimensions/],
    ["40-D", new Array(40).fill(1), /InvalidShape/, /the chunk shape has 40 dimensions/],
  ];
  for (const [name, shape, kind, pattern] of cases) {
    for (const call of [() => decode(good.config, good.stream, shape), () => encode(good.config, new Uint8Array(8 * 8 * 3), shape)]) {
      assert.throws(call, (e) => e instanceof Error && kind.test(e.kind) && pattern.test(e.message), name);
    }
    assert.equal(decode(good.config, good.stream, good.shape).length, good.shape.reduce((a, b) => a * b), `after ${name}`);
  }
  const detached = good.stream.slice();
  structuredClone(detached.buffer, { transfer: [detached.buffer] });
  const resizable = new ArrayBuffer(good.stream.length, { maxByteLength: good.stream.length });
  const outOfBounds = new Uint8Array(resizable, 0, good.stream.length);
  outOfBounds.set(good.stream);
  resizable.resize(0);
  for (const [name, stream] of [["detached", detached], ["out of bounds", outOfBounds]]) {
    assert.throws(() => decode(good.config, stream, good.shape), (e) => e.kind === "CorruptStream" && /the input is empty \(0 bytes\)/.test(e.message), name);
    const out = new Uint8Array(good.shape.reduce((a, b) => a * b)).fill(7);
    assert.throws(() => decodeInto(good.config, stream, good.shape, out), (e) => e.kind === "CorruptStream", name);
    assert.ok(out.every((v) => v === 7), `${name}: out untouched`);
    assert.equal(decode(good.config, good.stream, good.shape).length, good.shape.reduce((a, b) => a * b), `after ${name}`);
  }
});

test("encode never writes wrong data: mismatched configuration, shape, length or array type throw", () => {
  const data = pattern(16 * 16 * 3, 1);
  const cases = [
    [ycc(2, 2), data.subarray(0, 256), [16, 16]],
    [ycc(2, 2), data.subarray(0, 256), [16, 16, 1]],
    [rgb, data, [16, 16, 4]],
    [ycc(2, 2), data.subarray(1), [16, 16, 3]],
    [ycc(2, 2), concat([data, new Uint8Array(1)]), [16, 16, 3]],
    [gray, data, [16, 16, 3]],
    [gray, data, [16, 16]],
    [gray, data.subarray(0, 255), [16, 16]],
    [gray, data, [768]],
    [gray, data, [1, 16, 16, 3]],
    [ycc(2, 2), new Uint16Array(768), [16, 16, 3]],
    [ycc(2, 2), new Uint8ClampedArray(768), [16, 16, 3]],
    [ycc(2, 2), new Float32Array(768), [16, 16, 3]],
    [ycc(2, 2), Array.from(data), [16, 16, 3]],
    [gray, new Int8Array(256), [16, 16]],
    [gray, data.buffer, [16, 16]],
  ];
  for (const [config, bytes, shape] of cases) {
    assert.throws(() => encode(config, bytes, shape), (e) => e instanceof Error && /^jpeg: /.test(e.message) && !/trapped/.test(e.message), `${config.encoded_color_space} ${bytes.constructor.name}(${bytes.length ?? bytes.byteLength}) ${shape}`);
  }
});

test("the worker pool keeps serving concurrent good requests while bad ones fail", async () => {
  const pool = new CodecPool({ size: 2 });
  try {
    const random = rng(23);
    const jobs = [];
    for (let i = 0; i < 300; i++) {
      const base = BASES[i % BASES.length];
      if (i % 3 === 0) {
        const expected = decode(base.config, base.stream, base.shape);
        jobs.push(pool.decode(base.config, base.stream, base.shape).then((out) => assert.deepEqual(out, expected, `good ${i}`)));
      } else {
        const bytes = base.stream.slice(0, Math.floor(random() * base.stream.length));
        const before = bytes.slice();
        jobs.push(
          pool.decode(base.config, bytes, base.shape).then(
            (out) => assert.equal(out.length, base.shape.reduce((a, b) => a * b)),
            (e) => {
              assert.ok(e instanceof Error && /^jpeg: /.test(e.message) && !/trapped/.test(e.message), e.message);
              assert.deepEqual(bytes, before);
            },
          ),
        );
      }
    }
    await Promise.all(jobs);
    assert.equal(pool.mode, "workers");
  } finally {
    await pool.close();
  }
});

// Runs last (node:test keeps the file's order): over every decode above.
test("the cases reach both outcomes, and every refusal has a known kind (none needs the loaded full decoder)", () => {
  assert.ok(stats.ok > 0, `some hostile streams decode: ${JSON.stringify(stats)}`);
  assert.ok(stats.errors > 0, `some hostile streams are refused: ${JSON.stringify(stats)}`);
  assert.equal(stats.ok + stats.errors, stats.calls);
  const known = ["InvalidConfiguration", "InvalidShape", "InvalidData", "UnsupportedStream", "CorruptStream", "StreamMismatch"];
  for (const kind of Object.keys(stats.kinds)) assert.ok(known.includes(kind), `unexpected kind ${kind}: ${JSON.stringify(stats.kinds)}`);
});
