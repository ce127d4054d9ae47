#!/usr/bin/env node
// A/B encode benchmark of two builds of the package in one Node process:
//   node bench/ab-encode.mjs <distA> <distB> [--reps N] [--only <case-id substring>] [--min-ms M] [--cpu]
// e.g. a scalar dist/ copy against a simd128 one. Cases: ihc.png tiled to 2048² and
// centre-cropped to 512² and 256² in 4:2:0, 4:4:4 and `rgb`; cell.png likewise in
// grayscale; quality 90 (as bench/run.mjs). For each case it first checks that A and B
// write identical bytes, warms both up, then takes N rounds alternating A and B (each
// sample batched to ≥ --min-ms), and prints the median MP/s of each and B ÷ A. With --cpu,
// samples are the process's CPU time (user + system) instead of wall time: steadier when
// other work shares the cores (time spent descheduled is not counted).
import path from "node:path";
import os from "node:os";
import { pathToFileURL, fileURLToPath } from "node:url";
import { loadPng, tile, centreCrop } from "./lib/images.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "..");
const args = process.argv.slice(2);
const opt = (f, d) => (args.includes(f) ? args[args.indexOf(f) + 1] : d);
const valued = ["--reps", "--only", "--min-ms"];
const positional = args.filter((a, i) => !a.startsWith("--") && !(i > 0 && valued.includes(args[i - 1])));
if (positional.length !== 2) {
  console.error("usage: node bench/ab-encode.mjs <distA> <distB> [--reps N] [--only substr] [--min-ms M]");
  process.exit(2);
}
const reps = Number(opt("--reps", 9));
const minMs = Number(opt("--min-ms", 40));
const only = opt("--only", null);
const cpu = args.includes("--cpu");
const now = cpu
  ? () => {
      const u = process.cpuUsage();
      return (u.user + u.system) / 1000;
    }
  : () => performance.now();

const load = async (dir) => {
  const mod = await import(pathToFileURL(path.resolve(dir, "index.js")).href);
  await mod.init();
  return mod;
};
const [A, B] = [await load(positional[0]), await load(positional[1])];

const CONFIGS = {
  "420": { quality: 90, encoded_color_space: "ycbcr", subsampling: [[2, 2], [1, 1], [1, 1]] },
  "444": { quality: 90, encoded_color_space: "ycbcr", subsampling: [[1, 1], [1, 1], [1, 1]] },
  rgb: { quality: 90, encoded_color_space: "rgb" },
  gray: { quality: 90, encoded_color_space: "grayscale" },
};
const ihc = loadPng(path.join(root, "samples/ihc.png"), 3);
const cell = loadPng(path.join(root, "samples/cell.png"), 1);
const cases = [];
for (const size of [2048, 512, 256]) {
  const make = (img) => (size === 2048 ? tile(img, size) : centreCrop(img, size));
  const colour = make(ihc);
  const gray = make(cell);
  for (const mode of ["420", "444", "rgb"]) cases.push({ id: `ihc-${size}-${mode}`, img: colour, mode });
  cases.push({ id: `cell-${size}-gray`, img: gray, mode: "gray" });
}

const shapeOf = (img) => (img.channels === 3 ? [img.height, img.width, 3] : [img.height, img.width]);
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

function sample(mod, c, iters) {
  const config = CONFIGS[c.mode];
  const shape = shapeOf(c.img);
  const t = now();
  for (let i = 0; i < iters; i++) mod.encode(config, c.img.data, shape);
  return (now() - t) / iters;
}

console.log(`A = ${positional[0]}\nB = ${positional[1]}\nnode ${process.version}, ${os.cpus().length} cpus, load ${os.loadavg().map((x) => x.toFixed(2)).join(" ")}; median of ${reps} alternating samples of ${cpu ? "CPU" : "wall"} time\n`);
console.log("| case | bytes | identical | A MP/s | B MP/s | B ÷ A |\n| --- | ---: | :---: | ---: | ---: | ---: |");
for (const c of cases) {
  if (only && !c.id.includes(only)) continue;
  const shape = shapeOf(c.img);
  const a = A.encode(CONFIGS[c.mode], c.img.data, shape);
  const b = B.encode(CONFIGS[c.mode], c.img.data, shape);
  const same = a.length === b.length && a.every((v, i) => v === b[i]);
  // warm-up and batch size: each sample runs ≥ minMs
  let once = 0;
  for (let w = 0; w < 3; w++) once = Math.min(sample(A, c, 1), sample(B, c, 1), once || Infinity);
  const iters = Math.max(1, Math.ceil(minMs / once));
  const ta = [];
  const tb = [];
  for (let r = 0; r < reps; r++) {
    if (r % 2 === 0) {
      ta.push(sample(A, c, iters));
      tb.push(sample(B, c, iters));
    } else {
      tb.push(sample(B, c, iters));
      ta.push(sample(A, c, iters));
    }
  }
  const mp = (c.img.width * c.img.height) / 1e6;
  const [ma, mb] = [mp / (median(ta) / 1000), mp / (median(tb) / 1000)];
  console.log(`| ${c.id} | ${a.length} | ${same ? "yes" : "**NO**"} | ${ma.toFixed(1)} | ${mb.toFixed(1)} | ${(mb / ma).toFixed(2)}× |`);
  if (!same) process.exitCode = 1;
}
