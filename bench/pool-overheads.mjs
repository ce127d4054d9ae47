#!/usr/bin/env node
// What bounds the decode pool on this machine, in two numbers (Node, worker_threads):
// 1. whether two threads decode as fast as one each (real cores, or hyperthreads/a shared
//    core): decodes per second of one 256² 4:2:0 chunk (ihc) in one worker alone, then in
//    each of two workers at once;
// 2. the CPU time the process spends per chunk on moving it to a worker and back, without
//    decoding: a message like the pool's job (config, shape, 22 KB of bytes transferred) and
//    an answer transferring a fresh 196 KB array, summed over all threads.
// A pooled read can only be faster than a single-threaded one by as much as its CPU time
// over the cores allows (bench/zarrita-blocking.mjs --cpu measures that per thread).
//   node bench/pool-overheads.mjs [--dist=DIR]
import { Worker, isMainThread, parentPort, workerData } from "node:worker_threads";
import path from "node:path";
import { CONFIGS, loaderUrl } from "./lib/builds.mjs";

const config = CONFIGS["420"];
const shape = [256, 256, 3];

if (isMainThread) {
  const distOption = process.argv.find((a) => a.startsWith("--dist="));
  const dist = distOption ? path.resolve(distOption.slice("--dist=".length)) : new URL("../dist", import.meta.url).pathname;
  const loader = loaderUrl(dist);
  const api = await import(loader);
  await api.init();
  const { loadPng, tile } = await import("./lib/images.mjs");
  // the top-left 256² of ihc.png (tile() of a larger image is its top-left crop)
  const { data } = tile(loadPng(new URL("../samples/ihc.png", import.meta.url), 3), 256);
  const stream = api.encode(config, data, shape);

  const start = (task) => new Worker(new URL(import.meta.url), { workerData: { task, loader, stream } });
  const decodeRates = (n) =>
    Promise.all(Array.from({ length: n }, () => new Promise((resolve, reject) => {
      const worker = start("decode");
      worker.once("message", (rate) => resolve(rate) || worker.terminate());
      worker.once("error", reject);
    })));
  console.log(`node ${process.version}, ${(await import("node:os")).availableParallelism()} CPUs\n`);
  console.log("1. decodes per second of one 256² 4:2:0 chunk (decodeInto, after 1.5 s of warm-up), per worker:");
  for (let round = 0; round < 3; round++) {
    const [one] = await decodeRates(1);
    const two = await decodeRates(2);
    console.log(`   one worker alone ${one.toFixed(0)}; two at once ${two.map((r) => r.toFixed(0)).join(" and ")} (${two.map((r) => (r / one).toFixed(2) + "×").join(", ")} of one)`);
  }

  const N = 2000;
  const worker = start("echo");
  await new Promise((resolve) => worker.once("message", resolve)); // started
  const before = process.cpuUsage();
  const t0 = performance.now();
  await new Promise((resolve) => {
    let answered = 0;
    worker.on("message", () => ++answered === N && resolve());
    for (let id = 0; id < N; id++) {
      const bytes = new Uint8Array(22000);
      worker.postMessage({ id, config, bytes, shape }, [bytes.buffer]);
    }
  });
  const cpu = process.cpuUsage(before);
  await worker.terminate();
  console.log(`\n2. ${N} jobs to a worker and back without decoding: ${(performance.now() - t0).toFixed(0)} ms wall, ` +
    `${((cpu.user + cpu.system) / N).toFixed(0)} µs of CPU per chunk (all threads)`);
} else {
  const { task, loader, stream } = workerData;
  if (task === "decode") {
    const api = await import(loader);
    await api.initDecoder();
    const out = new Uint8Array(256 * 256 * 3);
    const rate = (ms) => {
      const t0 = performance.now();
      let n = 0;
      while (performance.now() - t0 < ms) {
        api.decodeInto(config, stream, shape, out);
        n++;
      }
      return n / ((performance.now() - t0) / 1000);
    };
    rate(1500); // lets the engine tier the decoder up
    parentPort.postMessage(rate(2000));
  } else {
    parentPort.on("message", ({ id }) => {
      const data = new Uint8Array(256 * 256 * 3);
      parentPort.postMessage({ id, data }, [data.buffer]);
    });
    parentPort.postMessage("started");
  }
}
