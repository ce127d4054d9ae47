#!/usr/bin/env node
// A/B decode benchmark of two builds of dist/ in one Node process, interleaved.
//
//   node bench/ab.mjs <distA> <distB> [--browser] [--rounds N] [--only <case-id substring>] [--min-ms MS]
//
// --browser runs the timing in headless Chromium (Debian's /usr/bin/chromium through
// playwright-core, as bench/run.mjs); without it, in this Node process. Engines differ:
// Node 20's V8 and Chromium's can rank two builds differently, so measure in Chromium
// before trusting a Node figure.
// Both builds decode the same streams (written once by distA's encoder, in a child
// process, so that A and B each load only their decode-only module). Each case is warmed
// up, then `--rounds` rounds (default 9) time one batch of A and one of B in turn
// (alternating which goes first), each batch ≥ `--min-ms` (default 150) ms. Prints the
// median MP/s of each and the ratio B ÷ A per case: on a shared 2-core machine read the
// ratio, not the absolute figures. The decoded samples of A and B are also compared
// (max abs difference and whether they are identical).
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { loadPng, tile, centreCrop } from "./lib/images.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "..");
const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};

const configs = {
  "420": { quality: 90, encoded_color_space: "ycbcr", subsampling: [[2, 2], [1, 1], [1, 1]] },
  "444": { quality: 90, encoded_color_space: "ycbcr", subsampling: [[1, 1], [1, 1], [1, 1]] },
  rgb: { quality: 90, encoded_color_space: "rgb" },
  gray: { quality: 90, encoded_color_space: "grayscale" },
};

function caseList() {
  const ihc = loadPng(path.join(root, "samples/ihc.png"), 3);
  const cell = loadPng(path.join(root, "samples/cell.png"), 1);
  const out = [];
  for (const size of [2048, 512, 256]) {
    const make = (img) => (size === 2048 ? tile(img, size) : centreCrop(img, size));
    for (const [img, name, modes] of [[make(ihc), "ihc", ["420", "444", "rgb"]], [make(cell), "cell", ["gray"]]]) {
      for (const mode of modes) out.push({ id: `${name}-${size}-${mode}`, img, mode });
    }
  }
  return out;
}

// Child mode: write the streams with distA's encoder.
if (args[0] === "--encode") {
  const [, dist, dir] = args;
  const lib = await import(pathToFileURL(path.join(path.resolve(dist), "index.js")).href);
  await lib.init();
  for (const { id, img, mode } of caseList()) {
    const shape = img.channels === 3 ? [img.height, img.width, 3] : [img.height, img.width];
    fs.writeFileSync(path.join(dir, `${id}.jpg`), lib.encode(configs[mode], img.data, shape));
    fs.writeFileSync(path.join(dir, `${id}.json`), JSON.stringify({ shape, mode }));
  }
  process.exit(0);
}

const valued = new Set(["--rounds", "--only", "--min-ms"]);
const [distA, distB] = args.filter((a, i) => !a.startsWith("--") && !(i > 0 && valued.has(args[i - 1])));
if (!distA || !distB) {
  console.error("usage: node bench/ab.mjs <distA> <distB> [--rounds N] [--only substr] [--min-ms MS]");
  process.exit(2);
}
const rounds = Number(opt("--rounds", 9));
const minMs = Number(opt("--min-ms", 150));
const only = opt("--only", null);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "zarr-jpeg-ab-"));
execFileSync(process.execPath, [fileURLToPath(import.meta.url), "--encode", distA, dir], { stdio: "inherit" });
const ids = caseList().map((c) => c.id).filter((id) => !only || id.includes(only));
const browser = args.includes("--browser");

console.log(`A = ${path.resolve(distA)}\nB = ${path.resolve(distB)}\n${browser ? "headless Chromium" : `node ${process.version}`}, ${os.cpus().length} cpus, load ${os.loadavg().map((x) => x.toFixed(2)).join(" ")}`);
console.log("| case | A MP/s | B MP/s | B÷A | max abs diff A vs B |\n| --- | ---: | ---: | ---: | ---: |");
const print = (id, { a, b, maxDiff }) =>
  console.log(`| ${id} | ${a.toFixed(1)} | ${b.toFixed(1)} | ${(b / a).toFixed(2)}× | ${maxDiff}${maxDiff === 0 ? " (identical)" : ""} |`);
const readCase = (id) => ({
  jpeg: new Uint8Array(fs.readFileSync(path.join(dir, `${id}.jpg`))),
  ...JSON.parse(fs.readFileSync(path.join(dir, `${id}.json`), "utf8")),
});

try {
  if (browser) {
    await inChromium();
  } else {
    const { runCase } = await import("./ab-core.js");
    const load = async (dist) => {
      const lib = await import(pathToFileURL(path.join(path.resolve(dist), "loader.js")).href);
      await lib.initDecoder();
      return lib;
    };
    const A = await load(distA);
    const B = await load(distB);
    if (A === B) throw new Error("distA and distB resolve to the same module");
    for (const id of ids) {
      const { jpeg, shape, mode } = readCase(id);
      print(id, runCase(A, B, jpeg, configs[mode], shape, { rounds, minMs }));
    }
  }
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}

// Chromium mode: a local server exposes /A/ and /B/ (the two dist/ folders, loaded as
// native ES modules), /ab-core.js and the streams; the page runs the same loop.
async function inChromium() {
  const http = await import("node:http");
  const { chromium } = await import("playwright-core");
  const roots = { A: path.resolve(distA), B: path.resolve(distB), S: dir, C: here };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, "http://x");
    if (url.pathname === "/") {
      res.writeHead(200, { "content-type": "text/html" });
      return res.end("<!doctype html><title>ab</title>");
    }
    const [, top, ...rest] = url.pathname.split("/");
    const base = roots[top];
    const file = base && path.resolve(base, rest.join("/"));
    if (!file || !file.startsWith(base) || !fs.existsSync(file)) {
      res.writeHead(404);
      return res.end();
    }
    const type = file.endsWith(".js") || file.endsWith(".mjs") ? "text/javascript" : "application/octet-stream";
    res.writeHead(200, { "content-type": type });
    res.end(fs.readFileSync(file));
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${server.address().port}`;
  const browserApp = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
  try {
    const page = await browserApp.newPage();
    await page.goto(origin + "/");
    await page.evaluate(async () => {
      window.A = await import("/A/loader.js");
      window.B = await import("/B/loader.js");
      await window.A.initDecoder();
      await window.B.initDecoder();
      window.core = await import("/C/ab-core.js");
    });
    for (const id of ids) {
      const { shape, mode } = readCase(id);
      const result = await page.evaluate(
        async ({ id, config, shape, rounds, minMs }) => {
          const jpeg = new Uint8Array(await (await fetch(`/S/${id}.jpg`)).arrayBuffer());
          return window.core.runCase(window.A, window.B, jpeg, config, shape, { rounds, minMs });
        },
        { id, config: configs[mode], shape, rounds, minMs },
      );
      print(id, result);
    }
  } finally {
    await browserApp.close();
    server.close();
  }
}
