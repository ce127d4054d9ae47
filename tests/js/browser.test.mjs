// Over HTTP in headless Chromium: stores written here (zarrita + this package, on disk)
// and by zarr-python/Pillow (sharded → Range requests) are read with zarrita's FetchStore
// in a page that imports the built package with no bundler, on the main thread and in a
// pool of Web Workers.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";
import * as zarr from "zarrita";
import FileSystemStore from "@zarrita/storage/fs";
import * as pkg from "../../dist/index.js";
import { startServer } from "./helpers/server.mjs";
import { launchBrowser } from "./helpers/browser.mjs";
import { PYTHON } from "./helpers/python.mjs";

const api = pkg;
const root = fileURLToPath(new URL("../..", import.meta.url));
const PILLOW_TOLERANCE = 3; // measured in python-writer.test.mjs

const CASES = [
  ["gray", [50, 70], [32, 32], { quality: 90, encoded_color_space: "grayscale" }],
  ["ycbcr420", [50, 70, 3], [32, 32, 3], { quality: 90, encoded_color_space: "ycbcr", subsampling: [[2, 2], [1, 1], [1, 1]] }],
  ["rgb", [50, 70, 3], [32, 32, 3], { quality: 90, encoded_color_space: "rgb" }],
];

let dir, server, browser, page;
const arrays = []; // {path, shape, tolerance}

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "zarr-jpeg-browser-"));
  fs.symlinkSync(path.join(root, "dist"), path.join(dir, "pkg"));
  fs.mkdirSync(path.join(dir, "vendor"));
  await esbuild.build({
    stdin: { contents: 'export * from "zarrita";', resolveDir: root },
    bundle: true, format: "esm", platform: "browser", outfile: path.join(dir, "vendor", "zarrita.js"), logLevel: "error",
  });
  // Written by this package through zarrita on disk; expected = what zarrita reads back in Node.
  const handle = api.register(zarr.registry);
  for (const [name, shape, chunkShape, config] of CASES) {
    const location = zarr.root(new FileSystemStore(path.join(dir, "data", name)));
    const arr = await zarr.create(location, { shape, chunkShape, dtype: "uint8", codecs: [{ name: "jpeg", configuration: config }] });
    const data = Uint8Array.from({ length: shape.reduce((a, b) => a * b) }, (_, i) => (i % 97) + ((i / 300) | 0) % 120);
    await zarr.set(arr, null, { data, shape, stride: zarr._zarrita_internal_getStrides(shape, "C") });
    const back = await zarr.get(await zarr.open(location, { kind: "array" }));
    fs.writeFileSync(path.join(dir, "data", `${name}.bin`), back.data);
    arrays.push({ path: `data/${name}`, expected: `data/${name}.bin`, shape, tolerance: 0 });
  }
  await handle.close();
  // Written by zarr-python + Pillow (if available).
  const py = spawnSync(PYTHON, [path.join(root, "tests/python/write_jpeg_store.py"), path.join(dir, "py")], { encoding: "utf8", timeout: 120000 });
  if (py.status === 0) {
    for (const a of JSON.parse(fs.readFileSync(path.join(dir, "py", "manifest.json"), "utf8")).arrays) {
      arrays.push({ path: `py/store/${a.name}`, expected: `py/expected/${a.name}.bin`, shape: a.shape, tolerance: PILLOW_TOLERANCE });
    }
  } else {
    console.warn(`python writer unavailable, its arrays are not read here: ${py.stderr || py.error}`);
  }
  fs.writeFileSync(path.join(dir, "index.html"), `<!doctype html><meta charset="utf-8"><title>zarr-jpeg browser test</title>
<script type="module">
  import * as zarr from "./vendor/zarrita.js";
  const pkg = await import("./pkg/index.js");
  const api = pkg;
  window.readAll = async (arrays, workers) => {
    const handle = api.register(zarr.registry, { workers });
    const results = [];
    for (const a of arrays) {
      const arr = await zarr.open(new zarr.FetchStore(new URL(a.path, location.href).href), { kind: "array" });
      const got = await zarr.get(arr, a.shape.map(() => null));
      const expected = new Uint8Array(await (await fetch(a.expected)).arrayBuffer());
      // walk zarrita's strides (transpose layouts come back in native order) in C order
      const idx = a.shape.map(() => 0);
      let max = 0;
      for (let n = 0; n < expected.length; n++) {
        let src = 0;
        for (let d = 0; d < idx.length; d++) src += idx[d] * got.stride[d];
        max = Math.max(max, Math.abs(got.data[src] - expected[n]));
        for (let d = idx.length - 1; d >= 0; d--) { if (++idx[d] < a.shape[d]) break; idx[d] = 0; }
      }
      results.push({ path: a.path, shape: got.shape, max });
    }
    const mode = handle.pool?.mode ?? "main thread";
    await handle.close();
    return { mode, results };
  };
  // zarr.set of each case into a Map store, in the page's thread and through a pool of Web
  // Workers: the chunks must be the same bytes.
  window.writeBoth = async (cases) => {
    const write = async (c, workers) => {
      const handle = api.register(zarr.registry, { workers });
      const store = new Map();
      const arr = await zarr.create(store, { shape: c.shape, chunkShape: c.chunkShape, dtype: "uint8", codecs: [{ name: "jpeg", configuration: c.config }] });
      const data = Uint8Array.from({ length: c.shape.reduce((a, b) => a * b) }, (_, i) => (i * 7 + ((i / 211) | 0)) % 256);
      const strides = c.shape.map((_, d) => c.shape.slice(d + 1).reduce((a, b) => a * b, 1));
      await zarr.set(arr, null, { data, shape: c.shape, stride: strides });
      const result = { store, mode: handle.pool?.mode ?? "main thread", encodedHere: handle.pool?.stats.encodedHere };
      await handle.close();
      return result;
    };
    const out = [];
    for (const c of cases) {
      const [plain, pooled] = [await write(c, 0), await write(c, 2)];
      const differing = [...plain.store].filter(([k, v]) => !(pooled.store.get(k)?.length === v.length && pooled.store.get(k).every((b, i) => b === v[i]))).map(([k]) => k);
      out.push({ name: c.name, chunks: plain.store.size, keys: pooled.store.size, differing, mode: pooled.mode, encodedHere: pooled.encodedHere });
    }
    return out;
  };
  window.ready = true;
</script>`);
  server = await startServer(dir);
  browser = await launchBrowser();
  page = await browser.newPage();
  await page.goto(`${server.url}/index.html`);
  await page.waitForFunction(() => window.ready === true, null, { timeout: 20000 });
});

after(async () => {
  await browser?.close();
  await server?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

for (const workers of [0, 2]) {
  test(`FetchStore over HTTP in Chromium, ${workers ? `${workers} Web Workers` : "main thread"}: this package's and zarr-python/Pillow's arrays`, async (t) => {
    const { mode, results } = await page.evaluate(([a, w]) => window.readAll(a, w), [arrays, workers]);
    assert.equal(mode, workers ? "workers" : "main thread");
    assert.equal(results.length, arrays.length);
    for (const [i, r] of results.entries()) {
      assert.deepEqual(r.shape, arrays[i].shape, r.path);
      assert.ok(r.max <= arrays[i].tolerance, `${r.path}: max diff ${r.max} > ${arrays[i].tolerance}`);
      t.diagnostic(`${r.path}: max diff ${r.max}`);
    }
    // Missing shards are 404s by design (zarrita reads them as the fill value); nothing else may be logged.
    assert.deepEqual(page.consoleErrors.filter((e) => !/status of 404/.test(e)), []);
    page.consoleErrors.length = 0;
  });
}

test("zarr.set through a pool of 2 Web Workers in Chromium writes exactly the chunks the page's thread writes", async () => {
  const cases = CASES.map(([name, , chunkShape, config]) => ({ name, shape: name === "gray" ? [150, 130] : [150, 130, 3], chunkShape, config }));
  const results = await page.evaluate((c) => window.writeBoth(c), cases);
  for (const r of results) {
    assert.equal(r.mode, "workers", r.name);
    assert.equal(r.encodedHere, 0, `${r.name}: every chunk was encoded in a worker`);
    assert.ok(r.chunks > 1, r.name);
    assert.equal(r.keys, r.chunks, r.name);
    assert.deepEqual(r.differing, [], `${r.name}: chunks that differ`);
  }
  assert.deepEqual(page.consoleErrors.filter((e) => !/status of 404/.test(e)), []);
});
