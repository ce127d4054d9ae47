// TIFFs read in place: JPEG-compressed TIFFs written at test time by libvips (Q85 YCbCr
// with JPEGTables, Q95 RGB with ids R,G,B, grayscale), by tifffile with Aperio-style tiles
// (Photometric RGB, ids 0,1,2, no colour markers, shared JPEGTables) and as an OME-TIFF;
// tifffile writes each one's kerchunk references (Zarr v2, compressor imagecodecs_jpeg),
// which zarrita's ReferenceStore reads over HTTP with Range requests from the test server,
// through register()'s imagecodecs_jpeg codec — on the calling thread, in the worker
// pool, and in headless Chromium. The truth is tifffile's own decode (libjpeg-turbo).
// Then every colorspace_jpeg / colorspace_data combination imagecodecs reads, against
// imagecodecs' own decode, and the Zarr v3 forms of imagecodecs_jpeg.
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
import ReferenceStore from "@zarrita/storage/ref";
import * as pkg from "../../dist/index.js";
import { startServer } from "./helpers/server.mjs";
import { launchBrowser } from "./helpers/browser.mjs";
import { PYTHON } from "./helpers/python.mjs";

const api = "register" in pkg ? pkg : { ...pkg, ...(await import("../../dist/zarrita.js")) };
const root = fileURLToPath(new URL("../..", import.meta.url));
// Max |ours − libjpeg-turbo| per sample: IDCT rounding and chroma upsampling differ
// slightly between decoders; a missed or extra colour transform is off by tens to 170.
const TOLERANCE = 4;

let dir, server, manifest;

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "zarr-jpeg-tiff-refs-"));
  server = await startServer(dir);
  const py = spawnSync(PYTHON, [path.join(root, "tests/python/write_tiff_references.py"), dir, server.url], { encoding: "utf8", timeout: 300000 });
  if (py.status !== 0) throw new Error(`write_tiff_references.py failed:\n${py.stderr || py.error}`);
  manifest = JSON.parse(fs.readFileSync(path.join(dir, "manifest.json"), "utf8"));
});

after(async () => {
  await server?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** Max |a − b| over zarrita's result (any strides) against C-order `expected`. */
function maxDiff(got, expected, shape) {
  const idx = shape.map(() => 0);
  let max = 0;
  for (let n = 0; n < expected.length; n++) {
    let src = 0;
    for (let d = 0; d < idx.length; d++) src += idx[d] * got.stride[d];
    max = Math.max(max, Math.abs(got.data[src] - expected[n]));
    for (let d = idx.length - 1; d >= 0; d--) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return max;
}

async function readReferences(tiff) {
  const refs = JSON.parse(fs.readFileSync(path.join(dir, tiff.refs), "utf8"));
  const store = ReferenceStore.fromSpec(refs);
  const arr = await zarr.open.v2(store, { kind: "array" });
  return zarr.get(arr, tiff.shape.map(() => null));
}

for (const workers of [0, 2]) {
  test(`tifffile references over HTTP (Range requests), ${workers ? "worker pool" : "calling thread"}: every tile within ±${TOLERANCE} of tifffile's decode`, async (t) => {
    const handle = api.register(zarr.registry, { workers });
    try {
      for (const tiff of manifest.tiffs) {
        const got = await readReferences(tiff);
        assert.deepEqual(got.shape, tiff.shape, tiff.name);
        const max = maxDiff(got, fs.readFileSync(path.join(dir, tiff.truth)), tiff.shape);
        t.diagnostic(`${tiff.name} (${tiff.writer}; colorspace_jpeg ${tiff.compressor.colorspace_jpeg}): max diff ${max}`);
        assert.ok(max <= TOLERANCE, `${tiff.name}: max diff ${max} > ${TOLERANCE}`);
      }
      if (workers) assert.equal(handle.pool.mode, "workers");
    } finally {
      await handle.close();
    }
  });
}

test("the Aperio-style references say colorspace_jpeg RGB: ignoring it (decoding by the markers) is what gave wrong colours", async () => {
  const aperio = manifest.tiffs.find((t) => t.name === "aperio");
  assert.equal(aperio.photometric, 2);
  assert.equal(aperio.compressor.colorspace_jpeg, 2);
  api.register(zarr.registry);
  const refs = JSON.parse(fs.readFileSync(path.join(dir, aperio.refs), "utf8"));
  refs[".zarray"] = JSON.stringify({ ...JSON.parse(refs[".zarray"]), compressor: { ...aperio.compressor, colorspace_jpeg: null } });
  const got = await zarr.get(await zarr.open.v2(ReferenceStore.fromSpec(refs), { kind: "array" }), [null, null, null]);
  assert.ok(maxDiff(got, fs.readFileSync(path.join(dir, aperio.truth)), aperio.shape) > 40);
});

test("every colorspace_jpeg / colorspace_data combination imagecodecs reads: imagecodecs' samples within the tolerance, or refused by name", async (t) => {
  api.register(zarr.registry);
  const counts = { same: 0, refusedLikeImagecodecs: 0, refusedHere: 0 };
  for (const c of manifest.combinations) {
    const label = `${c.stream}: colorspace_jpeg ${c.compressor.colorspace_jpeg}, colorspace_data ${c.compressor.colorspace_data}`;
    let got, error;
    try {
      const arr = await zarr.open.v2(new FileSystemStore(path.join(dir, c.path)), { kind: "array" });
      got = await zarr.get(arr, arr.shape.map(() => null));
    } catch (e) {
      error = e;
    }
    if (c.error) {
      // imagecodecs refuses: so must this codec, by name, never returning samples
      assert.ok(error, `${label}: imagecodecs refuses (${c.error}) but samples were returned`);
      assert.ok(error.cause?.kind ?? error.kind, `${label}: refused without a kind: ${error.message}`);
      counts.refusedLikeImagecodecs++;
      continue;
    }
    if (error) {
      // Refused here though imagecodecs decodes: only the conversions this decoder does not
      // make (one component out of three, or three out of one), each by name.
      const message = String(error.cause?.message ?? error.message);
      assert.match(message, /output colour space (grayscale|rgb|ycbcr) has (1 component|3 components) but the chunk shape|the stream has [13] components? but the chunk shape expects [13]/, `${label}: ${message}`);
      counts.refusedHere++;
      continue;
    }
    const max = maxDiff(got, fs.readFileSync(path.join(dir, c.truth)), c.shape);
    assert.ok(max <= TOLERANCE, `${label}: max diff ${max}`);
    counts.same++;
  }
  t.diagnostic(JSON.stringify(counts));
  assert.ok(counts.same >= 20, JSON.stringify(counts));
});

test("configurations imagecodecs refuses, or that cannot be honoured, are refused by name", async () => {
  const Codec = await api.register(zarr.registry) && (await zarr.registry.get("imagecodecs_jpeg")());
  const meta = { dataType: "uint8", shape: [16, 16, 3], codecs: [{ name: "bytes" }, { name: "imagecodecs_jpeg" }] };
  const refused = (configuration, pattern, shape = meta.shape) =>
    assert.throws(() => Codec.fromConfig(configuration, { ...meta, shape }), (e) => e.kind === "InvalidConfiguration" && pattern.test(e.message), JSON.stringify(configuration));
  refused({ colorspace_jpeg: "CMYK" }, /colorspace_jpeg "CMYK" is not supported: CMYK, YCCK and four-component outputs/);
  refused({ colorspace_data: 5 }, /colorspace_data 5 is not supported: CMYK, YCCK/);
  refused({ colorspace_data: "RGBA" }, /colorspace_data "RGBA" is not supported/);
  refused({ colorspace_jpeg: "CIELAB" }, /colorspace_jpeg "CIELAB" is not supported: it is not a colour space this decoder can honour/);
  refused({ colorspace_jpeg: "RGB", colorspace_data: "YCbCr" }, /colorspace_jpeg RGB cannot be decoded to YCbCr/);
  refused({ colorspace_data: "GRAY" }, /the output colour space grayscale has 1 component but the chunk shape \[16,16,3\] holds 3/);
  refused({ colorspace_jpeg: "RGB" }, /the output colour space rgb has 3 components but the chunk shape \[16,16\] holds 1/, [16, 16]);
  refused({ fancyupsampling: false }, /fancyupsampling false/);
  refused({ colorspace_jpeg: { name: "RGB" } }, /colorspace_jpeg must be a colour space name or libjpeg J_COLOR_SPACE number/);
});

test("Zarr v3 forms: imagecodecs' array → bytes codec and virtual-tiff's bytes → bytes codec after `bytes`", async (t) => {
  api.register(zarr.registry);
  for (const a of manifest.v3) {
    const arr = await zarr.open.v3(new FileSystemStore(path.join(dir, a.path)), { kind: "array" });
    const got = await zarr.get(arr, a.shape.map(() => null));
    const max = maxDiff(got, fs.readFileSync(path.join(dir, a.truth)), a.shape);
    t.diagnostic(`${a.path}: max diff ${max}`);
    assert.ok(max <= TOLERANCE, `${a.path}: max diff ${max}`);
  }
});

test("headless Chromium: ReferenceStore over HTTP, on the page's thread and in Web Workers", async () => {
  fs.symlinkSync(path.join(root, "dist"), path.join(dir, "pkg"));
  await esbuild.build({
    stdin: { contents: 'export * from "zarrita"; export { default as ReferenceStore } from "@zarrita/storage/ref";', resolveDir: root },
    bundle: true, format: "esm", platform: "browser", outfile: path.join(dir, "vendor.js"), logLevel: "error",
  });
  fs.writeFileSync(path.join(dir, "index.html"), `<!doctype html><meta charset="utf-8"><title>references</title><link rel="icon" href="data:,">
<script type="module">
  import * as zarr from "./vendor.js";
  const pkg = await import("./pkg/index.js");
  const api = pkg.register ? pkg : await import("./pkg/zarrita.js");
  window.read = async (tiffs, workers) => {
    const handle = api.register(zarr.registry, { workers });
    const out = [];
    for (const t of tiffs) {
      const store = await zarr.ReferenceStore.fromUrl(new URL(t.refs, location.href).href);
      const got = await zarr.get(await zarr.open.v2(store, { kind: "array" }), t.shape.map(() => null));
      const truth = new Uint8Array(await (await fetch(t.truth)).arrayBuffer());
      let max = 0;
      for (let i = 0; i < truth.length; i++) max = Math.max(max, Math.abs(got.data[i] - truth[i]));
      out.push({ name: t.name, max });
    }
    const mode = handle.pool?.mode ?? "main thread";
    await handle.close();
    return { mode, out };
  };
  window.ready = true;
</script>`);
  const browser = await launchBrowser();
  try {
    const page = await browser.newPage();
    await page.goto(`${server.url}/index.html`);
    await page.waitForFunction(() => window.ready === true, null, { timeout: 20000 });
    for (const workers of [0, 2]) {
      const { mode, out } = await page.evaluate(([t, w]) => window.read(t, w), [manifest.tiffs, workers]);
      assert.equal(mode, workers ? "workers" : "main thread");
      for (const r of out) assert.ok(r.max <= TOLERANCE, `${r.name} (${mode}): max diff ${r.max}`);
    }
    assert.deepEqual(page.consoleErrors, [], page.consoleErrors.join("\n"));
  } finally {
    await browser.close();
  }
});
