// The JavaScript side of the Python package's tests (tests/python/test_*.py): runs the built
// npm package (dist/) on a job the test writes, so that the two languages' results can be
// compared. Usage: node tests/python/node_side.mjs JOB.json; prints a JSON result.
//
// Jobs ({"op": ...}):
// - messages: {cases: [{config, samples?, shape?, options?}]} → for each, validateConfig's
//   normalised config (no samples) or encode()'s stream length, or the Error's message/kind.
// - encode: {cases: [{config, samples: file, shape, options?, out: file}]}: writes each stream.
// - decode: {cases: [{config, stream: file, shape, out: file}]}: writes each chunk's samples.
// - convert: {data: file, shape, dir, options}: zarr-jpeg convert (js/convert.js) into dir.
// - read: {store: dir, arrays: [{name, out: file}]}: zarrita + register() read each array
//   whole; writes its samples in C order and returns its shape.
// - read-browser: {store: dir, arrays: [{name, expected: file, shape}]}: the same in headless
//   Chromium (zarrita's FetchStore over HTTP, on the main thread and with 2 Web Workers, as
//   tests/js/browser.test.mjs does); returns, per mode, each array's shape and max |got - expected|.
import fs from "node:fs";
import * as zarr from "zarrita";
import FileSystemStore from "@zarrita/storage/fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { init, encode, decode, validateConfig, register } from "../../dist/index.js";

const root = fileURLToPath(new URL("../..", import.meta.url));

const job = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
await init();

function attempt(f) {
  try {
    return { ok: f() };
  } catch (error) {
    return { error: String(error?.message ?? error), kind: error?.kind ?? null };
  }
}

const read = (file) => new Uint8Array(fs.readFileSync(file));
let result;
switch (job.op) {
  case "messages":
    result = job.cases.map((c) =>
      attempt(() =>
        c.samples === undefined
          ? validateConfig(c.config)
          : encode(c.config, read(c.samples), c.shape, c.options).length,
      ),
    );
    break;
  case "encode":
    result = job.cases.map((c) => attempt(() => fs.writeFileSync(c.out, encode(c.config, read(c.samples), c.shape, c.options))));
    break;
  case "decode":
    result = job.cases.map((c) => attempt(() => fs.writeFileSync(c.out, decode(c.config, read(c.stream), c.shape))));
    break;
  case "convert": {
    const { convert } = await import("../../dist/convert.js");
    await convert({ data: read(job.data), shape: job.shape }, job.dir, job.options);
    result = "ok";
    break;
  }
  case "read": {
    register(zarr.registry);
    const store = new FileSystemStore(job.store);
    result = [];
    for (const a of job.arrays) {
      const arr = await zarr.open(zarr.root(store).resolve(a.name), { kind: "array" });
      const got = await zarr.get(arr, arr.shape.map(() => null));
      fs.writeFileSync(a.out, cOrder(got));
      result.push({ shape: got.shape, codecs: arr.codecs?.map?.((c) => c.name) });
    }
    break;
  }
  case "read-browser":
    result = await readInBrowser(job);
    break;
  default:
    throw new Error(`unknown op ${job.op}`);
}
process.stdout.write(JSON.stringify(result));

/** zarrita's result (its native order after a transpose codec) in C order. */
function cOrder({ data, shape, stride }) {
  const c = zarr._zarrita_internal_getStrides(shape, "C");
  if (stride.every((s, i) => s === c[i])) return data;
  const out = new Uint8Array(data.length);
  const idx = new Array(shape.length).fill(0);
  for (let n = 0; n < out.length; n++) {
    let src = 0;
    for (let d = 0; d < idx.length; d++) src += idx[d] * stride[d];
    out[n] = data[src];
    for (let d = idx.length - 1; d >= 0; d--) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

async function readInBrowser(job) {
  const esbuild = await import("esbuild");
  const { startServer } = await import("../js/helpers/server.mjs");
  const { launchBrowser } = await import("../js/helpers/browser.mjs");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "zarr-jpeg-py-browser-"));
  let server, browser;
  try {
    fs.symlinkSync(path.join(root, "dist"), path.join(dir, "pkg"));
    fs.symlinkSync(path.resolve(job.store), path.join(dir, "store"));
    fs.mkdirSync(path.join(dir, "expected"));
    for (const a of job.arrays) fs.symlinkSync(path.resolve(a.expected), path.join(dir, "expected", `${a.name}.bin`));
    await esbuild.build({
      stdin: { contents: 'export * from "zarrita";', resolveDir: root },
      bundle: true, format: "esm", platform: "browser", outfile: path.join(dir, "zarrita.js"), logLevel: "error",
    });
    fs.writeFileSync(path.join(dir, "index.html"), `<!doctype html><meta charset="utf-8"><title>zarr-python store in Chromium</title>
<script type="module">
  import * as zarr from "./zarrita.js";
  const api = await import("./pkg/index.js");
  window.readAll = async (arrays, workers) => {
    const handle = api.register(zarr.registry, { workers });
    const results = [];
    for (const a of arrays) {
      const arr = await zarr.open(new zarr.FetchStore(new URL("store/" + a.name, location.href).href), { kind: "array" });
      const got = await zarr.get(arr, a.shape.map(() => null));
      const expected = new Uint8Array(await (await fetch("expected/" + a.name + ".bin")).arrayBuffer());
      const idx = a.shape.map(() => 0);
      let max = expected.length === got.data.length ? 0 : 255;
      for (let n = 0; n < expected.length; n++) {
        let src = 0;
        for (let d = 0; d < idx.length; d++) src += idx[d] * got.stride[d];
        max = Math.max(max, Math.abs(got.data[src] - expected[n]));
        for (let d = idx.length - 1; d >= 0; d--) { if (++idx[d] < a.shape[d]) break; idx[d] = 0; }
      }
      results.push({ name: a.name, shape: got.shape, max });
    }
    const mode = handle.pool?.mode ?? "main thread";
    await handle.close();
    return { mode, results };
  };
  window.ready = true;
</script>`);
    server = await startServer(dir);
    browser = await launchBrowser();
    const page = await browser.newPage();
    await page.goto(`${server.url}/index.html`);
    await page.waitForFunction(() => window.ready === true, null, { timeout: 20000 });
    const out = [];
    for (const workers of [0, 2]) out.push(await page.evaluate(([a, w]) => window.readAll(a, w), [job.arrays, workers]));
    return { runs: out, consoleErrors: page.consoleErrors.filter((e) => !/status of 404/.test(e)) };
  } finally {
    await browser?.close();
    await server?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
