// Decoding off the main thread: register(registry, { workers }) decodes in worker_threads
// here (Web Workers in the browser test), gives identical samples, carries error kinds
// across, falls back cleanly when workers cannot start, and does not hold Node open.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import * as zarr from "zarrita";
import * as pkg from "../../dist/index.js";

const api = "register" in pkg ? pkg : { ...pkg, ...(await import("../../dist/zarrita.js")) };
const { register, init, encode, decode } = api;

const config = { quality: 90, encoded_color_space: "ycbcr", subsampling: [[2, 2], [1, 1], [1, 1]] };

async function store() {
  const s = new Map();
  const h = register(zarr.registry);
  const arr = await zarr.create(s, { shape: [96, 80, 3], chunkShape: [32, 32, 3], dtype: "uint8", codecs: [{ name: "jpeg", configuration: config }] });
  const data = Uint8Array.from({ length: 96 * 80 * 3 }, (_, i) => (i * 31) % 256);
  await zarr.set(arr, null, { data, shape: [96, 80, 3], stride: [240, 3, 1] });
  await h.close();
  return s;
}

test("pool decodes in workers and gives exactly the main-thread result", async () => {
  const s = await store();
  register(zarr.registry);
  const expected = await zarr.get(await zarr.open(s, { kind: "array" }));
  const handle = register(zarr.registry, { workers: 2 });
  try {
    const got = await zarr.get(await zarr.open(s, { kind: "array" }));
    assert.equal(handle.pool.mode, "workers");
    assert.deepEqual(got.shape, expected.shape);
    assert.ok(Buffer.from(got.data.buffer, got.data.byteOffset, got.data.byteLength).equals(Buffer.from(expected.data.buffer, expected.data.byteOffset, expected.data.byteLength)));
  } finally {
    await handle.close();
  }
});

test("pool: the caller's bytes are not detached (a copy is transferred) and errors keep their kind", async () => {
  await init();
  const handle = register(zarr.registry, { workers: 1 });
  try {
    const stream = encode({ quality: 90, encoded_color_space: "grayscale" }, new Uint8Array(64), [8, 8]);
    const out = await handle.pool.decode({ quality: 90, encoded_color_space: "grayscale" }, stream, [8, 8]);
    assert.equal(stream.byteLength > 0, true, "input still usable");
    assert.deepEqual([...out], [...decode({ quality: 90, encoded_color_space: "grayscale" }, stream, [8, 8])]);
    await assert.rejects(handle.pool.decode({ quality: 90, encoded_color_space: "grayscale" }, stream, [16, 8]), (e) => e.kind === "StreamMismatch" && /^jpeg: /.test(e.message));
    await assert.rejects(handle.pool.decode({ quality: 90, encoded_color_space: "grayscale" }, new Uint8Array([1, 2, 3]), [8, 8]), (e) => typeof e.kind === "string");
  } finally {
    await handle.close();
  }
});

// Before: a configuration that cannot be cloned (a function member, a Proxy, a getter)
// made postMessage throw after the job was counted in flight, so that worker stayed
// busy (and ref'd) for good, and close() later "finished" the job on this thread and
// crashed the process with an unhandled rejection; bytes other than a Uint8Array were
// converted (a plain array, a Float32Array) or became n zero bytes (a number n), a
// string shape was split into characters, and a detached view threw V8's TypeError.
test("pool: arguments decode() refuses are refused with decode()'s Error, and the pool stays balanced", async () => {
  await init();
  const handle = register(zarr.registry, { workers: 1 });
  const unhandled = [];
  const onUnhandled = (reason) => unhandled.push(reason);
  process.on("unhandledRejection", onUnhandled);
  try {
    const gray = { quality: 90, encoded_color_space: "grayscale" };
    const stream = encode(gray, Uint8Array.from({ length: 64 }, (_, i) => i * 4), [8, 8]);
    const expected = [...decode(gray, stream, [8, 8])];
    const detached = stream.slice();
    structuredClone(detached.buffer, { transfer: [detached.buffer] });
    const throwingShape = [8, 8];
    Object.defineProperty(throwingShape, 0, { get() { throw new Error("shape getter says no"); } });
    const cases = [
      ["function member", { ...gray, extra: () => 1 }, stream, [8, 8]],
      ["getter", { ...gray, get quality() { throw new Error("getter says no"); } }, stream, [8, 8]],
      ["invalid quality", { ...gray, quality: 0 }, stream, [8, 8]],
      ["plain array bytes", gray, Array.from(stream), [8, 8]],
      ["Float32Array bytes", gray, new Float32Array(stream), [8, 8]],
      ["number bytes", gray, 1e6, [8, 8]],
      ["null bytes", gray, null, [8, 8]],
      ["detached bytes", gray, detached, [8, 8]],
      ["string shape", gray, stream, "88"],
      ["null shape", gray, stream, null],
      ["throwing shape", gray, stream, throwingShape],
      ["symbol in shape", gray, stream, [8, Symbol("eight")]],
    ];
    for (const [name, cfg, bytes, shape] of cases) {
      let direct;
      try {
        decode(cfg, bytes, shape);
      } catch (error) {
        direct = error;
      }
      assert.ok(direct?.kind, `${name}: decode() throws a codec Error`);
      await assert.rejects(handle.pool.decode(cfg, bytes, shape), (e) => e.kind === direct.kind && e.message === direct.message, name);
    }
    // a Proxy configuration that is valid decodes (in its normalised, cloneable form)
    assert.deepEqual([...(await handle.pool.decode(new Proxy(gray, {}), stream, [8, 8]))], expected);
    assert.deepEqual([...(await handle.pool.decode(gray, stream, [8, 8]))], expected);
    assert.equal(handle.pool.mode, "workers");
  } finally {
    await handle.close();
    await new Promise((resolve) => setTimeout(resolve, 50));
    process.off("unhandledRejection", onUnhandled);
  }
  assert.deepEqual(unhandled, [], "no unhandled rejection");
});

test("pool: views into a larger buffer (a Node Buffer of a file, a Uint8Array) are copied, never detached", async () => {
  await init();
  const handle = register(zarr.registry, { workers: 1 });
  try {
    const gray = { quality: 90, encoded_color_space: "grayscale" };
    const stream = encode(gray, Uint8Array.from({ length: 64 }, (_, i) => i * 4), [8, 8]);
    const expected = [...decode(gray, stream, [8, 8])];
    const file = Buffer.concat([Buffer.alloc(10000, 7), Buffer.from(stream)]);
    const arrayView = new Uint8Array(file).subarray(10000);
    for (const bytes of [file.subarray(10000), arrayView]) {
      const bufferLength = bytes.buffer.byteLength;
      assert.deepEqual([...(await handle.pool.decode(gray, bytes, [8, 8]))], expected);
      assert.equal(bytes.buffer.byteLength, bufferLength, `${bytes.constructor.name}'s buffer not detached`);
      assert.deepEqual([...bytes], [...stream]);
    }
  } finally {
    await handle.close();
  }
});

test("pool: a worker is sent at most 16 chunks before it answers; the others wait, and all settle", async () => {
  const handle = register(zarr.registry, { workers: 1, workerUrl: new URL("./helpers/counting-worker.mjs", import.meta.url) });
  try {
    const gray = { quality: 90, encoded_color_space: "grayscale" };
    const results = await Promise.allSettled(Array.from({ length: 100 }, () => handle.pool.decode(gray, new Uint8Array(8), [8, 8])));
    assert.equal(handle.pool.mode, "workers");
    assert.ok(results.every((r) => r.status === "rejected" && r.reason.kind === "Probe"));
    const most = Math.max(...results.map((r) => Number(r.reason.message)));
    assert.ok(most >= 2 && most <= 16, `at most ${most} chunks in the worker at once`); // MAX_IN_FLIGHT_PER_WORKER
  } finally {
    await handle.close();
  }
});

/** An 8×8 grayscale stream and its samples as decode() on this thread gives them. */
async function grayChunk() {
  await init();
  const gray = { quality: 90, encoded_color_space: "grayscale" };
  const stream = encode(gray, Uint8Array.from({ length: 64 }, (_, i) => i * 4), [8, 8]);
  return { gray, stream, expected: [...decode(gray, stream, [8, 8])] };
}

test("pool: a chunk waiting for a worker decodes the bytes as they were when decode() was called", async () => {
  const { gray, stream, expected } = await grayChunk();
  const handle = register(zarr.registry, { workers: 1 });
  try {
    await handle.pool.decode(gray, stream, [8, 8]); // the worker started
    const inputs = Array.from({ length: 40 }, () => stream.slice());
    const pending = inputs.map((bytes) => handle.pool.decode(gray, bytes, [8, 8]));
    await new Promise((resolve) => setImmediate(resolve)); // decode() has taken them all
    for (const bytes of inputs) bytes.fill(0);
    for (const samples of await Promise.all(pending)) assert.deepEqual([...samples], expected);
  } finally {
    await handle.close();
  }
});

test("pool: chunks asked for while the workers start decode the bytes as they were when decode() was called", async () => {
  const { gray, stream, expected } = await grayChunk();
  const handle = register(zarr.registry, { workers: 1 });
  try {
    const inputs = Array.from({ length: 5 }, () => stream.slice());
    const pending = inputs.map((bytes) => handle.pool.decode(gray, bytes, [8, 8])); // the pool starts its worker
    await new Promise((resolve) => setImmediate(resolve));
    for (const bytes of inputs) bytes.fill(0);
    for (const samples of await Promise.all(pending)) assert.deepEqual([...samples], expected);
    assert.equal(handle.pool.stats.decodedHere, 0);
  } finally {
    await handle.close();
  }
});

test("pool: chunks waiting for a worker that dies, the only one, decode on the calling thread", { timeout: 20000 }, async () => {
  const { gray, stream, expected } = await grayChunk();
  const handle = register(zarr.registry, { workers: 1, workerUrl: new URL("./helpers/dying-worker.mjs", import.meta.url) });
  try {
    const decoded = await Promise.all(Array.from({ length: 40 }, () => handle.pool.decode(gray, stream, [8, 8])));
    for (const samples of decoded) assert.deepEqual([...samples], expected);
    assert.equal(handle.pool.stats.decodedHere, 40);
  } finally {
    await handle.close();
  }
});

/** Resolves once `condition()` holds; rejects after `ms`. */
async function until(condition, what, ms = 15000) {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

test("pool: a worker that dies is replaced, and chunks decode in workers again", { timeout: 30000 }, async () => {
  const { gray, stream, expected } = await grayChunk();
  const flag = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "zarr-jpeg-pool-")), "died");
  process.env.ZARR_JPEG_TEST_DIES_ONCE = flag; // read by the workers, which copy the environment
  const handle = register(zarr.registry, { workers: 1, workerUrl: new URL("./helpers/dies-once-worker.mjs", import.meta.url) });
  try {
    assert.deepEqual([...(await handle.pool.decode(gray, stream, [8, 8]))], expected);
    assert.ok(fs.existsSync(flag), "the first worker was the one that dies");
    assert.equal(handle.pool.stats.decodedHere, 1);
    await until(() => handle.pool.stats.workersReplaced === 1, "the replacement worker");
    const decoded = await Promise.all(Array.from({ length: 40 }, () => handle.pool.decode(gray, stream, [8, 8])));
    for (const samples of decoded) assert.deepEqual([...samples], expected);
    assert.equal(handle.pool.stats.decodedHere, 1, "the replacement decoded them");
    assert.equal(handle.pool.mode, "workers");
  } finally {
    delete process.env.ZARR_JPEG_TEST_DIES_ONCE;
    await handle.close();
  }
});

test("pool: a worker that dies at every chunk is replaced twice, then chunks decode on the calling thread", { timeout: 30000 }, async () => {
  const { gray, stream, expected } = await grayChunk();
  const handle = register(zarr.registry, { workers: 1, workerUrl: new URL("./helpers/dying-worker.mjs", import.meta.url) });
  try {
    for (const replaced of [1, 2]) {
      assert.deepEqual([...(await handle.pool.decode(gray, stream, [8, 8]))], expected);
      await until(() => handle.pool.stats.workersReplaced === replaced, `replacement ${replaced}`);
    }
    // the second replacement dies at its chunk too; no third is started
    assert.deepEqual([...(await handle.pool.decode(gray, stream, [8, 8]))], expected);
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(handle.pool.stats.workersReplaced, 2);
    assert.deepEqual([...(await handle.pool.decode(gray, stream, [8, 8]))], expected);
    assert.equal(handle.pool.stats.decodedHere, 4);
  } finally {
    await handle.close();
  }
});

test("pool: close() decodes on the calling thread the chunks its workers had not answered, sent or waiting", { timeout: 30000 }, async () => {
  const { gray, stream, expected } = await grayChunk();
  const handle = register(zarr.registry, { workers: 1, workerUrl: new URL("./helpers/silent-worker.mjs", import.meta.url) });
  const pending = Array.from({ length: 40 }, () => handle.pool.decode(gray, stream, [8, 8])); // 16 sent, 24 waiting
  // until the worker has started and holds its 16 (a loaded machine can take seconds)
  for (let waited = 0; handle.pool.mode !== "workers" && waited < 15000; waited += 50) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(handle.pool.mode, "workers");
  await handle.close();
  for (const samples of await Promise.all(pending)) assert.deepEqual([...samples], expected);
  assert.equal(handle.pool.stats.decodedHere, 40);
});

test("visible fallback: an unloadable worker script decodes on the calling thread, correctly, and warns once naming the URL", async () => {
  const s = await store();
  register(zarr.registry);
  const expected = await zarr.get(await zarr.open(s, { kind: "array" }));
  const url = new URL("./no-such-worker.js", import.meta.url);
  const warnings = [];
  const warn = console.warn;
  console.warn = (...args) => warnings.push(args.join(" "));
  const handle = register(zarr.registry, { workers: 2, workerUrl: url });
  try {
    const got = await zarr.get(await zarr.open(s, { kind: "array" }));
    await zarr.get(await zarr.open(s, { kind: "array" }));
    assert.equal(handle.pool.mode, "main-thread");
    assert.deepEqual(got.shape, [96, 80, 3]);
    assert.ok(Buffer.from(got.data.buffer, got.data.byteOffset, got.data.byteLength).equals(Buffer.from(expected.data.buffer, expected.data.byteOffset, expected.data.byteLength)));
    assert.equal(handle.pool.stats.decodedHere, 2 * 9);
  } finally {
    console.warn = warn;
    await handle.close();
  }
  assert.equal(warnings.length, 1, warnings.join("\n"));
  assert.ok(warnings[0].startsWith(`jpeg: the pool's workers could not start from ${url.href} (`), warnings[0]);
  assert.match(warnings[0], /decoding and encoding on the calling thread instead/);
  assert.match(warnings[0], /workerUrl: see the zarr-jpeg README, "Workers and bundlers"/);
});

test("no warning when the workers start", async () => {
  const s = await store();
  const warnings = [];
  const warn = console.warn;
  console.warn = (...args) => warnings.push(args.join(" "));
  const handle = register(zarr.registry, { workers: 1 });
  try {
    await zarr.get(await zarr.open(s, { kind: "array" }));
    assert.equal(handle.pool.mode, "workers");
  } finally {
    console.warn = warn;
    await handle.close();
  }
  assert.deepEqual(warnings, []);
});

function runScript(nodeFlags, body) {
  const script = `
    import * as zarr from "zarrita";
    import * as pkg from ${JSON.stringify(new URL("../../dist/index.js", import.meta.url).href)};
    const api = "register" in pkg ? pkg : { ...pkg, ...(await import(${JSON.stringify(new URL("../../dist/zarrita.js", import.meta.url).href)})) };
    ${body}`;
  return spawnSync(process.execPath, [...nodeFlags, "--input-type=module", "-e", script], { cwd: fileURLToPath(new URL("../..", import.meta.url)), encoding: "utf8", timeout: 20000 });
}

test("workers start under V8 and process-wide flags Node refuses a worker (--max-old-space-size, --expose-gc, --stack-size)", () => {
  const r = runScript(["--max-old-space-size=4096", "--expose-gc", "--stack-size=900", "--no-warnings"], `
    const h = api.register(zarr.registry, { workers: 1 });
    await api.init();
    const s = api.encode({ quality: 90, encoded_color_space: "grayscale" }, new Uint8Array(64), [8, 8]);
    const out = await h.pool.decode({ quality: 90, encoded_color_space: "grayscale" }, s, [8, 8]);
    console.log(h.pool.mode, out.length);
    await h.close();`);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), "workers 64");
});

test("idle workers do not keep Node running (process exits without close())", () => {
  const r = runScript([], `
    const h = api.register(zarr.registry, { workers: 2 });
    await api.init();
    const s = api.encode({ quality: 90, encoded_color_space: "grayscale" }, new Uint8Array(64), [8, 8]);
    const out = await h.pool.decode({ quality: 90, encoded_color_space: "grayscale" }, s, [8, 8]);
    console.log(h.pool.mode, out.length);`);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), "workers 64");
});
