#!/usr/bin/env node
// Per-call cost of decodeInto() on small chunks, where the fixed cost of a decode (header
// parsing, Huffman table construction, the JS/wasm boundary) dominates: µs per call for
// ihc.png centre crops of 8² to 256² in 4:2:0, quality 90, for each build given, in Node
// or (--browser) headless Chromium. Builds are interleaved round by round in one process
// (medians over the rounds), so that machine noise hits them alike; each loads only its
// decode-only module.
//   node bench/fixed-cost.mjs <distA> [<distB> ...] [--rounds N] [--min-ms MS] [--browser]
import { execFileSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { loadPng, centreCrop } from "./lib/images.mjs";
import { CONFIGS, loaderUrl } from "./lib/builds.mjs";
import { withServedPage } from "./lib/served-page.mjs";
import { measure } from "./fixed-cost-core.js";

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

/** `measure` in a headless Chromium page; /D0/, /D1/, ... serve the builds, /C/ this folder. */
async function measureInChromium(job) {
  const roots = Object.fromEntries(dists.map((d, i) => [`D${i}`, d]));
  return withServedPage({ ...roots, C: here }, async (page, browser) => {
    const rows = await page.evaluate(
      async ({ job, count, streams }) => {
        const { measure } = await import("/C/fixed-cost-core.js");
        const libs = [];
        for (let i = 0; i < count; i++) {
          const lib = await import(`/D${i}/loader.js`);
          await lib.initDecoder();
          libs.push(lib);
        }
        return measure({ ...job, libs, streams: streams.map((s) => new Uint8Array(s)) });
      },
      { job, count: dists.length, streams: streams.map((s) => [...s]) },
    );
    return { rows, engine: `headless Chromium ${browser.version()}` };
  });
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
