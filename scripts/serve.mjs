#!/usr/bin/env node
// The demo's server (what `npm start` runs after set-up and build), usable as a module by
// the end-to-end test:
//   prepareSamples()     converts samples/*.png into samples/stores/*.zarr with dist/convert.js,
//                        skipping the work when the stores match their inputs (a stamp file)
//   startDemoServer()    serves, on 127.0.0.1:
//                          /                  www/ (the demo page)
//                          /dist/…            the built package (dist/)
//                          /stores/…          samples/stores/ (byte ranges: shards are read by range)
//                          /vendor/zarrita.js zarrita's ESM build, bundled in memory by esbuild
//                                             (zarrita imports bare specifiers a browser cannot resolve)
//
//   node scripts/serve.mjs [--prepare-only] [--no-prepare]
// The port is $PORT, else 8080; if that port is taken, any free port.
import { spawnSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { PNG } from "pngjs";
import { MIME, sendFile } from "./lib/send-file.mjs";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const STORES = path.join(ROOT, "samples", "stores");
const STAMP = path.join(STORES, ".stamp.json");

/**
 * The sample stores. `tile` repeats the image side by side to a
 * realistic size; everything else is passed to convert().
 */
export const SAMPLES = [
  {
    name: "ihc-ycbcr.zarr",
    title: "IHC, YCbCr 4:2:0",
    description: "immunohistochemistry (scikit-image ihc.png) tiled to 2048×2048; (c, y, x) with transpose → jpeg; ycbcr 4:2:0, quality 90",
    source: "ihc.png",
    tile: [2048, 2048],
    options: { quality: 90, color: "ycbcr", subsampling: "4:2:0", chunk: 256 },
  },
  {
    name: "ihc-rgb.zarr",
    title: "IHC, rgb (sharded)",
    description: "the same image stored as rgb (no colour transform, APP14 Adobe); 256² chunks in 1024² shards (sharding_indexed)",
    source: "ihc.png",
    tile: [2048, 2048],
    options: { quality: 90, color: "rgb", chunk: 256, shard: 1024 },
  },
  {
    name: "cell.zarr",
    title: "Cell, grayscale",
    description: "quantitative phase image of a cell (scikit-image cell.png, CC0) tiled 3×3 (1980×1650); grayscale, quality 90, pixel 0.107 µm",
    source: "cell.png",
    tile: [1980, 1650],
    options: { quality: 90, color: "grayscale", chunk: 256, pixelSize: 0.107, unit: "micrometer" },
  },
  {
    name: "ihc-yxc.zarr",
    title: "IHC, (y, x, c) channel-last",
    description: "1024×1024 crop of the tiled image with the channel axis last (y, x, c): jpeg alone, no transpose; level 0 is a plain Zarr v3 array",
    source: "ihc.png",
    tile: [1024, 1024],
    options: { quality: 85, color: "ycbcr", subsampling: "4:4:4", chunk: 256, channelAxis: "last" },
  },
  {
    name: "ihc-tiff.zarr",
    title: "IHC from a pyramidal JPEG TIFF (tiles copied)",
    description: "samples/ihc-pyramid.tif (libvips, 1024×1024, 256² JPEG tiles, Q85 YCbCr 4:2:0) converted with its level-0 tiles copied " +
      "into the chunks unchanged (hover a level-0 chunk); levels 1+ re-encoded",
    file: "ihc-pyramid.tif",
    options: {},
  },
  {
    name: "ihc-pyramid.refs.json",
    title: "The same TIFF, read in place",
    description: "samples/ihc-pyramid.tif not converted: tifffile's references to its tiles (kerchunk JSON), read by Range requests " +
      "and decoded by the imagecodecs_jpeg codec — compare with the converted copy beside it",
    references: "ihc-pyramid.tif",
  },
];

/** A sample PNG's samples (pngjs): RGB, or one channel for a grayscale PNG. */
function readPng(file) {
  const png = PNG.sync.read(fs.readFileSync(file));
  const C = png.colorType === 0 || png.colorType === 4 ? 1 : 3;
  const data = new Uint8Array(png.width * png.height * C);
  for (let i = 0, o = 0; i < png.data.length; i += 4) for (let c = 0; c < C; c++) data[o++] = png.data[i + c];
  return { data, height: png.height, width: png.width, channels: C };
}

/** Repeats an image (H, W, C) side by side until it is `height` × `width` (seams are left visible: honest tiles). */
export function tileImage(image, height, width) {
  const { data, height: h, width: w, channels: C } = image;
  const out = new Uint8Array(height * width * C);
  for (let y = 0; y < height; y++) {
    const row = (y % h) * w * C;
    for (let x = 0; x < width; x += w) {
      const n = Math.min(w, width - x) * C;
      out.set(data.subarray(row, row + n), (y * width + x) * C);
    }
  }
  return { data: out, height, width, channels: C };
}

function sha256(...parts) {
  const hash = crypto.createHash("sha256");
  for (const part of parts) hash.update(part);
  return hash.digest("hex");
}

function inputsHash() {
  const files = ["dist/convert.js", "dist/convert-files.js", "dist/wasm/zarr_jpeg_converter_bg.wasm.js", "samples/ihc.png", "samples/cell.png", "samples/ihc-pyramid.tif", "tests/python/write_references.py"];
  return sha256(JSON.stringify(SAMPLES), ...files.map((f) => fs.readFileSync(path.join(ROOT, f))));
}

/**
 * A TIFF sample read in place: the TIFF copied under samples/stores/ (where the server serves
 * it, with Range requests) and tifffile's references to it, written by the project's Python
 * environment (.venv/, made by scripts/setup.sh) as any user of tifffile would.
 */
function writeReferences(sample, log) {
  const tiff = path.join(STORES, sample.references);
  fs.copyFileSync(path.join(ROOT, "samples", sample.references), tiff);
  const venv = path.join(ROOT, ".venv", "bin", "python");
  const python = process.env.PYTHON ?? (fs.existsSync(venv) ? venv : "python3");
  const result = spawnSync(python, [path.join(ROOT, "tests/python/write_references.py"), tiff, path.join(STORES, sample.name), "/stores"], { encoding: "utf8" });
  if (result.status !== 0) {
    throw new Error(`writing tifffile's references for ${sample.references} failed (run scripts/setup.sh for the Python environment): ${result.stderr || result.error}`);
  }
  const written = JSON.parse(result.stdout);
  log(`wrote ${sample.name}: tifffile's references to ${sample.references} (${written.levels.length} levels, read in place)`);
  return {
    name: sample.name,
    title: sample.title,
    description: sample.description,
    url: `/stores/${sample.name}`,
    summary: { shape: written.levels[0], levels: written.levels.map((shape) => ({ shape })), bytesWritten: fs.statSync(tiff).size, references: true },
  };
}

/** Converts the samples unless samples/stores/ already holds them for the same inputs. Returns the index. */
export async function prepareSamples({ log = console.log, force = false } = {}) {
  if (!fs.existsSync(path.join(ROOT, "dist/convert.js"))) {
    throw new Error("dist/convert.js is missing: build the package first (node scripts/build.mjs)");
  }
  const hash = inputsHash();
  const indexFile = path.join(STORES, "index.json");
  if (!force && fs.existsSync(STAMP) && fs.existsSync(indexFile)) {
    const stamp = JSON.parse(fs.readFileSync(STAMP, "utf8"));
    if (stamp.hash === hash && SAMPLES.every((s) => fs.existsSync(s.references ? path.join(STORES, s.name) : path.join(STORES, s.name, "zarr.json")))) {
      log("sample stores are up to date (samples/stores/)");
      return JSON.parse(fs.readFileSync(indexFile, "utf8"));
    }
  }
  const { convert } = await import(pathToFileURL(path.join(ROOT, "dist/convert.js")).href);
  fs.mkdirSync(STORES, { recursive: true });
  const index = [];
  const images = new Map();
  for (const sample of SAMPLES) {
    if (sample.references) {
      index.push(writeReferences(sample, log));
      continue;
    }
    let input;
    let shape;
    if (sample.file) {
      // a file converted as it is (a TIFF: its level-0 tiles copied)
      input = path.join(ROOT, "samples", sample.file);
    } else {
      if (!images.has(sample.source)) images.set(sample.source, readPng(path.join(ROOT, "samples", sample.source)));
      const image = tileImage(images.get(sample.source), ...sample.tile);
      shape = image.channels === 3 ? [image.height, image.width, 3] : [image.height, image.width];
      input = { data: image.data, shape };
    }
    const summary = await convert(input, path.join(STORES, sample.name), {
      ...sample.options,
      name: sample.name.replace(/\.zarr$/, ""),
      overwrite: true,
    });
    shape ??= summary.inputShape;
    log(
      `converted ${sample.name}: ${shape.join("×")} in ${summary.seconds.toFixed(2)} s, ${summary.levels.length} levels, ` +
        `${(summary.bytesWritten / 1e6).toFixed(2)} MB, ratio ${summary.ratio.toFixed(1)}:1, ` +
        (summary.tiles ? `${summary.tiles.copied} level-0 tiles copied, ${summary.tiles.reencoded} re-encoded` : `PSNR ${summary.psnr.toFixed(2)} dB`),
    );
    index.push({
      name: sample.name,
      title: sample.title,
      description: sample.description,
      url: `/stores/${sample.name}`,
      summary: {
        shape,
        levels: summary.levels.map((l) => ({ path: l.path, shape: l.shape, chunkShape: l.chunkShape, shardShape: l.shardShape, encodedBytes: l.encodedBytes })),
        seconds: summary.seconds,
        bytesWritten: summary.bytesWritten,
        ratio: summary.ratio,
        psnr: summary.psnr,
        tiles: summary.tiles ?? null,
        config: summary.config,
      },
    });
  }
  fs.writeFileSync(indexFile, JSON.stringify(index, null, 2));
  fs.writeFileSync(STAMP, JSON.stringify({ hash, written: new Date().toISOString() }));
  return index;
}

let vendorBundle;
async function zarritaBundle() {
  vendorBundle ??= (async () => {
    const esbuild = await import("esbuild");
    const result = await esbuild.build({
      // (ReferenceStore: the demo opens kerchunk references to TIFFs read in place)
      stdin: { contents: 'export * from "zarrita"; export { default as ReferenceStore } from "@zarrita/storage/ref";', resolveDir: ROOT, loader: "js" },
      bundle: true,
      format: "esm",
      platform: "browser",
      minify: true,
      write: false,
      logLevel: "silent",
    });
    return Buffer.from(result.outputFiles[0].contents);
  })();
  return vendorBundle;
}


const MOUNTS = [
  ["/dist/", path.join(ROOT, "dist")],
  ["/stores/", STORES],
  ["/", path.join(ROOT, "www")],
];

function resolveFile(pathname) {
  for (const [prefix, dir] of MOUNTS) {
    if (!pathname.startsWith(prefix)) continue;
    const file = path.resolve(dir, "." + pathname.slice(prefix.length - 1));
    if (file !== dir && !file.startsWith(dir + path.sep)) return null;
    return file;
  }
  return null;
}

async function handle(req, res) {
  const url = new URL(req.url, "http://localhost");
  let pathname;
  try {
    pathname = decodeURIComponent(url.pathname);
  } catch {
    res.writeHead(400).end();
    return;
  }
  if (req.method !== "GET" && req.method !== "HEAD") {
    res.writeHead(405).end();
    return;
  }
  if (pathname === "/vendor/zarrita.js") {
    try {
      const body = await zarritaBundle();
      res.writeHead(200, { "Content-Type": MIME[".js"], "Content-Length": body.length, "Cache-Control": "no-cache" });
      res.end(req.method === "HEAD" ? undefined : body);
    } catch (error) {
      res.writeHead(500, { "Content-Type": "text/plain" }).end(`bundling zarrita failed: ${error.message}`);
    }
    return;
  }
  const file = resolveFile(pathname);
  if (!file) {
    res.writeHead(403).end();
    return;
  }
  sendFile(req, res, file, { "Cache-Control": "no-cache" });
}

function listen(server, port, host) {
  return new Promise((resolve, reject) => {
    const onError = (error) => {
      server.off("listening", onListening);
      reject(error);
    };
    const onListening = () => {
      server.off("error", onError);
      resolve();
    };
    server.once("error", onError);
    server.once("listening", onListening);
    server.listen(port, host);
  });
}

/**
 * Starts the demo server. `port` 0 means any free port; a taken port falls back to a free
 * one when `fallback` is true. Resolves to `{ url, port, close() }`.
 */
export async function startDemoServer({ port = 0, host = "127.0.0.1", fallback = true } = {}) {
  const server = http.createServer((req, res) => {
    handle(req, res).catch((error) => {
      if (!res.headersSent) res.writeHead(500).end(String(error?.message ?? error));
    });
  });
  try {
    await listen(server, port, host);
  } catch (error) {
    if (error.code !== "EADDRINUSE" || !fallback) throw error;
    await listen(server, 0, host);
  }
  await zarritaBundle(); // fail now, not on the first page load
  const actual = server.address().port;
  return {
    url: `http://${host}:${actual}/`,
    port: actual,
    close: () => new Promise((resolve) => {
      server.closeAllConnections?.();
      server.close(() => resolve());
    }),
  };
}

async function main(argv) {
  if (!argv.includes("--no-prepare")) {
    const started = Date.now();
    await prepareSamples({ force: argv.includes("--force") });
    console.log(`samples ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
  if (argv.includes("--prepare-only")) return;
  const wanted = process.env.PORT ? Number(process.env.PORT) : 8080;
  const server = await startDemoServer({ port: wanted });
  if (server.port !== wanted) console.log(`port ${wanted} is taken; using ${server.port}`);
  console.log(`\nzarr-jpeg demo: ${server.url}\n(serving www/, dist/ and samples/stores/ on 127.0.0.1; Ctrl-C stops)`);
  const stop = () => server.close().then(() => process.exit(0));
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).catch((error) => {
    console.error(`serve: ${error?.stack ?? error}`);
    process.exit(1);
  });
}
