#!/usr/bin/env node
// The converter with and without worker threads: convert() of scikit-image's ihc tiled to
// 4096² (the zarrita benchmarks' image), given as samples and as a JPEG (q95, 4:4:4, decoded
// by this package), into a fresh OME-Zarr store each time, alternating worker counts, in Node.
// Prints the median seconds per count, and checks that every store is the same bytes.
//   node bench/convert-workers.mjs [rounds=3] [workers=0,1,2]
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { ihcMosaic } from "./lib/images.mjs";
import { storeFiles } from "../tests/js/helpers/store-files.mjs";

const rounds = Number(process.argv[2] ?? 3);
const counts = (process.argv[3] ?? "0,1,2").split(",").map(Number);
const dist = new URL("../dist/", import.meta.url).pathname;
const { init, encode } = await import(pathToFileURL(path.join(dist, "index.js")).href);
const { convert } = await import(pathToFileURL(path.join(dist, "convert.js")).href);
await init();

const N = 4096;
const samples = ihcMosaic(N);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "zarr-jpeg-convert-bench-"));
const jpegFile = path.join(dir, "ihc.jpg");
fs.writeFileSync(jpegFile, encode({ quality: 95, encoded_color_space: "ycbcr", subsampling: [[1, 1], [1, 1], [1, 1]] }, samples, [N, N, 3]));
const inputs = { samples: { data: samples, shape: [N, N, 3] }, "JPEG file": jpegFile };

console.log(`node ${process.version}, ${os.availableParallelism()} CPUs, load ${os.loadavg()[0].toFixed(1)}; ihc tiled to ${N}², default options (q95 4:2:0, 256² chunks, 5 levels); median of ${rounds}, s\n`);
console.log(`| input | ${counts.map((c) => `${c} workers`).join(" | ")} |\n| --- |${counts.map(() => " ---: |").join("")}`);
try {
  for (const [name, input] of Object.entries(inputs)) {
    const seconds = new Map(counts.map((c) => [c, []]));
    let reference = null;
    for (let r = 0; r < rounds + 1; r++) {
      for (const workers of counts) {
        const store = path.join(dir, `out-${workers}.zarr`);
        const summary = await convert(input, store, { workers, overwrite: true });
        if (summary.workers !== workers) throw new Error(`asked for ${workers} workers, encoded in ${summary.workers}`);
        const written = storeFiles(store);
        reference ??= written;
        for (const [rel, bytes] of reference) if (!bytes.equals(written.get(rel))) throw new Error(`${name}: ${rel} differs with ${workers} workers`);
        if (r > 0) seconds.get(workers).push(summary.seconds);
      }
    }
    const median = (xs) => xs.sort((a, b) => a - b)[xs.length >> 1];
    console.log(`| ${name} | ${counts.map((c) => median(seconds.get(c)).toFixed(3)).join(" | ")} |`);
  }
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
