#!/usr/bin/env node
// Main-thread blocking while zarrita reads a 4096×4096 RGB jpeg array in 256² chunks,
// decoding on the main thread vs in the worker pool (register(registry, {workers})).
//   node bench/zarrita-blocking.mjs [workers=os.availableParallelism()] [rounds=3]
// A 1 ms timer runs on the main thread during the read; every gap between its ticks is
// time the thread could not respond. Reported: wall time, longest block, total blocking
// time (sum of gap - 50 ms over gaps > 50 ms, the web's TBT) and time in gaps > 16 ms.
import fs from "node:fs";
import os from "node:os";
import { PNG } from "pngjs";
import * as zarr from "zarrita";
import * as pkg from "../dist/index.js";

const api = "register" in pkg ? pkg : { ...pkg, ...(await import("../dist/zarrita.js")) };
const workers = Number(process.argv[2] ?? os.availableParallelism());
const rounds = Number(process.argv[3] ?? 3);
const N = 4096, C = 256;

function monitor() {
  const gaps = [];
  let last = performance.now();
  let timer;
  const tick = () => {
    const now = performance.now();
    gaps.push(now - last);
    last = now;
    timer = setTimeout(tick, 1);
  };
  timer = setTimeout(tick, 1);
  return () => {
    clearTimeout(timer);
    gaps.push(performance.now() - last);
    return {
      longest: Math.max(...gaps),
      tbt: gaps.filter((g) => g > 50).reduce((s, g) => s + g - 50, 0),
      over16: gaps.filter((g) => g > 16).reduce((s, g) => s + g, 0),
    };
  };
}

async function makeStore() {
  const store = new Map();
  api.register(zarr.registry);
  const arr = await zarr.create(store, {
    shape: [N, N, 3], chunkShape: [C, C, 3], dtype: "uint8",
    codecs: [{ name: "jpeg", configuration: { quality: 90, encoded_color_space: "ycbcr", subsampling: [[2, 2], [1, 1], [1, 1]] } }],
  });
  // Real microscopy content: scikit-image's ihc.png (512×512 RGB) tiled over the array.
  const png = PNG.sync.read(fs.readFileSync(new URL("../samples/ihc.png", import.meta.url)));
  const data = new Uint8Array(N * N * 3);
  for (let y = 0; y < N; y++) for (let x = 0; x < N; x++) {
    const i = (y * N + x) * 3;
    const j = (((y + (x >> 9) * 37) % png.height) * png.width + ((x + (y >> 9) * 53) % png.width)) * 4;
    data[i] = png.data[j]; data[i + 1] = png.data[j + 1]; data[i + 2] = png.data[j + 2];
  }
  await zarr.set(arr, null, { data, shape: [N, N, 3], stride: [N * 3, 3, 1] });
  return store;
}

async function measure(store, n) {
  const handle = api.register(zarr.registry, n > 0 ? { workers: n } : {});
  const arr = await zarr.open(store, { kind: "array" });
  await zarr.get(arr, [zarr.slice(0, C), zarr.slice(0, C), null]); // warm up: wasm + workers started
  const results = [];
  for (let r = 0; r < rounds; r++) {
    const stop = monitor();
    const t0 = performance.now();
    const out = await zarr.get(arr, [null, null, null]);
    const wall = performance.now() - t0;
    const m = stop();
    if (out.data.length !== N * N * 3) throw new Error("short read");
    results.push({ wall, ...m });
  }
  const mode = handle.pool?.mode ?? "main thread";
  await handle.close();
  const med = (key) => results.map((r) => r[key]).sort((a, b) => a - b)[Math.floor(results.length / 2)];
  return { mode, wall: med("wall"), longest: med("longest"), tbt: med("tbt"), over16: med("over16") };
}

const t = performance.now();
const store = await makeStore();
const bytes = [...store.values()].reduce((s, v) => s + v.length, 0);
console.log(`store: ${N}×${N}×3 uint8, ${C}² chunks (${(N / C) ** 2}), jpeg 4:2:0 q90, ${(bytes / 1e6).toFixed(1)} MB, written in ${((performance.now() - t) / 1000).toFixed(1)} s`);
console.log(`node ${process.version}, ${os.availableParallelism()} CPUs, median of ${rounds} reads`);
for (const n of [0, workers]) {
  const r = await measure(store, n);
  console.log(
    `${n === 0 ? "no pool           " : `pool, ${n} worker${n > 1 ? "s" : ""}      `.slice(0, 18)} (${r.mode}): wall ${r.wall.toFixed(0)} ms, ` +
      `longest main-thread block ${r.longest.toFixed(1)} ms, total blocking time ${r.tbt.toFixed(0)} ms, time in >16 ms blocks ${r.over16.toFixed(0)} ms`,
  );
}
