#!/usr/bin/env node
// `npm run bench` — zarr-jpeg against every alternative, in headless Chromium (Debian's, via
// playwright-core), plus native libjpeg-turbo (tjbench), payload sizes and rate–distortion.
//
//   node bench/run.mjs            full run (2048², 512², 256²; several minutes)
//   node bench/run.mjs --quick    smoke run (256² only, few reps; < ~60 s)
//   options: --reps N  --only <substring of case id>  --no-tjbench  --no-rd  --no-zarrita
//            --out DIR (default bench/results)  --keep-work (keep the inputs, streams, RD files)
//
// Writes bench/results/results.json, bench/results/chart.svg and prints tables.
// End-to-end zarrita read: bench/zarrita-blocking.mjs (another helper's script) runs as a child
// process in full runs (see zarritaHook); results.json `zarrita` holds its output, or why it
// was skipped. `--quick` skips it unless `--zarrita` is given.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import crypto from "node:crypto";
import { execFileSync } from "node:child_process";
import { fileURLToPath, pathToFileURL } from "node:url";
import * as esbuild from "esbuild";
import { loadPng, tile, centreCrop, toNetpbm } from "./lib/images.mjs";
import { buildNativeEncoder, nativeEncode, tjbenchVersion, tjDecode, tjEncode } from "./lib/tjbench.mjs";
import { printTables, renderSvg, markdownTables } from "./lib/report.mjs";
import { rateDistortion as rateDistortionCurves } from "./lib/rd.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "..");
const args = process.argv.slice(2);
const resultsDir = path.resolve(args.includes("--out") ? args[args.indexOf("--out") + 1] : path.join(here, "results"));
// Each run works in its own directory (served to the page, so under the repo root) and removes
// it at the end (--keep-work keeps it): concurrent runs, e.g. the smoke test during a full run,
// must not delete each other's inputs.
const workDir = path.join(here, "results", ".runs", `${process.pid}-${Date.now()}`);
const workUrl = "/" + path.relative(root, workDir).split(path.sep).join("/");
// dist/ is shared with builds in progress: the run measures a private copy taken at the start.
const distDir = path.join(workDir, "dist");
const scalarDistDir = path.join(workDir, "dist-scalar");
const readerDistDir = path.join(workDir, "dist-reader");

async function snapshotDist() {
  const src = path.join(root, "dist");
  for (let attempt = 0; ; attempt++) {
    try {
      if (!fs.existsSync(path.join(src, "index.js")) || !fs.readdirSync(path.join(src, "wasm")).some((f) => f.endsWith(".wasm"))) {
        throw new Error("dist/ incomplete");
      }
      fs.rmSync(distDir, { recursive: true, force: true });
      fs.cpSync(src, distDir, { recursive: true });
      // A second copy is a second module graph, so the page can load the scalar fallback
      // beside the SIMD module ("ours (scalar)").
      fs.rmSync(scalarDistDir, { recursive: true, force: true });
      fs.cpSync(distDir, scalarDistDir, { recursive: true });
      // A third, loaded with initDecoder() only: the decode-only module viewers run, which
      // decodes ("ours", "ours (decodeInto)"); the whole codec (init()) has its own IDCT.
      fs.rmSync(readerDistDir, { recursive: true, force: true });
      fs.cpSync(distDir, readerDistDir, { recursive: true });
      // a build may have been rewriting files mid-copy: check the copy loads
      const probe = fs.readFileSync(path.join(distDir, "index.js"), "utf8");
      if (!probe.includes("export")) throw new Error("dist/index.js empty");
      // A build of some variants only (`node scripts/build.mjs --variants simd`) leaves out
      // modules the loader imports, which the page's bundler would report far from the cause.
      const loader = fs.readFileSync(path.join(distDir, "loader.js"), "utf8");
      const missing = [...loader.matchAll(/import\("\.\/(wasm\/[^"]+)"\)/g)].map((m) => m[1]).filter((f) => !fs.existsSync(path.join(distDir, f)));
      if (missing.length > 0) {
        throw Object.assign(new Error(`dist/ lacks ${missing.join(", ")} (a build of some variants only?): run \`npm run build\` first`), { final: true });
      }
      return;
    } catch (e) {
      if (e.final) throw e;
      if (attempt >= 30) throw new Error(`dist/ missing or incomplete (${e.message}): run \`npm run build\` first`);
      if (attempt === 0) log("waiting for dist/ (a build may be in progress)…");
      await new Promise((r) => setTimeout(r, 2000));
    }
  }
}

const flag = (f) => args.includes(f);
const opt = (f, d) => (args.includes(f) ? args[args.indexOf(f) + 1] : d);
const quick = flag("--quick");

const timing = quick
  ? { reps: Number(opt("--reps", 3)), warmupMs: 40, minSampleMs: 8 }
  : { reps: Number(opt("--reps", 9)), warmupMs: 300, minSampleMs: 40 };
const tjTiming = quick ? { benchtime: 0.15, warmup: 0.05, runs: 1 } : { benchtime: 0.6, warmup: 0.3, runs: 3 };
const sizes = quick ? [256] : [2048, 512, 256];
const rdQualities = quick ? [50, 70, 90] : [50, 55, 60, 65, 70, 75, 80, 85, 90, 95];
const rdSize = quick ? 512 : 2048;

const DECODERS = ["ours", "ours (scalar)", "ours (decodeInto)", "cornerstone", "jsquash", "jpeg-js", "ImageDecoder", "createImageBitmap+canvas", "tjbench"];
// The same decoders on our stream rewritten without restart intervals (`withoutRestarts`).
const PLAIN_DECODERS = ["ours", "cornerstone", "ImageDecoder", "tjbench"];
const ENCODERS = [
  "ours",
  "ours (encodeInto)",
  "ours (scalar)",
  "ours (trellis)",
  "ours (flat, trellis)",
  "cornerstone",
  "jsquash (defaults)",
  "jsquash (baseline)",
  "jpeg-js",
  "OffscreenCanvas.convertToBlob",
  "tjbench",
  "libjpeg-turbo (optimized)",
];

const log = (...a) => console.error(...a);
const t0 = Date.now();
const loadAtStart = os.loadavg().map((x) => Number(x.toFixed(2)));

function oursConfig(mode) {
  return {
    "420": { quality: 90, encoded_color_space: "ycbcr", subsampling: [[2, 2], [1, 1], [1, 1]] },
    "444": { quality: 90, encoded_color_space: "ycbcr", subsampling: [[1, 1], [1, 1], [1, 1]] },
    rgb: { quality: 90, encoded_color_space: "rgb" },
    gray: { quality: 90, encoded_color_space: "grayscale" },
  }[mode];
}
const shapeOf = (img) => (img.channels === 3 ? [img.height, img.width, 3] : [img.height, img.width]);

function gitDescribe() {
  try {
    const head = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: root, encoding: "utf8", stdio: "pipe" }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--", "src", "js", "Cargo.toml", "Cargo.lock", "scripts"], { cwd: root, encoding: "utf8", stdio: "pipe" }).trim();
    return dirty ? `${head} + uncommitted changes in src/js/Cargo/scripts` : head;
  } catch {
    return null;
  }
}

// dist/ is a build product shared with other work in progress: record which wasm was measured.
function wasmIdentity() {
  const dir = path.join(distDir, "wasm");
  return fs.readdirSync(dir).filter((f) => f.endsWith(".wasm")).map((f) => {
    const buf = fs.readFileSync(path.join(dir, f));
    return { file: `dist/wasm/${f}`, bytes: buf.length, sha256: crypto.createHash("sha256").update(buf).digest("hex").slice(0, 16), mtime: fs.statSync(path.join(dir, f)).mtime.toISOString() };
  });
}

/**
 * Our stream `file` without its restart intervals: `jpegtran -optimize` rewrites the same
 * coefficients with optimal Huffman tables (as ours) and no DRI. Checked with djpeg: the
 * same samples. `{ file, bytes }`, or `{ skipped }` (no jpegtran, no DRI to remove).
 */
function withoutRestarts(file, out) {
  if (!fs.readFileSync(file).includes(Buffer.from([0xff, 0xdd]))) return { skipped: "the stream has no restart intervals" };
  try {
    execFileSync("jpegtran", ["-optimize", "-copy", "all", "-outfile", out, file], { stdio: "pipe" });
  } catch (e) {
    return { skipped: `jpegtran: ${String(e.stderr ?? e).trim()} (apt-get install libjpeg-turbo-progs)` };
  }
  const samples = (f) => execFileSync("djpeg", [f], { maxBuffer: 1 << 28 });
  if (fs.readFileSync(out).includes(Buffer.from([0xff, 0xdd])) || !samples(file).equals(samples(out))) {
    throw new Error(`${out}: jpegtran did not give the same samples without restart intervals`);
  }
  return { file: out, bytes: fs.statSync(out).size };
}

function cpuModel() {
  const m = /model name\s*:\s*(.*)/.exec(fs.readFileSync("/proc/cpuinfo", "utf8"));
  return m ? m[1].trim() : "unknown";
}

async function main() {
  fs.rmSync(workDir, { recursive: true, force: true });
  fs.mkdirSync(workDir, { recursive: true });
  await snapshotDist();
  const ours = await import(pathToFileURL(path.join(distDir, "index.js")).href);
  await ours.init();

  // ---- inputs ----
  const ihc = loadPng(path.join(root, "samples/ihc.png"), 3);
  const cell = loadPng(path.join(root, "samples/cell.png"), 1);
  const make = (img, size) => (size === 2048 ? tile(img, size) : centreCrop(img, size));
  const cases = [];
  const only = opt("--only", null);
  for (const size of sizes) {
    const colour = make(ihc, size);
    const gray = make(cell, size);
    for (const [img, name, modes] of [
      [colour, "ihc", ["420", "444", "rgb"]],
      [gray, "cell", ["gray"]],
    ]) {
      const rawFile = `${name}-${size}.raw`;
      fs.writeFileSync(path.join(workDir, rawFile), img.data);
      fs.writeFileSync(path.join(workDir, `${name}-${size}.${img.channels === 3 ? "ppm" : "pgm"}`), toNetpbm(img));
      for (const mode of modes) {
        const id = `${name}-${size}-${mode}`;
        if (only && !id.includes(only)) continue;
        const jpeg = ours.encode(oursConfig(mode), img.data, shapeOf(img));
        fs.writeFileSync(path.join(workDir, `${id}.jpg`), jpeg);
        const plain = withoutRestarts(path.join(workDir, `${id}.jpg`), path.join(workDir, `${id}-plain.jpg`));
        cases.push({
          id,
          image: name,
          size,
          mode,
          width: img.width,
          height: img.height,
          channels: img.channels,
          jpegBytes: jpeg.length,
          rawUrl: `${workUrl}/${rawFile}`,
          jpegUrl: `${workUrl}/${id}.jpg`,
          ...(plain.file ? { plainJpegUrl: `${workUrl}/${id}-plain.jpg`, plainJpegFile: plain.file, plainJpegBytes: plain.bytes } : { plainJpeg: plain }),
          netpbm: path.join(workDir, `${name}-${size}.${img.channels === 3 ? "ppm" : "pgm"}`),
          jpegFile: path.join(workDir, `${id}.jpg`),
        });
      }
    }
  }

  // ---- browser ----
  await esbuild.build({
    plugins: [underTest],
    entryPoints: [path.join(here, "page.js")],
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "chrome120",
    outfile: path.join(workDir, "page.bundle.js"),
    external: ["fs", "path", "url", "module", "crypto", "worker_threads"],
    logLevel: "warning",
  });
  const { startServer } = await import("../tests/js/helpers/server.mjs");
  const { launchBrowser } = await import("../tests/js/helpers/browser.mjs");
  const tjVersion = flag("--no-tjbench") ? null : tjbenchVersion();
  const server = await startServer(root);
  // gc() in the page: each timed sample starts with a collected heap (bench/page.js).
  const browser = await launchBrowser({ extraArgs: ["--js-flags=--expose-gc"] });
  let env;
  try {
    const page = await browser.newPage();
    fs.writeFileSync(path.join(workDir, "page.html"), '<!doctype html><meta charset="utf-8"><title>zarr-jpeg benchmark</title><script type="module" src="page.bundle.js"></script>\n');
    await page.goto(`${server.url}${workUrl}/page.html`);
    await page.waitForFunction(() => window.benchReady === true, null, { timeout: 30000 });
    env = await page.evaluate(() => window.bench.setup());
    env.chromium = browser.context.browser()?.version() ?? null;
    for (const c of cases) {
      const spec = { id: c.id, width: c.width, height: c.height, channels: c.channels, mode: c.mode, rawUrl: c.rawUrl, jpegUrl: c.jpegUrl, plainJpegUrl: c.plainJpegUrl };
      const r = await page.evaluate(([s, t]) => window.bench.runCase(s, t), [spec, timing]);
      c.decode = r.decode;
      c.encode = r.encode;
      // The native ceiling runs right after the browser candidates of the same case, so the
      // ratio to it is taken under the same machine load.
      nativeCeiling(c);
      const f = (x) => (x?.mps ? x.mps.toFixed(1) : x?.unsupported ? "n/a" : "ERR");
      log(`${c.id}: decode ours ${f(c.decode.ours)} cs ${f(c.decode.cornerstone)} ID ${f(c.decode.ImageDecoder)} tj ${f(c.decode.tjbench)} | encode ours ${f(c.encode.ours)} cs ${f(c.encode.cornerstone)} tj ${f(c.encode.tjbench)} MP/s  [${((Date.now() - t0) / 1000).toFixed(0)} s]`);
    }
    if (page.consoleErrors.length) env.consoleErrors = page.consoleErrors.slice(0, 20);
  } finally {
    await browser.close();
    await server.close();
  }

  // ---- ratios (same run) ----
  for (const c of cases) {
    const r = (a, b) => (a?.mps && b?.mps ? Number((a.mps / b.mps).toFixed(3)) : null);
    c.ratios = {
      decodeSimdGain: r(c.decode.ours, c.decode["ours (scalar)"]),
      decodeVsCornerstone: r(c.decode.ours, c.decode.cornerstone),
      decodeVsImageDecoder: r(c.decode.ours, c.decode.ImageDecoder),
      decodeVsTjbench: r(c.decode.ours, c.decode.tjbench),
      // tjbench decompresses into one buffer allocated before its timing loop, so the
      // like-for-like figure is decodeInto (a reused buffer), not decode (a new array)
      decodeIntoVsTjbench: r(c.decode["ours (decodeInto)"], c.decode.tjbench),
      encodeSimdGain: r(c.encode.ours, c.encode["ours (scalar)"]),
      encodeVsCornerstone: r(c.encode.ours, c.encode.cornerstone),
      encodeVsTjbench: r(c.encode.ours, c.encode.tjbench),
      // tjbench compresses into a buffer allocated before its timing loop too
      encodeIntoVsTjbench: r(c.encode["ours (encodeInto)"], c.encode.tjbench),
      // the same output as ours (optimised Huffman tables), which tjbench cannot ask for
      encodeVsNativeOptimized: r(c.encode.ours, c.encode["libjpeg-turbo (optimized)"]),
      // the two encoders that trade speed for bytes at equal PSNR (trellis quantisation)
      flatTrellisVsMozjpegBaseline: r(c.encode["ours (flat, trellis)"], c.encode["jsquash (baseline)"]),
    };
    // each decoder on our stream ÷ on the same stream without restart intervals
    c.restartIntervalEffect = Object.fromEntries(PLAIN_DECODERS.map((d) => [d, r(c.decode[d], c.decode[`${d} (no restarts)`])]));
    delete c.netpbm;
    delete c.jpegFile;
    delete c.plainJpegFile;
  }

  const payload = await payloadSizes();
  const rd = flag("--no-rd") ? { skipped: "--no-rd" } : await rateDistortion(ours, make(ihc, rdSize));
  log(`rd done [${((Date.now() - t0) / 1000).toFixed(0)} s]`);
  const zarrita = zarritaHook();
  log(`zarrita done [${((Date.now() - t0) / 1000).toFixed(0)} s]`);

  const results = {
    meta: {
      date: new Date().toISOString(),
      quick,
      nproc: os.availableParallelism?.() ?? os.cpus().length,
      loadavgAtStart: loadAtStart,
      loadavgAtEnd: os.loadavg().map((x) => Number(x.toFixed(2))),
      cpu: cpuModel(),
      node: process.version,
      browser: env,
      tjbench: tjVersion,
      git: gitDescribe(),
      oursWasm: wasmIdentity(),
      timing,
      tjTiming,
      quality: 90,
      notes: [
        "MP/s = megapixels (width*height) per second; median of `timing.reps` interleaved samples after warm-up.",
        "Decoders all read the same stream, written by our encoder; encoders all read the same pixels.",
        "RGB->RGBA input conversion for jsquash/jpeg-js/canvas is outside the timed region; RGBA outputs are not converted back.",
        "cornerstone reuses one JPEGDecoder/JPEGEncoder instance; its input copy-in and output copy-out are timed.",
        "tjbench: Debian libjpeg-turbo, RGB pixel format (gray encode converts RGB->Y inside the timing).",
      ],
    },
    candidates: { decode: DECODERS, encode: ENCODERS, plainDecode: PLAIN_DECODERS },
    cases,
    payload,
    rd,
    zarrita,
    elapsedSeconds: (Date.now() - t0) / 1000,
  };
  fs.mkdirSync(resultsDir, { recursive: true });
  const write = (name, text) => {
    const tmp = path.join(resultsDir, `.${name}.${process.pid}`);
    fs.writeFileSync(tmp, text);
    fs.renameSync(tmp, path.join(resultsDir, name));
  };
  write("results.json", JSON.stringify(results, null, 1));
  write("chart.svg", renderSvg(results));
  write("table.md", markdownTables(results));
  if (!flag("--keep-work")) fs.rmSync(workDir, { recursive: true, force: true });
  printTables(results);
  log(`wrote ${path.relative(root, resultsDir)}/results.json, chart.svg, table.md in ${results.elapsedSeconds.toFixed(0)} s`);
}

// Native libjpeg-turbo: tjbench, and libjpeg-turbo's API with our encoder's settings
// (bench/native/encode.c), `tjTiming.runs` runs, median (each run itself averages over benchtime).
// compiled once per run: { binary } or, when gcc or jpeglib.h is missing, { error }
let nativeEncoder = null;
function nativeCeiling(c) {
  const tjVersion = flag("--no-tjbench") ? null : tjbenchVersion();
  const many = (fn) => {
    const runs = [];
    for (let i = 0; i < tjTiming.runs; i++) runs.push(fn());
    const s = runs.map((r) => r.mps).sort((x, y) => x - y);
    return { ...runs[0], mps: s[s.length >> 1], runsMps: runs.map((r) => r.mps) };
  };
  if (!tjVersion) {
    const why = flag("--no-tjbench") ? "skipped (--no-tjbench)" : "tjbench not installed (apt-get install libjpeg-turbo-progs)";
    c.decode.tjbench = { error: why };
    c.encode.tjbench = { error: why };
    return;
  }
  const decodeFile = (file) => {
    try {
      return many(() => tjDecode(file, tjTiming));
    } catch (e) {
      return { error: String(e.stderr ?? e) };
    }
  };
  c.decode.tjbench = decodeFile(c.jpegFile);
  if (c.plainJpegFile) c.decode["tjbench (no restarts)"] = decodeFile(c.plainJpegFile);
  if (!nativeEncoder) {
    try {
      nativeEncoder = { binary: buildNativeEncoder(workDir) };
    } catch (e) {
      nativeEncoder = { error: `bench/native/encode.c: ${String(e.stderr ?? e).trim()} (needs gcc and libjpeg62-turbo-dev)` };
    }
  }
  try {
    c.encode["libjpeg-turbo (optimized)"] = nativeEncoder.error
      ? { error: nativeEncoder.error }
      : many(() => nativeEncode(nativeEncoder.binary, c.netpbm, c.mode, tjTiming));
  } catch (e) {
    c.encode["libjpeg-turbo (optimized)"] = { error: String(e.stderr ?? e) };
  }
  if (c.mode === "rgb") {
    c.encode.tjbench = { unsupported: "TurboJPEG 2.1 cannot write an RGB-colour-space JPEG" };
    return;
  }
  try {
    c.encode.tjbench = many(() => tjEncode(c.netpbm, { "420": "420", "444": "444", gray: "GRAY" }[c.mode], tjTiming));
  } catch (e) {
    c.encode.tjbench = { error: String(e.stderr ?? e) };
  }
}

// page.js imports "zarr-jpeg-under-test" (the snapshot of dist/), "zarr-jpeg-scalar-under-test"
// (a copy of it, loaded with `simd: false`) and "zarr-jpeg-reader-under-test" (a copy loaded
// with initDecoder() only).
const underTest = {
  name: "under-test",
  setup(b) {
    b.onResolve({ filter: /^zarr-jpeg-under-test\/advanced$/ }, () => ({ path: path.join(distDir, "advanced.js") }));
    b.onResolve({ filter: /^zarr-jpeg-scalar-under-test\/advanced$/ }, () => ({ path: path.join(scalarDistDir, "advanced.js") }));
    b.onResolve({ filter: /^zarr-jpeg-reader-under-test\/advanced$/ }, () => ({ path: path.join(readerDistDir, "advanced.js") }));
    b.onResolve({ filter: /^zarr-jpeg-under-test$/ }, () => ({ path: path.join(distDir, "index.js") }));
    b.onResolve({ filter: /^zarr-jpeg-scalar-under-test$/ }, () => ({ path: path.join(scalarDistDir, "index.js") }));
    b.onResolve({ filter: /^zarr-jpeg-reader-under-test$/ }, () => ({ path: path.join(readerDistDir, "index.js") }));
  },
};

// ---- payload (raw and gzip -9) ----
async function minified(entry, { stdin, external = [], splitting = false, skip } = {}) {
  const r = await esbuild.build({
    ...(stdin ? { stdin: { contents: stdin, resolveDir: root, loader: "js" } } : { entryPoints: [entry] }),
    bundle: true,
    minify: true,
    format: "esm",
    platform: "browser",
    write: false,
    external: ["fs", "path", "url", "module", "crypto", "worker_threads", ...external],
    logLevel: "silent",
    ...(splitting ? { splitting: true, outdir: path.join(os.tmpdir(), "zarr-jpeg-bench-split") } : {}),
  });
  if (!splitting) return Buffer.from(r.outputFiles[0].contents);
  // Code splitting: the files a user downloads are every chunk except the lazily
  // imported ones this path never loads (`skip` matches their names).
  return r.outputFiles.filter((f) => !(skip && skip.test(path.basename(f.path)))).map((f) => Buffer.from(f.contents));
}

async function payloadSizes() {
  // Several files (code splitting) are fetched and compressed one by one.
  const sz = (buf) => {
    const files = Array.isArray(buf) ? buf : [buf];
    return {
      raw: files.reduce((n, f) => n + f.length, 0),
      gzip9: files.reduce((n, f) => n + zlib.gzipSync(f, { level: 9 }).length, 0),
    };
  };
  const nm = (p) => path.join(root, "node_modules", p);
  const rows = [];
  const rel = (f) => (f.startsWith(distDir) ? "dist" + f.slice(distDir.length) : path.relative(root, f));
  const add = async (candidate, part, what, file, isEntry) => {
    try {
      const buf = isEntry ? await minified(file, isEntry === true ? {} : isEntry) : fs.readFileSync(file);
      rows.push({ candidate, part, what, file: rel(file), ...sz(buf) });
    } catch (e) {
      rows.push({ candidate, part, what, file: rel(file), error: String(e.message ?? e) });
    }
  };
  for (const f of fs.readdirSync(path.join(distDir, "wasm")).filter((f) => f.endsWith(".wasm")).sort()) {
    const variant = f.includes("_scalar_") ? "scalar fallback" : "SIMD";
    const what = f.includes("_full_decoder") ? `wasm (full decoder, loaded when a chunk needs it; ${variant})` : `wasm (${variant})`;
    await add("ours", f.includes("dec") && !f.includes("enc") ? "decode" : "encode+decode", what, path.join(distDir, "wasm", f));
  }
  const idx = JSON.stringify(path.join(distDir, "index.js"));
  // Reader and writer as fetched for baseline data: the full decoder's payload is a chunk
  // of its own that only a chunk needing it (e.g. progressive) makes the loader import.
  await add("ours", "decode", "as shipped, reader (register / initDecoder; native ESM or a splitting bundler): files fetched for baseline data", path.join(distDir, "index.js"), {
    stdin: `export { initDecoder, decode, validateConfig } from ${idx};`,
    splitting: true,
    // The scalar fallback: only engines without SIMD fetch it; the full decoder (glue and
    // payload): only a chunk that needs it.
    skip: /^zarr_jpeg_bg\.wasm-|^zarr_jpeg_full_decoder(_bg\.wasm)?-|_scalar_bg\.wasm-/,
    external: ["zarrita", "@zarrita/*", "numcodecs"], // the viewer's own (peer dependency)
  });
  await add("ours", "encode+decode", "as shipped, writer (init; native ESM or a splitting bundler): files fetched for baseline data", path.join(distDir, "index.js"), {
    stdin: `export { init, encode, decode, validateConfig } from ${idx};`,
    splitting: true,
    skip: /^zarr_jpeg_decoder_bg\.wasm-|^zarr_jpeg_full_decoder(_bg\.wasm)?-|_scalar_bg\.wasm-/,
    external: ["zarrita", "@zarrita/*", "numcodecs"],
  });
  await add("ours", "decode", "as shipped, full decoder (initFullDecoder; fetched in addition when a chunk needs it, e.g. progressive)", path.join(distDir, "index.js"), {
    stdin: `export { initFullDecoder } from ${idx};`,
    splitting: true,
    // Only its own chunks (glue and payload): the loader code is already there.
    skip: /^(?!zarr_jpeg_full_decoder(_bg\.wasm)?-)|_scalar_bg\.wasm-/,
    external: ["zarrita", "@zarrita/*", "numcodecs"],
  });
  await add("ours", "encode+decode", "as shipped, bundled without code splitting (all six modules inlined: SIMD and scalar codec, decoder and full decoder)", path.join(distDir, "index.js"), {
    stdin: `export { init, initDecoder, encode, decode, validateConfig } from ${idx};`,
    external: ["zarrita", "@zarrita/*", "numcodecs"],
  });
  await add("ours", "everything", "as shipped: all of dist/index.js bundled+minified (zarrita peer dep external)", path.join(distDir, "index.js"), {
    external: ["zarrita", "@zarrita/*"],
  });
  const cs = "@cornerstonejs/codec-libjpeg-turbo-8bit/dist/";
  await add("cornerstone", "encode+decode", "wasm", nm(cs + "libjpegturbowasm.wasm"));
  await add("cornerstone", "encode+decode", "js glue, minified", nm(cs + "libjpegturbowasm.js"), true);
  await add("cornerstone", "decode", "wasm", nm(cs + "libjpegturbowasm_decode.wasm"));
  await add("cornerstone", "decode", "js glue, minified", nm(cs + "libjpegturbowasm_decode.js"), true);
  await add("jsquash", "decode", "wasm", nm("@jsquash/jpeg/codec/dec/mozjpeg_dec.wasm"));
  await add("jsquash", "decode", "js glue, minified", nm("@jsquash/jpeg/decode.js"), true);
  await add("jsquash", "encode", "wasm", nm("@jsquash/jpeg/codec/enc/mozjpeg_enc.wasm"));
  await add("jsquash", "encode", "js glue, minified", nm("@jsquash/jpeg/encode.js"), true);
  await add("jpeg-js", "decode", "js, minified", nm("jpeg-js/lib/decoder.js"), true);
  await add("jpeg-js", "encode", "js, minified", nm("jpeg-js/lib/encoder.js"), true);
  return rows;
}

// ---- rate–distortion on the colour image, 4:2:0 (bench/lib/rd.mjs; `node bench/rd.mjs` alone) ----
async function rateDistortion(ours, img) {
  try {
    return await rateDistortionCurves(ours, img, { dir: path.join(workDir, "rd"), qualities: rdQualities });
  } catch (e) {
    return { error: String(e.stderr ?? e) };
  }
}

// End-to-end zarrita read (4096² RGB, 256² chunks), with and without the worker pool, and
// write. The script is another helper's (bench/zarrita-blocking.mjs, standalone: `node
// bench/zarrita-blocking.mjs [workers] [rounds] --browser`, and `--write` for writes); it
// runs here as a child process and its output lines are stored, with wall times parsed and
// the pool's speed-up computed: reads in Node from memory, and in headless Chromium from a
// local HTTP server (FetchStore) and from memory; writes (zarr.set) in Node.
function zarritaHook() {
  const file = path.join(here, "zarrita-blocking.mjs");
  if (flag("--no-zarrita")) return { skipped: "--no-zarrita" };
  if (quick && !flag("--zarrita")) return { skipped: "not run with --quick (add --zarrita to force)" };
  if (!fs.existsSync(file)) return { skipped: "bench/zarrita-blocking.mjs not present" };
  const workers = String(os.availableParallelism?.() ?? os.cpus().length);
  const rounds = quick ? "1" : "3";
  const runs = [
    [[workers, rounds, "--browser"], ""],
    [[workers, rounds, "--write"], "Node, write: "],
  ];
  const lines = [];
  const rows = [];
  for (const [args, prefix] of runs) {
    let stdout;
    try {
      stdout = execFileSync(process.execPath, [file, ...args], { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 600_000 });
    } catch (e) {
      return { script: `bench/zarrita-blocking.mjs ${args.join(" ")}`, error: String(e.stderr || e.message).slice(0, 2000), stdout: String(e.stdout ?? "") };
    }
    for (const l of stdout.split("\n").filter(Boolean)) {
      lines.push(l);
      // Node: "no pool (main thread): wall …"; Chromium: "http   no pool (main thread): wall …"
      const m = /^(?:(http|memory)\s+)?(no pool|pool[^(]*?)\s*\(([^)]*)\): wall (\d+(?:\.\d+)?) ms/.exec(l.trim());
      if (!m) continue;
      const num = (re) => Number((re.exec(l) ?? [])[1]);
      rows.push({
        name: `${prefix}${m[1] ? `Chromium, ${m[1]}: ` : ""}${m[2].trim()} (${m[3]})`,
        wallMs: Number(m[4]),
        longestBlockMs: num(/(?:longest main-thread block|long tasks?, longest) (\d+(?:\.\d+)?) ms/),
        totalBlockingMs: num(/total blocking time (\d+(?:\.\d+)?) ms/),
      });
    }
  }
  const speedup = (prefix) => {
    const base = rows.find((r) => r.name.startsWith(`${prefix}no pool`));
    const pool = rows.find((r) => r.name.startsWith(`${prefix}pool`));
    return base && pool ? Number((base.wallMs / pool.wallMs).toFixed(3)) : null;
  };
  return {
    script: runs.map(([args]) => `bench/zarrita-blocking.mjs ${args.join(" ")}`).join("; "),
    runtime: "reads: Node from memory (the first two rows), headless Chromium from a local HTTP server (FetchStore) and from memory; writes (zarr.set): Node, into memory; 4096×4096×3 uint8, 256² chunks, 4:2:0 q90",
    lines,
    rows,
    poolSpeedup: speedup(""),
    poolSpeedupChromiumHttp: speedup("Chromium, http: "),
    poolSpeedupChromiumMemory: speedup("Chromium, memory: "),
    poolSpeedupWrite: speedup("Node, write: "),
  };
}

main().catch((e) => {
  console.error(e);
  if (!flag("--keep-work")) fs.rmSync(workDir, { recursive: true, force: true });
  process.exit(1);
});
