// The converter on a volume: an OME-TIFF z-stack of `--planes` uint8 planes of `--side`²
// (default 1,000 × 1,024², 1 GB), written by tifffile, converted by the npm CLI and the Python
// script, and by the obvious alternative (bench/volume-alternative.py: tifffile, numpy and
// zarr-python with imagecodecs' JPEG). Prints time and peak RSS; a stack is converted plane
// by plane, so peak RSS should not grow with the number of planes (try --planes 100 against
// 1000). `npm run bench:convert` runs the same three as its volume row.
// Run: node bench/convert-volume.mjs [--planes N] [--side S] [--keep DIR]
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { makeVolume } from "./lib/volume-input.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : fallback;
};
const planes = Number(arg("--planes", "1000"));
const side = Number(arg("--side", "1024"));
const keep = arg("--keep", null);
const dir = keep ?? fs.mkdtempSync(path.join(os.tmpdir(), "zarr-jpeg-bench-volume-"));
fs.mkdirSync(dir, { recursive: true });
const venvPython = path.join(root, ".venv", "bin", "python");
const input = path.join(dir, `volume-${planes}x${side}.ome.tif`);
const rm = (p) => fs.rmSync(p, { recursive: true, force: true });

function measure(cmd, args) {
  const r = spawnSync("/usr/bin/time", ["-f", "%e %M", cmd, ...args], { encoding: "utf8", maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} failed:\n${r.stderr}`);
  const [seconds, kb] = r.stderr.trim().split("\n").pop().split(" ").map(Number);
  return { seconds, rssMB: kb / 1024 };
}

try {
  makeVolume(venvPython, input, planes, side);
  const rows = [];
  const out = path.join(dir, "out.zarr");
  for (const [name, cmd, before, after] of [
    ["npm CLI", process.execPath, [path.join(root, "dist/cli.js"), "convert"], ["--quiet"]],
    ["Python script", path.join(root, ".venv", "bin", "zarr-jpeg"), ["convert"], ["--quiet"]],
    ["tifffile + imagecodecs + zarr-python (bench/volume-alternative.py)", venvPython, [path.join(root, "bench/volume-alternative.py")], []],
  ]) {
    rm(out);
    rows.push({ name, ...measure(cmd, [...before, input, out, ...after]) });
  }
  rm(out);
  const gb = (fs.statSync(input).size / 1e9).toFixed(2);
  console.log(`| ${planes} × ${side}² uint8 OME-TIFF (${gb} GB), ${os.availableParallelism()} CPUs | time s | peak RSS MB |`);
  console.log("| --- | --- | --- |");
  for (const r of rows) console.log(`| ${r.name} | ${r.seconds.toFixed(1)} | ${r.rssMB.toFixed(0)}${r.rssMB <= 512 ? "" : " (over 512)"} |`);
} finally {
  if (!keep) rm(dir);
}
