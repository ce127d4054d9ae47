#!/usr/bin/env node
// What zarrita itself costs in the read of bench/zarrita-blocking.mjs (a 4096×4096 RGB uint8
// array in 256² chunks, from a Map store, in Node): the same read of the same samples stored
// with no compression (zarrita's `bytes` codec only), so no codec runs at all, alternated with
// the JPEG array's read on the main thread. The difference is what decoding costs per read,
// the most a pool of workers can take off the main thread; zarrita's own work (finding the
// chunks, copying each one's rows into the output array, the garbage that makes) stays there.
// For the CPU time of every thread in pooled reads, see `node bench/zarrita-blocking.mjs 2 5
// --cpu`.
//   node bench/zarrita-floor.mjs [rounds=7] [--dist=DIR]
import path from "node:path";
import { pathToFileURL } from "node:url";
import * as zarr from "zarrita";
import { ihcMosaic } from "./lib/images.mjs";

const distOption = process.argv.find((a) => a.startsWith("--dist="));
const dist = distOption ? path.resolve(distOption.slice("--dist=".length)) : new URL("../dist", import.meta.url).pathname;
const { register } = await import(pathToFileURL(path.join(dist, "index.js")).href);
const rounds = Number(process.argv.slice(2).find((a) => !a.startsWith("--")) ?? 7);
const N = 4096;
const C = 256;

async function makeStore(codecs, data) {
  const store = new Map();
  const arr = await zarr.create(store, { shape: [N, N, 3], chunkShape: [C, C, 3], dtype: "uint8", codecs });
  await zarr.set(arr, null, { data, shape: [N, N, 3], stride: [N * 3, 3, 1] });
  return store;
}

async function medianRead(store) {
  const arr = await zarr.open(store, { kind: "array" });
  await zarr.get(arr, [null, null, null]); // warm-up
  const times = [];
  for (let r = 0; r < rounds; r++) {
    const t0 = performance.now();
    const out = await zarr.get(arr, [null, null, null]);
    times.push(performance.now() - t0);
    if (out.data.length !== N * N * 3) throw new Error("short read");
  }
  return times.sort((a, b) => a - b)[times.length >> 1];
}

const handle = register(zarr.registry);
const data = ihcMosaic(N); // the samples of bench/zarrita-blocking.mjs
const raw = await makeStore([], data);
const jpeg = await makeStore(
  [{ name: "jpeg", configuration: { quality: 90, encoded_color_space: "ycbcr", subsampling: [[2, 2], [1, 1], [1, 1]] } }],
  data,
);
// Alternate the two, so that machine noise hits both alike.
const floor = [];
const single = [];
for (let i = 0; i < 3; i++) {
  floor.push(await medianRead(raw));
  single.push(await medianRead(jpeg));
}
await handle.close();
const med = (xs) => xs.sort((a, b) => a - b)[1];
const f = med(floor);
const s = med(single);
console.log(`node ${process.version}; ${N}×${N}×3 uint8 in ${C}² chunks from a Map store; median of ${rounds} reads, median of 3 alternations`);
console.log(`no codec (bytes only): ${f.toFixed(0)} ms per read (zarrita's own work, which stays on the main thread)`);
console.log(`jpeg 4:2:0 q90, decoded on the main thread: ${s.toFixed(0)} ms per read, ${(s - f).toFixed(0)} ms (${((100 * (s - f)) / s).toFixed(0)} %) of it decoding`);
