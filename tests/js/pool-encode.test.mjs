// Encoding off the main thread: with register(registry, { workers }), the jpeg codec's chunks
// encode in worker_threads here (Web Workers in the browser test), to exactly the streams
// encode() writes on this thread; the caller's samples are copied, never detached or
// changed; what encode() refuses is refused with encode()'s Error; chunks a worker cannot
// encode, or that it had not answered when the pool closed, are encoded on this thread.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as zarr from "zarrita";
import * as pkg from "../../dist/index.js";

const api = pkg;
const { register, init, encode } = api;

const ycbcr420 = { quality: 90, encoded_color_space: "ycbcr", subsampling: [[2, 2], [1, 1], [1, 1]] };
const rgb = { quality: 80, encoded_color_space: "rgb" };
const gray = { quality: 75, encoded_color_space: "grayscale" };

/** Smooth samples with some noise: many non-zero coefficients, so the streams differ by setting. */
function samples(h, w, c, seed = 1) {
  const out = new Uint8Array(h * w * c);
  let s = seed;
  for (let i = 0; i < out.length; i++) {
    s = (s * 1103515245 + 12345) >>> 0;
    const p = Math.floor(i / c);
    const [y, x] = [Math.floor(p / w), p % w];
    out[i] = (x * 3 + y * 2 + (i % c) * 60 + (s >>> 27)) & 255;
  }
  return out;
}

const same = (a, b) => Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));

test("pool.encode: in workers, exactly encode()'s stream, for every colour space, size and option", async () => {
  await init();
  const handle = register(zarr.registry, { workers: 2 });
  try {
    const cases = [
      [ycbcr420, [8, 8, 3], undefined],
      [ycbcr420, [100, 70, 3], undefined],
      [ycbcr420, [256, 256, 3], undefined], // restart intervals
      [ycbcr420, [256, 256, 3], { restartIntervals: false }],
      [ycbcr420, [96, 96, 3], { trellis: true, quantTable: "flat" }],
      [rgb, [64, 48, 3], undefined],
      [gray, [200, 130], { quantTable: "peterson" }],
    ];
    for (const [config, shape, options] of cases) {
      const data = samples(shape[0], shape[1], shape[2] ?? 1, shape[0]);
      const before = data.slice();
      const got = await handle.pool.encode(config, data, shape, options);
      const name = `${config.encoded_color_space} ${shape.join("×")} ${JSON.stringify(options)}`;
      assert.ok(got instanceof Uint8Array && got.length > 0, name);
      assert.ok(same(got, encode(config, data, shape, options)), `${name}: the stream encode() writes`);
      assert.ok(same(data, before), `${name}: the samples are unchanged and not detached`);
    }
    assert.equal(handle.pool.mode, "workers");
    assert.equal(handle.pool.stats.encodedHere, 0, "every chunk was encoded in a worker");
  } finally {
    await handle.close();
  }
});

test("pool.encode: a view into a larger buffer is copied, never detached, and decodes pool and thread alike", async () => {
  await init();
  const handle = register(zarr.registry, { workers: 1 });
  try {
    const whole = samples(64, 64, 3);
    const view = whole.subarray(16 * 64 * 3, 48 * 64 * 3); // rows 16..47
    const got = await handle.pool.encode(ycbcr420, view, [32, 64, 3]);
    assert.equal(whole.buffer.byteLength, 64 * 64 * 3, "the caller's buffer is not detached");
    assert.ok(same(got, encode(ycbcr420, view, [32, 64, 3])));
    // the pool both decodes and encodes: a decode after the encoder was handed over
    assert.ok(same(await handle.pool.decode(ycbcr420, got, [32, 64, 3]), api.decode(ycbcr420, got, [32, 64, 3])));
  } finally {
    await handle.close();
  }
});

test("pool.encode: arguments encode() refuses are refused with encode()'s Error, and the pool stays balanced", async () => {
  await init();
  const handle = register(zarr.registry, { workers: 1 });
  try {
    const data = samples(8, 8, 1);
    const detached = data.slice();
    structuredClone(detached.buffer, { transfer: [detached.buffer] });
    const cases = [
      ["invalid quality", { ...gray, quality: 0 }, data, [8, 8], undefined],
      ["function member", { ...gray, extra: () => 1 }, data, [8, 8], undefined],
      ["too few samples", gray, data.subarray(1), [8, 8], undefined],
      ["shape of another chunk", gray, data, [16, 8], undefined],
      ["Float32Array samples", gray, new Float32Array(64), [8, 8], undefined],
      ["plain array samples", gray, Array.from(data), [8, 8], undefined],
      ["detached samples", gray, detached, [8, 8], undefined],
      ["string shape", gray, data, "88", undefined],
      ["unknown option", gray, data, [8, 8], { trelis: true }],
      ["option of the wrong type", gray, data, [8, 8], { trellis: "yes" }],
      ["options not an object", gray, data, [8, 8], 5],
    ];
    for (const [name, config, input, shape, options] of cases) {
      let direct;
      try {
        encode(config, input, shape, options);
      } catch (error) {
        direct = error;
      }
      assert.ok(direct instanceof Error, `${name}: encode() throws`);
      await assert.rejects(handle.pool.encode(config, input, shape, options), (e) => e.kind === direct.kind && e.message === direct.message, name);
    }
    // valid arguments behind a Proxy or a getter encode, as encode() reads them
    const options = { get trellis() { return true; } };
    assert.ok(same(await handle.pool.encode(new Proxy(gray, {}), data, [8, 8], new Proxy(options, {})), encode(gray, data, [8, 8], { trellis: true })));
    assert.equal(handle.pool.mode, "workers");
  } finally {
    await handle.close();
  }
});

test("pool.encode: a chunk waiting for a worker encodes the samples as they were when encode() was called", async () => {
  await init();
  const handle = register(zarr.registry, { workers: 1 });
  try {
    const data = samples(64, 64, 3);
    const expected = encode(ycbcr420, data, [64, 64, 3]);
    await handle.pool.encode(ycbcr420, data, [64, 64, 3]); // the worker started
    const inputs = Array.from({ length: 40 }, () => data.slice()); // 16 sent, 24 waiting
    const pending = inputs.map((input) => handle.pool.encode(ycbcr420, input, [64, 64, 3]));
    await new Promise((resolve) => setImmediate(resolve)); // encode() has taken them all
    for (const input of inputs) input.fill(0);
    for (const stream of await Promise.all(pending)) assert.ok(same(stream, expected));
    assert.equal(handle.pool.stats.encodedHere, 0);
  } finally {
    await handle.close();
  }
});

test("pool.encode: a worker whose encoder does not load leaves its chunks to the calling thread", { timeout: 20000 }, async () => {
  await init();
  const handle = register(zarr.registry, { workers: 1, workerUrl: new URL("./helpers/no-encoder-worker.mjs", import.meta.url) });
  try {
    const data = samples(32, 32, 3);
    const inputs = Array.from({ length: 5 }, () => data.slice());
    const pending = inputs.map((input) => handle.pool.encode(ycbcr420, input, [32, 32, 3]));
    await new Promise((resolve) => setImmediate(resolve)); // encode() has taken them all
    for (const input of inputs) input.fill(0); // done here from the copy sent, not from these
    for (const stream of await Promise.all(pending)) assert.ok(same(stream, encode(ycbcr420, data, [32, 32, 3])));
    assert.equal(handle.pool.mode, "workers");
    assert.equal(handle.pool.stats.encodedHere, 5);
  } finally {
    await handle.close();
  }
});

test("pool.encode: close() encodes on the calling thread the chunks its workers had not answered, sent or waiting", { timeout: 20000 }, async () => {
  await init();
  const handle = register(zarr.registry, { workers: 1, workerUrl: new URL("./helpers/silent-worker.mjs", import.meta.url) });
  const data = samples(16, 16, 1);
  const pending = Array.from({ length: 40 }, () => handle.pool.encode(gray, data, [16, 16])); // 16 sent, 24 waiting
  await new Promise((resolve) => setTimeout(resolve, 200)); // the worker has started and holds its 16
  assert.equal(handle.pool.mode, "workers");
  await handle.close();
  const expected = encode(gray, data, [16, 16]);
  for (const stream of await Promise.all(pending)) assert.ok(same(stream, expected));
  assert.equal(handle.pool.stats.encodedHere, 40);
});

test("zarrita writes through the pool: zarr.set with { workers: 2 } stores exactly the chunks written without, OME-Zarr layout included", async () => {
  const [H, W] = [150, 130];
  const planes = samples(3, H * W, 1); // (c, y, x)
  const layouts = [
    { shape: [H, W, 3], chunkShape: [64, 64, 3], codecs: [{ name: "jpeg", configuration: ycbcr420 }], data: samples(H, W, 3), stride: [W * 3, 3, 1] },
    {
      shape: [3, H, W],
      chunkShape: [3, 64, 64],
      codecs: [{ name: "transpose", configuration: { order: [1, 2, 0] } }, { name: "jpeg", configuration: ycbcr420 }],
      data: planes,
      stride: [H * W, W, 1],
    },
  ];
  for (const { shape, chunkShape, codecs, data, stride } of layouts) {
    const write = async (options) => {
      const handle = register(zarr.registry, options);
      try {
        const store = new Map();
        const arr = await zarr.create(store, { shape, chunkShape, dtype: "uint8", codecs });
        await zarr.set(arr, null, { data, shape, stride });
        return { store, stats: handle.pool?.stats && { ...handle.pool.stats }, mode: handle.pool?.mode };
      } finally {
        await handle.close();
      }
    };
    const plain = await write({});
    const pooled = await write({ workers: 2 });
    assert.equal(pooled.mode, "workers");
    assert.equal(pooled.stats.encodedHere, 0, "zarrita's chunks were encoded in the workers");
    assert.deepEqual([...pooled.store.keys()].sort(), [...plain.store.keys()].sort());
    for (const [key, bytes] of plain.store) assert.ok(same(pooled.store.get(key), bytes), `${shape}: ${key}`);
  }
});

test("pool.encode: chunks sent to or waiting for a worker that dies, the only one, are encoded on the calling thread", { timeout: 20000 }, async () => {
  await init();
  const handle = register(zarr.registry, { workers: 1, workerUrl: new URL("./helpers/dying-worker.mjs", import.meta.url) });
  try {
    const data = samples(24, 40, 3);
    const expected = encode(ycbcr420, data, [24, 40, 3]);
    const streams = await Promise.all(Array.from({ length: 40 }, () => handle.pool.encode(ycbcr420, data, [24, 40, 3])));
    for (const stream of streams) assert.ok(same(stream, expected));
    assert.equal(handle.pool.stats.encodedHere, 40);
  } finally {
    await handle.close();
  }
});

test("pool.encode with readWhenSent: a waiting chunk is read when a worker takes it, so no copy waits in memory", async () => {
  await init();
  const handle = register(zarr.registry, { workers: 1 });
  try {
    // chunks large enough that the worker is still busy with the first 16 when the test
    // changes the samples of the 24 waiting ones
    const shape = [256, 256, 3];
    const data = samples(...shape);
    const zeros = new Uint8Array(data.length);
    const [expected, expectedZeros] = [encode(ycbcr420, data, shape), encode(ycbcr420, zeros, shape)];
    await handle.pool.encode(ycbcr420, data, shape); // the worker started
    const inputs = Array.from({ length: 40 }, () => data.slice());
    const pending = inputs.map((input) => handle.pool.encode(ycbcr420, input, shape, undefined, { readWhenSent: true }));
    await new Promise((resolve) => setImmediate(resolve)); // 16 sent (copied then), the rest waiting, uncopied
    for (const input of inputs) input.fill(0);
    const streams = await Promise.all(pending);
    const [original, changed] = [streams.filter((s) => same(s, expected)).length, streams.filter((s) => same(s, expectedZeros)).length];
    assert.equal(original + changed, 40, "each stream is of the samples either as called or as changed");
    assert.ok(original >= 16, `the chunks sent at once encode the samples of the call (${original})`);
    assert.ok(changed >= 1, `chunks still waiting when the samples changed encode them as changed (${changed})`);
    for (const input of inputs) assert.equal(input.buffer.byteLength, data.length, "never detached");
  } finally {
    await handle.close();
  }
});
