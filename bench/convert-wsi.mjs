#!/usr/bin/env node
// `npm run bench:convert`: the converter against libvips on whole-slide-sized inputs (and
// against tifffile + zarr-python on a volume), side by side in one run, each process
// measured from outside (/usr/bin/time: wall time and peak RSS of the whole process tree's
// largest process), with libvips from Debian's libvips-tools (scripts/setup.sh installs it).
//
//   - pyramidal JPEG-tiled BigTIFFs made here from samples/ihc.png with `vips replicate` +
//     `vips tiffsave --tile --pyramid --compression jpeg --Q 85 --bigtiff` at several sizes
//     (default 100 MP, 679 MP ≈ 26,000², 2 GP): `zarr-jpeg convert` (level 0 copied) against
//     `vips dzsave … --tile-size 256 --overlap 0 --suffix .jpg[Q=85]` (a 256-px JPEG pyramid);
//   - a PNG (default 12,000²) and a baseline JPEG (default 16,000², Q85, made by `vips
//     jpegsave`; streamed a band of rows at a time): `zarr-jpeg convert` against the same
//     `vips dzsave`;
//   - a DICOM whole-slide series (default 26,000²): an Aperio-style SVS of 240² JPEG tiles and
//     wsidicomizer's DICOM of it, made by bench/make-dicom-slide.py (the Python environment's
//     wsidicomizer): `zarr-jpeg convert` of the DICOM folder (frames copied) against `vips
//     dzsave` of the SVS it was made from;
//   - an OME-TIFF z-stack (default 1,000 × 1,024² uint8, 1 GB, written by tifffile plane by
//     plane; bench/lib/volume-input.mjs): `zarr-jpeg convert` against the obvious alternative,
//     bench/volume-alternative.py (tifffile reads each plane, numpy halves it into a pyramid,
//     zarr-python writes 256² chunks with imagecodecs' JPEG at Q85).
// Each input is converted by the npm CLI (the Rust core in wasm) and, when the project's
// Python environment has the package (scripts/setup.sh), by the Python package's
// `zarr-jpeg` script (the same core, native): the two write the same store.
//
// Prints a table (time, peak RSS, bytes written; ours ÷ the reference; Python ÷ npm) and the
// targets: peak RSS ≤ 512 MB, TIFF wall time ≤ 0.7× vips dzsave, PNG ≤ 1.4× vips dzsave,
// the volume no slower than the alternative,
// RSS flat (±20 %) over the TIFF sizes, Python within 10 % of the npm CLI.
//   node bench/convert-wsi.mjs [--sides 10000,26000,45000] [--png 12000] [--jpeg 16000] [--dicom 26000]
//     [--volume 1000] [--volume-side 1024] [--workers N] [--keep DIR] [--publish]
//
// --publish commits the run: bench/convert-results.json and the table in bench/README.md
// (bench/lib/convert-table.mjs renders both; a test checks they agree).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { execFileSync, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { convertTable, publish } from "./lib/convert-table.mjs";
import { makeVolume } from "./lib/volume-input.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const sides = arg("--sides", "10000,26000,45000").split(",").filter(Boolean).map(Number);
const pngSide = Number(arg("--png", "12000"));
const jpegSide = Number(arg("--jpeg", "16000"));
const dicomSide = Number(arg("--dicom", "26000"));
const volumePlanes = Number(arg("--volume", "1000"));
const volumeSide = Number(arg("--volume-side", "1024"));
const workers = arg("--workers", null);
const keep = arg("--keep", null);
const publishRun = process.argv.includes("--publish");
for (const tool of ["vips", "/usr/bin/time"]) {
  if (spawnSync("sh", ["-c", `command -v ${tool}`]).status !== 0) {
    console.error(`bench:convert needs ${tool} (Debian: libvips-tools, time); run npm run setup`);
    process.exit(1);
  }
}
const cli = path.join(root, "dist/cli.js");
if (!fs.existsSync(cli)) {
  console.error("dist/ is missing: run npm run build");
  process.exit(1);
}
const dir = keep ?? fs.mkdtempSync(path.join(os.tmpdir(), "zarr-jpeg-bench-convert-"));
fs.mkdirSync(dir, { recursive: true });
const sample = path.join(root, "samples/ihc.png"); // 512 × 512

/** Runs a command under /usr/bin/time: { seconds, rssMB }. */
function measure(cmd, args) {
  const r = spawnSync("/usr/bin/time", ["-f", "%e %M", cmd, ...args], { encoding: "utf8", maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} failed:\n${r.stderr}`);
  const [seconds, kb] = r.stderr.trim().split("\n").pop().split(" ").map(Number);
  return { seconds, rssMB: kb / 1024 };
}

function bytesUnder(p) {
  let total = 0;
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const f = path.join(d, e.name);
      if (e.isDirectory()) walk(f);
      else total += fs.statSync(f).size;
    }
  };
  if (fs.statSync(p).isDirectory()) walk(p);
  else total = fs.statSync(p).size;
  return total;
}

const rm = (p) => fs.rmSync(p, { recursive: true, force: true });
const ours = (input, out) => {
  rm(out);
  const m = measure(process.execPath, [cli, "convert", input, out, "--quiet", ...(workers !== null ? ["--workers", workers] : [])]);
  return { ...m, bytes: bytesUnder(out) };
};
const pythonCli = path.join(root, ".venv", "bin", "zarr-jpeg");
const hasPython = fs.existsSync(pythonCli);
const python = (input, out) => {
  rm(out);
  const m = measure(pythonCli, ["convert", input, out, "--quiet", ...(workers !== null ? ["--workers", workers] : [])]);
  return { ...m, bytes: bytesUnder(out) };
};
const dz = (input, out) => {
  rm(out);
  rm(`${out}_files`);
  rm(`${out}.dzi`);
  const m = measure("vips", ["dzsave", input, out, "--tile-size", "256", "--overlap", "0", "--suffix", ".jpg[Q=85]"]);
  return { ...m, bytes: bytesUnder(`${out}_files`) };
};

const meta = {
  date: new Date().toISOString(),
  git: spawnSync("git", ["rev-parse", "--short", "HEAD"], { cwd: root, encoding: "utf8" }).stdout?.trim() || null,
  nproc: os.availableParallelism(),
  loadavgAtStart: os.loadavg(),
  node: process.version,
  vips: execFileSync("vips", ["--version"], { encoding: "utf8" }).trim(),
  workers,
};
console.log(`node ${meta.node}, ${meta.nproc} CPUs, load ${meta.loadavgAtStart.map((l) => l.toFixed(1)).join(" ")}; ` +
  `${meta.vips}; zarr-jpeg convert --workers ${workers ?? "default"}\n`);
const rows = [];

/** `file`: samples/ihc.png replicated and cropped to side², saved by `vips <save…> crop.v file` (made once, kept with --keep). */
function makeInput(file, side, save) {
  if (fs.existsSync(file)) return file;
  const reps = String(Math.ceil(side / 512));
  const v = path.join(dir, "rep.v");
  const crop = path.join(dir, "crop.v");
  execFileSync("vips", ["replicate", sample, v, reps, reps]);
  execFileSync("vips", ["crop", v, crop, "0", "0", String(side), String(side)]);
  execFileSync("vips", [save[0], crop, file, ...save.slice(1)]);
  rm(v);
  rm(crop);
  return file;
}

/**
 * Ours (npm, then Python) on `file`, then the reference, `run()` (by default `vips dzsave` of
 * `file`): { ours, python, reference, alternative }, their outputs removed.
 */
function sideBySide(file, reference = "vips dzsave", run = () => dzRemoved(file)) {
  const a = ours(file, path.join(dir, "ours.zarr"));
  rm(path.join(dir, "ours.zarr"));
  const p = hasPython ? python(file, path.join(dir, "python.zarr")) : null;
  rm(path.join(dir, "python.zarr"));
  return { ours: a, python: p, reference, alternative: run() };
}

/** `vips dzsave` of `file`, its output removed. */
function dzRemoved(file) {
  const b = dz(file, path.join(dir, "dz"));
  rm(path.join(dir, "dz_files"));
  return b;
}
const megabytes = (file) => (fs.statSync(file).size / 1e6).toFixed(0);

try {
  for (const side of sides) {
    const tif = makeInput(path.join(dir, `slide-${side}.tif`), side,
      ["tiffsave", "--tile", "--pyramid", "--compression", "jpeg", "--Q", "85", "--bigtiff", "--tile-width", "256", "--tile-height", "256"]);
    const mp = (side * side) / 1e6;
    rows.push({ input: `JPEG-tiled BigTIFF ${side}² (${mp.toFixed(0)} MP, ${megabytes(tif)} MB)`, megapixels: mp, ...sideBySide(tif), timeLimit: 0.7 });
    if (!keep) rm(tif);
  }
  if (pngSide > 0) {
    const png = makeInput(path.join(dir, `image-${pngSide}.png`), pngSide, ["copy"]);
    rows.push({ input: `PNG ${pngSide}² (${megabytes(png)} MB)`, megapixels: null, ...sideBySide(png), timeLimit: 1.4 });
  }
  if (jpegSide > 0) {
    const jpeg = makeInput(path.join(dir, `image-${jpegSide}.jpg`), jpegSide, ["jpegsave", "--Q", "85"]);
    const raw = (jpegSide * jpegSide * 3) / 1e6;
    rows.push({ input: `JPEG ${jpegSide}² (${megabytes(jpeg)} MB; ${raw.toFixed(0)} MB of samples)`, megapixels: null, ...sideBySide(jpeg), timeLimit: null });
  }
  const venvPython = path.join(root, ".venv", "bin", "python");
  if (dicomSide > 0 && fs.existsSync(venvPython)) {
    const slide = path.join(dir, `dicom-${dicomSide}`);
    if (!fs.existsSync(path.join(slide, "dicom"))) {
      execFileSync(venvPython, [path.join(root, "bench/make-dicom-slide.py"), sample, String(dicomSide), slide], { stdio: "inherit" });
    }
    const folder = path.join(slide, "dicom");
    const mp = (dicomSide * dicomSide) / 1e6;
    rows.push({ input: `DICOM WSI ${dicomSide}² (${mp.toFixed(0)} MP, ${(bytesUnder(folder) / 1e6).toFixed(0)} MB; vips: the SVS it was made from)`,
      megapixels: null, ...sideBySide(folder, "vips dzsave", () => dzRemoved(path.join(slide, "slide.svs"))), timeLimit: 0.7 });
    if (!keep) rm(slide);
  } else if (dicomSide > 0) {
    console.error("the DICOM row needs the project's Python environment (.venv, with wsidicomizer): run npm run setup");
  }
  if (volumePlanes > 0 && fs.existsSync(venvPython)) {
    const stack = makeVolume(venvPython, path.join(dir, `volume-${volumePlanes}x${volumeSide}.ome.tif`), volumePlanes, volumeSide);
    const alternative = () => {
      const out = path.join(dir, "alternative.zarr");
      const b = { ...measure(venvPython, [path.join(root, "bench/volume-alternative.py"), stack, out]), bytes: bytesUnder(out) };
      rm(out);
      return b;
    };
    rows.push({ input: `uint8 OME-TIFF z-stack ${volumePlanes} × ${volumeSide}² (${(fs.statSync(stack).size / 1e9).toFixed(2)} GB)`,
      megapixels: null, ...sideBySide(stack, "tifffile + imagecodecs + zarr-python (bench/volume-alternative.py)", alternative), timeLimit: 1 });
    if (!keep) rm(stack);
  } else if (volumePlanes > 0) {
    console.error("the volume row needs the project's Python environment (.venv, with tifffile): run npm run setup");
  }
} finally {
  if (!keep) rm(dir);
}

const results = { meta, rows };
console.log(convertTable(results));
if (publishRun) {
  publish(results);
  console.log("\nwrote bench/convert-results.json and bench/README.md's converter table");
}
