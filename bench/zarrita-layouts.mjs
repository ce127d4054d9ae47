#!/usr/bin/env node
// What zarrita itself costs around the jpeg codec in the two layouts a colour image can have:
// (y, x, c), where a chunk's samples are C order as the JPEG holds them, and OME-Zarr's
// (c, y, x), stored through a transpose codec (order [1, 2, 0]) so that each chunk is still one
// interleaved RGB JPEG (what `zarr-jpeg convert` writes). The 4096² RGB ihc mosaic in 256²
// chunks, 4:2:0 q90, in an in-memory store, on the calling thread (no pool), in Node:
//   write      zarr.set of the whole array
//   read       zarr.get of the whole array
//   channel    zarr.get of one channel (what a viewer that draws channels separately reads)
//   chunks     arr.getChunk() of every chunk: the decoded chunks as the codec pipeline gives
//              them, with no copy into an output array
// zarrita copies between its chunks and the caller's array element by element when the
// strides are not C order (its setFromChunkBinary), which is the transposed layout's cost.
//   node bench/zarrita-layouts.mjs [rounds=3]
import os from "node:os";
import { pathToFileURL } from "node:url";
import * as zarr from "zarrita";
import { ihcMosaic } from "./lib/images.mjs";

const rounds = Number(process.argv[2] ?? 3);
const N = 4096, C = 256;
const { register } = await import(pathToFileURL(new URL("../dist/index.js", import.meta.url).pathname).href);
const jpeg = { name: "jpeg", configuration: { quality: 90, encoded_color_space: "ycbcr", subsampling: [[2, 2], [1, 1], [1, 1]] } };
const samples = ihcMosaic(N); // (y, x, c)
const layouts = {
  "(y, x, c)": {
    shape: [N, N, 3], chunkShape: [C, C, 3], codecs: [jpeg], stride: [N * 3, 3, 1],
    channel: [null, null, 0], chunk: (i) => [i >> 4, i & 15, 0],
  },
  "(c, y, x) + transpose": {
    shape: [3, N, N], chunkShape: [3, C, C], codecs: [{ name: "transpose", configuration: { order: [1, 2, 0] } }, jpeg],
    stride: [1, N * 3, 3], // the same samples, seen as (c, y, x)
    channel: [0, null, null], chunk: (i) => [0, i >> 4, i & 15],
  },
};

const handle = register(zarr.registry);
const median = (xs) => xs.sort((a, b) => a - b)[xs.length >> 1];
const time = async (f) => {
  const t0 = performance.now();
  await f();
  return performance.now() - t0;
};
console.log(`node ${process.version}, ${os.availableParallelism()} CPUs, load ${os.loadavg()[0].toFixed(1)}; ${N}² RGB, ${C}² chunks, median of ${rounds}, ms\n`);
console.log("| layout | write | read | channel | chunks |\n| --- | ---: | ---: | ---: | ---: |");
for (const [name, l] of Object.entries(layouts)) {
  const t = { write: [], read: [], channel: [], chunks: [] };
  for (let r = 0; r < rounds + 1; r++) {
    const arr = await zarr.create(new Map(), { shape: l.shape, chunkShape: l.chunkShape, dtype: "uint8", codecs: l.codecs });
    const write = await time(() => zarr.set(arr, null, { data: samples, shape: l.shape, stride: l.stride }));
    let whole;
    const read = await time(async () => (whole = await zarr.get(arr)));
    const channel = await time(() => zarr.get(arr, l.channel));
    const chunks = await time(() => Promise.all(Array.from({ length: (N / C) ** 2 }, (_, i) => arr.getChunk(l.chunk(i)))));
    // the read gives back the samples written (up to JPEG's loss): spot-check one pixel's channels
    const at = (y, x, c) => whole.data[l.shape[0] === 3 ? c * whole.stride[0] + y * whole.stride[1] + x * whole.stride[2] : y * whole.stride[0] + x * whole.stride[1] + c * whole.stride[2]];
    for (const c of [0, 1, 2]) {
      if (Math.abs(at(1000, 2000, c) - samples[(1000 * N + 2000) * 3 + c]) > 40) throw new Error(`${name}: the read does not give back the samples`);
    }
    if (r === 0) continue; // warm-up
    for (const [k, v] of Object.entries({ write, read, channel, chunks })) t[k].push(v);
  }
  console.log(`| ${name} | ${median(t.write).toFixed(0)} | ${median(t.read).toFixed(0)} | ${median(t.channel).toFixed(0)} | ${median(t.chunks).toFixed(0)} |`);
}
await handle.close();
