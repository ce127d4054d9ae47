// Rate–distortion alone (the RD part of `npm run bench`, without the browser): ours (default
// and trellis), Pillow (libjpeg-turbo) with and without `optimize`, mozjpeg (defaults and
// baseline) at q 50–95 step 5, on ihc (tiled, ycbcr 4:2:0) and cell (tiled, grayscale);
// PSNR on Pillow's decode (bench/rd.py). Prints, per image, the curves, each curve's BD-rate
// against Pillow with `optimize` (bench/lib/rd.mjs: log(bytes) interpolated linearly in
// PSNR over the range both curves cover), and trellis against the default at q75 and q90.
//
//   node bench/rd.mjs [<dist dir>] [--size N (default 2048)] [--only ihc|cell] [--out FILE] [--md]
//                     [--tables [a,b,…]] [--image FILE[,FILE…]]
//
// --image measures your own 8-bit PNGs instead of the samples, each at its own size (unless
// --size is given): grayscale when every pixel has R = G = B, else ycbcr 4:2:0.
// --tables adds our curves with other quantisation tables (the quantTable encode option),
// each without and with trellis: the ones named, or every table but annex-k (the default).
//
// Prerequisites: `npm run build` (or a dist dir), Python 3 with Pillow and numpy.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { loadPng, tile } from "./lib/images.mjs";
import { rateDistortion, BD_REFERENCE } from "./lib/rd.mjs";
import { rdTable, bdTable, text, md } from "./lib/report.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "..");
const args = process.argv.slice(2);
const opt = (f, d) => (args.includes(f) ? args[args.indexOf(f) + 1] : d);
const valueFlags = new Set(["--size", "--only", "--out", "--tables", "--image"]);
const positional = args.filter((a, i) => !a.startsWith("--") && !valueFlags.has(args[i - 1]));
const dist = path.resolve(positional[0] ?? path.join(root, "dist"));
const imageArg = opt("--image", null);
const size = Number(opt("--size", imageArg ? 0 : 2048)); // 0: each image at its own size
const only = opt("--only", null);
const asMarkdown = args.includes("--md");
const tablesArg = args.includes("--tables") ? args[args.indexOf("--tables") + 1] : null;
const qualities = [50, 55, 60, 65, 70, 75, 80, 85, 90, 95];

const ours = await import(pathToFileURL(path.join(dist, "index.js")).href);
await ours.init();
const tables = tablesArg === null ? [] : !tablesArg || tablesArg.startsWith("--") ? (await import(pathToFileURL(path.join(dist, "advanced.js")).href)).QUANT_TABLES.filter((t) => t !== "annex-k") : tablesArg.split(",");
const work = fs.mkdtempSync(path.join(os.tmpdir(), "zarr-jpeg-rd-"));
const images = imageArg
  ? imageArg.split(",").map((file) => [path.basename(file, ".png"), ownImage(file)])
  : [
      ["ihc", loadPng(path.join(root, "samples/ihc.png"), 3)],
      ["cell", loadPng(path.join(root, "samples/cell.png"), 1)],
    ].filter(([name]) => !only || name === only);
const results = {};
try {
  for (const [name, png] of images) {
    const t0 = Date.now();
    const rd = await rateDistortion(ours, size ? tile(png, size) : png, { dir: path.join(work, name), qualities, label: name, tables });
    results[name] = rd;
    const show = asMarkdown ? md : text;
    console.log(`\n${show(rdTable({ rd }))}\n\n${show(bdTable(rd))}`);
    const c = rd.curves;
    for (const q of [75, 90]) {
      const [a, b] = [c.ours, c["ours (trellis)"]].map((pts) => pts.find((p) => p.q === q));
      console.log(
        `${name} q${q}: default ${a.bytes} B ${a.psnr.toFixed(2)} dB, trellis ${b.bytes} B ${b.psnr.toFixed(2)} dB ` +
          `(${((b.bytes / a.bytes - 1) * 100).toFixed(1)} % bytes, ${(b.psnr - a.psnr).toFixed(2)} dB)`,
      );
    }
    console.log(`(${((Date.now() - t0) / 1000).toFixed(0)} s; BD-rate against ${BD_REFERENCE}, Pillow ${rd.meta.pillow}, libjpeg ${rd.meta.libjpeg})`);
  }
} finally {
  fs.rmSync(work, { recursive: true, force: true });
}
const out = opt("--out", path.join(root, "bench/results/rd.json"));
fs.mkdirSync(path.dirname(out), { recursive: true });
fs.writeFileSync(out, JSON.stringify({ date: new Date().toISOString(), dist, size, results }, null, 1));
console.log(`wrote ${path.relative(process.cwd(), out)}`);

/** A PNG of the caller's: grayscale (1 channel) when every pixel is gray, else RGB. */
function ownImage(file) {
  const rgb = loadPng(file, 3);
  for (let i = 0; i < rgb.data.length; i += 3) {
    if (rgb.data[i] !== rgb.data[i + 1] || rgb.data[i] !== rgb.data[i + 2]) return rgb;
  }
  return loadPng(file, 1);
}
