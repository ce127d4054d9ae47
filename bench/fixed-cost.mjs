#!/usr/bin/env node
// Per-call cost of decodeInto() on small chunks, where the fixed cost of a decode (header
// parsing, Huffman table construction, the JS/wasm boundary) dominates: µs per call for
// ihc.png centre crops of 8² to 256² in 4:2:0, quality 90, for each build given, in Node
// or (--browser) headless Chromium. Builds are interleaved round by round in one process
// (medians over the rounds), so that machine noise hits them alike; each loads only its
// decode-only module.
//   node bench/fixed-cost.mjs <distA> [<distB> ...] [--rounds N] [--min-ms MS] [--browser]
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { loadPng, centreCrop } from "./lib/images.mjs";
import { CONFIGS, loaderUrl } from "./lib/builds.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const SIZES = [8, 16, 64, 128, 256];
const CONFIG = CONFIGS["420"];

function chunk(ihc, size) {
  const img = centreCrop(ihc, size);
  return { data: img.data, shape: [size, size, 3] };
}

// Child process: the streams, written by one build's encoder (the parent loads only
// decoders: with the whole codec loaded, decodeInto() would use it instead).
if (process.argv[2] === "--write-streams") {
  const lib = await import(loaderUrl(process.argv[3]));
  await lib.init();
  const ihc = loadPng(path.join(here, "../samples/ihc.png"), 3);
  const streams = SIZES.map((s) => {
    const { data, shape } = chunk(ihc, s);
    return Buffer.from(lib.encode(CONFIG, data, shape)).toString("base64");
  });
  process.stdout.write(JSON.stringify(streams));
  process.exit(0);
}

const { values: opts, positionals: dists } = parseArgs({
  allowPositionals: true,
  options: {
    rounds: { type: "string", default: "15" },
    "min-ms": { type: "string", default: "100" },
    browser: { type: "boolean", default: false },
  },
});
if (dists.length === 0) {
  console.error("usage: node bench/fixed-cost.mjs <distA> [<distB> ...] [--rounds N] [--min-ms MS] [--browser]");
  process.exit(2);
}
const rounds = Number(opts.rounds);
const minMs = Number(opts["min-ms"]);

const streams = JSON.parse(
  execFileSync(process.execPath, [fileURLToPath(import.meta.url), "--write-streams", dists[0]], {
    maxBuffer: 1 << 28,
  }).toString(),
).map((b) => new Uint8Array(Buffer.from(b, "base64")));

/**
 * Per size, µs per decodeInto() for each build (medians over the rounds), and whether the
 * builds' samples agree. Plain JS without Node APIs: it also runs in the page.
 */
function measure({ libs, streams, sizes, config, rounds, minMs }) {
  /** µs per decodeInto() over a batch of at least minMs. */
  function time(lib, bytes, shape, out) {
    let n = 0;
    const t0 = performance.now();
    let t = t0;
    do {
      for (let i = 0; i < 16; i++) lib.decodeInto(config, bytes, shape, out);
      n += 16;
      t = performance.now();
    } while (t - t0 < minMs);
    return ((t - t0) * 1000) / n;
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
  return sizes.map((size, k) => {
    const shape = [size, size, 3];
    const outs = libs.map(() => new Uint8Array(size * size * 3));
    libs.forEach((lib, i) => lib.decodeInto(config, streams[k], shape, outs[i]));
    const same = outs.every((o) => o.every((v, j) => v === outs[0][j]));
    libs.forEach((lib, i) => time(lib, streams[k], shape, outs[i])); // warm-up
    const us = libs.map(() => []);
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 ? [...libs.keys()].reverse() : [...libs.keys()];
      for (const i of order) us[i].push(time(libs[i], streams[k], shape, outs[i]));
    }
    return { same, us: us.map(median) };
  });
}

const job = { sizes: SIZES, config: CONFIG, rounds, minMs };
let rows;
let engine;
if (!opts.browser) {
  const libs = [];
  for (const dist of dists) {
    const lib = await import(loaderUrl(dist));
    await lib.initDecoder();
    libs.push(lib);
  }
  rows = measure({ ...job, libs, streams });
  engine = `node ${process.version}`;
} else {
  ({ rows, engine } = await measureInChromium(job));
}

/** `measure` in a headless Chromium page; /D0/, /D1/, ... serve the builds. */
async function measureInChromium(job) {
  const { chromium } = await import("playwright-core");
  const roots = dists.map((d) => path.resolve(d));
  const server = http.createServer((req, res) => {
    const [, prefix, ...rest] = new URL(req.url, "http://x").pathname.split("/");
    const base = /^D\d+$/.test(prefix) ? roots[Number(prefix.slice(1))] : undefined;
    const file = base && path.resolve(base, rest.join("/"));
    if (prefix === "") {
      res.writeHead(200, { "content-type": "text/html" });
      return res.end("<!doctype html><title>fixed cost</title>");
    }
    if (!file || !file.startsWith(base + path.sep) || !fs.existsSync(file)) {
      res.writeHead(404);
      return res.end();
    }
    res.writeHead(200, { "content-type": file.endsWith(".js") ? "text/javascript" : "application/octet-stream" });
    res.end(fs.readFileSync(file));
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const app = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"],
  });
  try {
    const page = await app.newPage();
    await page.goto(`http://127.0.0.1:${server.address().port}/`);
    const rows = await page.evaluate(
      async ({ job, count, streams, measureSource }) => {
        const libs = [];
        for (let i = 0; i < count; i++) {
          const lib = await import(`/D${i}/loader.js`);
          await lib.initDecoder();
          libs.push(lib);
        }
        const measure = new Function(`return (${measureSource})`)();
        return measure({ ...job, libs, streams: streams.map((s) => new Uint8Array(s)) });
      },
      { job, count: dists.length, streams: streams.map((s) => [...s]), measureSource: measure.toString() },
    );
    return { rows, engine: `headless Chromium ${app.version()}` };
  } finally {
    await app.close();
    server.close();
  }
}

/** A, B, ... for the builds in argument order (a number past H). */
const label = (i) => "ABCDEFGH"[i] ?? String(i);
const header = ["size", "bytes", ...dists.map((d, i) => `${label(i)} µs`)];
if (dists.length > 1) header.push(...dists.slice(1).map((_, i) => `A/${label(i + 1)}`));
console.log(dists.map((d, i) => `${label(i)}: ${d}`).join("\n"));
console.log(engine);
console.log(header.join("\t"));
rows.forEach(({ same, us: med }, k) => {
  const size = SIZES[k];
  if (!same) console.log(`${size}²: SAMPLES DIFFER`);
  const row = [`${size}²`, streams[k].length, ...med.map((m) => m.toFixed(1))];
  row.push(...med.slice(1).map((m) => (med[0] / m).toFixed(3)));
  console.log(row.join("\t"));
});
