#!/usr/bin/env node
// A/B benchmark of two builds of dist/ (decode, or encode with --encode), interleaved in one
// process, in Node or headless Chromium; or, with --profile, a CPU profile of one build.
// See USAGE below and bench/README.md.
//
// Cases: ihc.png (4:2:0, 4:4:4, `rgb`) and cell.png (grayscale) tiled to 2048² and
// centre-cropped to 512² and 256², quality 90 (the images of bench/run.mjs). Decode: both
// builds decode the same streams, written once by A's encoder in a child process, so that
// A and B each load only their decode-only module (initDecoder()). Encode: both builds load
// the whole codec (init()) and encode the same samples; the streams must be identical.
// Each case is warmed up, then each of `--rounds` rounds times one batch of A and one of B
// (alternating which goes first, each batch ≥ `--min-ms`); the figures are medians, in MP/s.
// The timing loop is bench/ab-core.js, the same code in both engines.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { loadPng, tile, centreCrop } from "./lib/images.mjs";
import { CONFIGS, loaderUrl } from "./lib/builds.mjs";
import { withServedPage } from "./lib/served-page.mjs";

const USAGE = `usage:
  node bench/ab.mjs <distA> <distB> [--encode] [--browser] [--rounds N] [--only SUBSTR] [--min-ms MS] [--cpu] [--no-restarts] [--trellis-b] [--encode-options JSON]
  node bench/ab.mjs [<distA>] <distB> --profile [--encode] [--only SUBSTR] [--min-ms MS] [--top N] [--no-restarts]

  --encode      time encode instead of decode; A and B must write identical bytes (exit 1 if not)
  --browser     time in headless Chromium (/usr/bin/chromium via playwright-core), not in Node
  --rounds N    interleaved rounds, median taken (default 9; --reps is an alias)
  --only S      only the cases whose id contains S (ids: ihc-2048-420, cell-256-gray, ...)
  --min-ms MS   A/B: each timed batch lasts >= MS (default 150 decode, 40 encode);
                --profile: the profiled run of each case lasts >= MS (default 2000)
  --no-restarts decode streams written without restart intervals (encode's restartIntervals: false)
  --trellis-b   with --encode: B encodes with { trellis: true } (A with the defaults), so
                A = B gives the speed of trellis quantisation ÷ without; bytes differ
  --encode-options JSON  with --encode: encode()'s options for A and B, e.g.
                '{"trellis": true, "quantTable": "flat"}' (to time a change to trellis)
  --cpu         time the process's CPU time (user + system), not wall time (Node only)
  --profile     no A/B: run B alone in headless Chromium under the DevTools CPU profiler
                (sampling every 200 us) and print ms per operation and the --top (default 15)
                functions by self time per case. Wasm functions have names only if B was
                built with \`node scripts/build.mjs --names\` (keeps the wasm name section).
                Decode streams come from A's encoder if A is given, else B's.`;

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "..");

/** Every case id, in table order: { id, image: "ihc" | "cell", size, mode }. */
function allCases() {
  const out = [];
  for (const size of [2048, 512, 256]) {
    for (const mode of ["420", "444", "rgb"]) out.push({ id: `ihc-${size}-${mode}`, image: "ihc", size, mode });
    out.push({ id: `cell-${size}-gray`, image: "cell", size, mode: "gray" });
  }
  return out;
}

const sources = {};
/** The samples of a case: the image tiled (2048²) or centre-cropped to its size. */
function samples({ image, size }) {
  sources[image] ??= loadPng(path.join(root, `samples/${image}.png`), image === "ihc" ? 3 : 1);
  const img = size === 2048 ? tile(sources[image], size) : centreCrop(sources[image], size);
  return { data: img.data, shape: img.channels === 3 ? [img.height, img.width, 3] : [img.height, img.width] };
}

// Child process: writes the decode cases' streams with one dist's encoder, so that the
// parent never loads a whole codec (which decode() would then use instead of the decoder).
if (process.argv[2] === "--write-streams") {
  const [dist, dir, restarts, ...ids] = process.argv.slice(3);
  const lib = await import(loaderUrl(dist));
  await lib.init();
  const options = { restartIntervals: restarts === "restarts" };
  for (const c of allCases().filter((c) => ids.includes(c.id))) {
    const { data, shape } = samples(c);
    fs.writeFileSync(path.join(dir, `${c.id}.bin`), lib.encode(CONFIGS[c.mode], data, shape, options));
  }
  process.exit(0);
}

let opts;
try {
  opts = parseArgs({
    allowPositionals: true,
    options: {
      encode: { type: "boolean" },
      browser: { type: "boolean" },
      profile: { type: "boolean" },
      cpu: { type: "boolean" },
      rounds: { type: "string" },
      reps: { type: "string" },
      only: { type: "string" },
      "min-ms": { type: "string" },
      top: { type: "string" },
      "no-restarts": { type: "boolean" },
      "trellis-b": { type: "boolean" },
      "encode-options": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
} catch (error) {
  console.error(`${error.message}\n${USAGE}`);
  process.exit(2);
}
const { values: o, positionals } = opts;
if (o.help) {
  console.log(USAGE);
  process.exit(0);
}
const fail = (message) => {
  console.error(`${message}\n${USAGE}`);
  process.exit(2);
};
const profile = !!o.profile;
if (profile ? positionals.length < 1 || positionals.length > 2 : positionals.length !== 2) {
  fail(profile ? "--profile takes one or two dist folders" : "two dist folders are needed");
}
const [distA, distB] = positionals.length === 2 ? positionals : [null, positionals[0]];
for (const dist of [distA, distB]) {
  if (dist && !fs.existsSync(path.join(dist, "loader.js"))) fail(`${dist}/loader.js not found (build with node scripts/build.mjs)`);
}
if (o["trellis-b"] && (!o.encode || profile)) fail("--trellis-b: only for --encode A/B runs");
if (o["encode-options"] !== undefined && (!o.encode || profile)) fail("--encode-options: only for --encode A/B runs");
let encodeOptions;
try {
  encodeOptions = o["encode-options"] === undefined ? undefined : JSON.parse(o["encode-options"]);
} catch (error) {
  fail(`--encode-options: not JSON (${error.message})`);
}
if (o.cpu && (o.browser || profile)) fail("--cpu: CPU time is only measurable in Node (not with --browser or --profile)");
const encode = !!o.encode;
const browser = !!o.browser || profile;
const number = (value, dflt, name) => {
  if (value === undefined) return dflt;
  const n = Number(value);
  if (!(n > 0)) fail(`${name} must be a positive number`);
  return n;
};
const rounds = number(o.rounds ?? o.reps, 9, "--rounds");
const minMs = number(o["min-ms"], profile ? 2000 : encode ? 40 : 150, "--min-ms");
const top = number(o.top, 15, "--top");
const cases = allCases().filter((c) => !o.only || c.id.includes(o.only));
if (!cases.length) fail(`--only ${o.only}: no case id contains it`);

// The inputs of each case, in a scratch folder (the page fetches them from there): the
// samples for encode, the stream for decode.
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "zarr-jpeg-ab-"));
try {
  for (const c of cases) {
    const { data, shape } = samples(c);
    fs.writeFileSync(path.join(dir, `${c.id}.json`), JSON.stringify({ shape, config: CONFIGS[c.mode] }));
    if (encode) fs.writeFileSync(path.join(dir, `${c.id}.bin`), data);
  }
  if (!encode) {
    const writer = distA ?? distB;
    execFileSync(process.execPath, [fileURLToPath(import.meta.url), "--write-streams", writer, dir, o["no-restarts"] ? "none" : "restarts", ...cases.map((c) => c.id)], { stdio: "inherit" });
  }
  if (profile) await profileInChromium();
  else await abTables();
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}

/** A case as abCase() (bench/ab-core.js) takes it, read from the scratch folder. */
function readCase(id) {
  return { encode, input: new Uint8Array(fs.readFileSync(path.join(dir, `${id}.bin`))), ...JSON.parse(fs.readFileSync(path.join(dir, `${id}.json`), "utf8")) };
}

async function abTables() {
  const load = os.loadavg().map((x) => x.toFixed(2)).join(" ");
  const engine = browser ? "headless Chromium" : `node ${process.version}`;
  console.log(`A = ${path.resolve(distA)}\nB = ${path.resolve(distB)}${o["trellis-b"] ? ", encoding with { trellis: true }" : ""}`);
  if (encodeOptions !== undefined) console.log(`encode options: ${JSON.stringify(encodeOptions)}`);
  console.log(
    `${encode ? "encode" : "decode"}, ${engine}, ${os.cpus().length} cpus, load ${load}; ` +
      `median of ${rounds} interleaved rounds, batches >= ${minMs} ms of ${o.cpu ? "CPU" : "wall"} time\n`,
  );
  if (encode) {
    console.log("| case | bytes | identical | A MP/s | B MP/s | B÷A |\n| --- | ---: | :---: | ---: | ---: | ---: |");
  } else {
    console.log("| case | A MP/s | B MP/s | B÷A | max abs diff A vs B |\n| --- | ---: | ---: | ---: | ---: |");
  }
  const print = (id, r) => {
    const speed = `${r.a.toFixed(1)} | ${r.b.toFixed(1)} | ${(r.b / r.a).toFixed(2)}×`;
    if (encode) {
      const bytes = r.bytesA === r.bytesB ? `${r.bytesA}` : `${r.bytesA} / ${r.bytesB}`;
      console.log(`| ${id} | ${bytes} | ${r.identical ? "yes" : "**NO**"} | ${speed} |`);
      if (!r.identical && !o["trellis-b"]) process.exitCode = 1;
    } else {
      console.log(`| ${id} | ${speed} | ${r.maxDiff}${r.maxDiff === 0 ? " (identical)" : ""} |`);
    }
  };
  const options = {
    rounds,
    minMs,
    encodeOptionsA: encodeOptions,
    encodeOptionsB: o["trellis-b"] ? { ...encodeOptions, trellis: true } : encodeOptions,
  };

  if (!browser) {
    const { abCase } = await import("./ab-core.js");
    const loadDist = async (dist) => {
      const lib = await import(loaderUrl(dist));
      await (encode ? lib.init() : lib.initDecoder());
      return lib;
    };
    const A = await loadDist(distA);
    const B = await loadDist(distB);
    if (A === B) throw new Error("distA and distB resolve to the same module");
    if (o.cpu) {
      options.now = () => {
        const u = process.cpuUsage();
        return (u.user + u.system) / 1000;
      };
    }
    for (const c of cases) print(c.id, abCase(A, B, readCase(c.id), options));
    return;
  }

  await withPage(async (page) => {
    await page.evaluate(async (encode) => {
      window.core = await import("/C/ab-core.js");
      window.A = await import("/A/loader.js");
      window.B = await import("/B/loader.js");
      for (const lib of [window.A, window.B]) await (encode ? lib.init() : lib.initDecoder());
    }, encode);
    for (const c of cases) {
      const result = await page.evaluate(
        async ({ id, encode, options }) => window.core.abCase(window.A, window.B, await window.readCase(id, encode), options),
        { id: c.id, encode, options },
      );
      print(c.id, result);
    }
  });
}

async function profileInChromium() {
  const what = encode ? "encode" : "decode";
  console.log(`B = ${path.resolve(distB)}`);
  console.log(`${what} in headless Chromium, ${os.cpus().length} cpus, load ${os.loadavg().map((x) => x.toFixed(2)).join(" ")}; CPU profile sampled every 200 µs, >= ${minMs} ms per case`);
  await withPage(async (page) => {
    await page.evaluate(async (encode) => {
      window.core = await import("/C/ab-core.js");
      window.B = await import("/B/loader.js");
      await (encode ? window.B.init() : window.B.initDecoder());
    }, encode);
    const cdp = await page.context().newCDPSession(page);
    await cdp.send("Profiler.enable");
    await cdp.send("Profiler.setSamplingInterval", { interval: 200 });
    let unnamed = false;
    for (const c of cases) {
      // Load the input and warm up (lets the engine tier up) before the profiler starts.
      await page.evaluate(
        async ({ id, encode }) => {
          window.op = window.core.operation(window.B, await window.readCase(id, encode));
          window.core.runFor(window.op, 300);
        },
        { id: c.id, encode },
      );
      await cdp.send("Profiler.start");
      const { msPerCall, calls } = await page.evaluate((ms) => window.core.runFor(window.op, ms), minMs);
      const { profile: p } = await cdp.send("Profiler.stop");
      const rows = selfTimes(p);
      unnamed ||= rows.some((r) => r.unnamedWasm);
      console.log(`\n### ${c.id}: ${msPerCall.toFixed(2)} ms per ${what} (${calls} calls, ${p.samples.length} samples)\n`);
      console.log("| self % | function |\n| ---: | --- |");
      for (const r of rows.slice(0, top)) console.log(`| ${r.percent.toFixed(1)} | ${r.name.replaceAll("|", "\\|")} |`);
    }
    if (unnamed) console.log("\nSome wasm functions have no names: build B with `node scripts/build.mjs --names`.");
  });
}

/** A CDP Profiler.Profile → [{ name, percent, unnamedWasm }], by self time, largest first. */
function selfTimes(p) {
  const frames = new Map(p.nodes.map((n) => [n.id, n.callFrame]));
  const time = new Map();
  const unnamed = new Set();
  let total = 0;
  p.samples.forEach((id, i) => {
    const frame = frames.get(id);
    const dt = p.timeDeltas[i] ?? 0;
    const wasm = frame.url.startsWith("wasm://");
    // Rust symbols carry a hash suffix (`::h` + 16 hex digits); JS frames get their file.
    let name = (frame.functionName || "(anonymous)").replace(/::h[0-9a-f]{16}$/, "");
    if (frame.url && !wasm) name += ` (${frame.url.split("/").pop()}:${frame.lineNumber + 1})`;
    if (wasm && /^(\$?func\d+|wasm-function\[\d+\]|\$?\d+)$/.test(frame.functionName)) unnamed.add(name);
    time.set(name, (time.get(name) ?? 0) + dt);
    total += dt;
  });
  return [...time]
    .sort((a, b) => b[1] - a[1])
    .map(([name, t]) => ({ name, percent: (100 * t) / total, unnamedWasm: unnamed.has(name) }));
}

/**
 * Runs `body(page)` with a headless Chromium page (bench/lib/served-page.mjs): /A/ and /B/
 * are the two dist/ folders (loaded as native ES modules), /C/ this folder (ab-core.js),
 * /S/ the scratch folder of inputs; the page's readCase(id, encode) fetches a case.
 */
async function withPage(body) {
  await withServedPage({ A: distA, B: distB, S: dir, C: here }, async (page) => {
    await page.evaluate(() => {
      window.readCase = async (id, encode) => ({
        encode,
        input: new Uint8Array(await (await fetch(`/S/${id}.bin`)).arrayBuffer()),
        ...(await (await fetch(`/S/${id}.json`)).json()),
      });
    });
    await body(page);
  });
}
