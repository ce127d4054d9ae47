#!/usr/bin/env node
// Main-thread blocking while zarrita reads a 4096×4096 RGB jpeg array in 256² chunks,
// decoding on the main thread vs in the worker pool (register(registry, {workers})).
//   node bench/zarrita-blocking.mjs [workers=os.availableParallelism()] [rounds=3] [--browser [--queue=N]] [--profile] [--dist=DIR]
// --dist reads with another build of the package (default: ../dist), e.g. to alternate two builds.
// --cpu (Linux) also prints the CPU time each read took on the main thread, in the pool's
// workers and in the process's other threads (V8's GC and compiler helpers), and how long
// the main thread waited for a core: with as many busy threads as cores or more, the wall
// time is bounded by their sum over the cores.
// --profile also prints where the main thread spends its time during the reads (V8 CPU
// profile, self time per function), with and without the pool.
// --write measures writes instead (Node only): zarr.set of the whole array into a new
// in-memory store, encoding on the main thread vs in the pool.
// --browser also reads the same store in headless Chromium, over HTTP (FetchStore) and from
// memory (bytes already fetched or cached: decoding is then the bottleneck), where
// blocking is measured with the Long Tasks API (longest task, TBT) and a rAF loop.
// A 1 ms timer runs on the main thread during the read; every gap between its ticks is
// time the thread could not respond. Reported: wall time, longest block, total blocking
// time (sum of gap - 50 ms over gaps > 50 ms, the web's TBT) and time in gaps > 16 ms.
import fs from "node:fs";
import os from "node:os";
import { ihcMosaic } from "./lib/images.mjs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import * as zarr from "zarrita";

const distOption = process.argv.find((a) => a.startsWith("--dist="));
const dist = distOption ? path.resolve(distOption.slice("--dist=".length)) : new URL("../dist", import.meta.url).pathname;
const pkg = await import(pathToFileURL(path.join(dist, "index.js")).href);
const api = "register" in pkg ? pkg : { ...pkg, ...(await import(pathToFileURL(path.join(dist, "zarrita.js")).href)) };
const args = process.argv.slice(2).filter((a) => !a.startsWith("--"));
const inBrowser = process.argv.includes("--browser");
// --queue=N (with --browser): zarr.get's createQueue option with at most N chunks in flight,
// instead of zarrita's default, which starts every chunk's fetch in one task.
const queueOption = process.argv.find((a) => a.startsWith("--queue="));
const queueLimit = queueOption ? Number(queueOption.slice("--queue=".length)) : 0;
if (!(Number.isInteger(queueLimit) && queueLimit >= 0)) throw new Error(`--queue=N needs a whole number, got ${queueOption}`);
const profiling = process.argv.includes("--profile");
const writing = process.argv.includes("--write");
const opName = writing ? "write" : "read";
if (writing && inBrowser) throw new Error("--write is measured in Node only; leave out --browser");
const cpuTimes = process.argv.includes("--cpu") && fs.existsSync("/proc/self/task");
if (process.argv.includes("--cpu") && !cpuTimes) console.log("--cpu: no /proc/self/task here (Linux only); CPU times left out");
const workers = Number(args[0] ?? os.availableParallelism());
const rounds = Number(args[1] ?? 3);
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

// Real microscopy content: scikit-image's ihc.png (512×512 RGB) tiled over the array.
const samples = ihcMosaic(N);

/** A new array in a new in-memory store; with `write`, the samples written to it. */
async function makeStore(write = true) {
  const store = new Map();
  const arr = await zarr.create(store, {
    shape: [N, N, 3], chunkShape: [C, C, 3], dtype: "uint8",
    codecs: [{ name: "jpeg", configuration: { quality: 90, encoded_color_space: "ycbcr", subsampling: [[2, 2], [1, 1], [1, 1]] } }],
  });
  if (write) {
    const handle = api.register(zarr.registry);
    await zarr.set(arr, null, { data: samples, shape: [N, N, 3], stride: [N * 3, 3, 1] });
    await handle.close();
  }
  return { store, arr };
}

/** One timed operation: a read of the whole array, or (--write) a write of it into a new store. */
async function operation(store) {
  if (!writing) {
    const out = await zarr.get(await zarr.open(store, { kind: "array" }), [null, null, null]);
    if (out.data.length !== N * N * 3) throw new Error("short read");
    return;
  }
  const { arr } = await makeStore(false);
  await zarr.set(arr, null, { data: samples, shape: [N, N, 3], stride: [N * 3, 3, 1] });
}

async function measure(store, n) {
  const threadsBefore = cpuTimes ? threadTimes() : null;
  const handle = api.register(zarr.registry, n > 0 ? { workers: n } : {});
  // warm up: wasm (the encoder too, for writes) and workers started
  await zarr.get(await zarr.open(store, { kind: "array" }), [zarr.slice(0, C), zarr.slice(0, C), null]);
  if (writing) await zarr.set((await makeStore(false)).arr, [zarr.slice(0, C), zarr.slice(0, C), null], { data: samples.subarray(0, C * C * 3), shape: [C, C, 3], stride: [C * 3, 3, 1] });
  const poolThreads = cpuTimes ? [...threadTimes().keys()].filter((tid) => !threadsBefore.has(tid)) : [];
  const results = [];
  const profiler = profiling ? await startProfile() : null;
  for (let r = 0; r < rounds; r++) {
    const before = cpuTimes ? threadTimes() : null;
    const stop = monitor();
    const t0 = performance.now();
    await operation(store);
    const wall = performance.now() - t0;
    const m = stop();
    results.push({ wall, ...m, ...(cpuTimes ? cpuPerThreadKind(before, threadTimes(), poolThreads) : {}) });
  }
  const top = profiler ? await profiler.stop(rounds) : null;
  const mode = handle.pool?.mode ?? "main thread";
  await handle.close();
  const med = (key) => results.map((r) => r[key]).sort((a, b) => a - b)[Math.floor(results.length / 2)];
  const cpu = cpuTimes ? { main: med("main"), mainWait: med("mainWait"), workers: med("workers"), others: med("others") } : null;
  return { mode, wall: med("wall"), longest: med("longest"), tbt: med("tbt"), over16: med("over16"), top, cpu };
}

// CPU time (ms) each thread of this process has run, and waited for a core, by thread id
// (Linux: /proc/self/task/<tid>/schedstat).
function threadTimes() {
  const times = new Map();
  for (const tid of fs.readdirSync("/proc/self/task")) {
    try {
      const [run, wait] = fs.readFileSync(`/proc/self/task/${tid}/schedstat`, "utf8").split(" ").map(Number);
      times.set(tid, { run: run / 1e6, wait: wait / 1e6 });
    } catch {
      // the thread ended meanwhile
    }
  }
  return times;
}

function cpuPerThreadKind(before, after, poolThreads) {
  const delta = (tid, key) => (after.get(tid)?.[key] ?? 0) - (before.get(tid)?.[key] ?? 0);
  const main = String(process.pid);
  let workers = 0, others = 0;
  for (const tid of after.keys()) {
    if (tid === main) continue;
    if (poolThreads.includes(tid)) workers += delta(tid, "run");
    else others += delta(tid, "run");
  }
  return { main: delta(main, "run"), mainWait: delta(main, "wait"), workers, others };
}

// A V8 CPU profile of this (the main) thread; stop() gives the top functions by self time.
async function startProfile() {
  const inspector = await import("node:inspector/promises");
  const session = new inspector.Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 200 });
  await session.post("Profiler.start");
  return {
    async stop(reads) {
      const { profile } = await session.post("Profiler.stop");
      session.disconnect();
      const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
      const self = new Map();
      let total = 0;
      profile.samples.forEach((id, i) => {
        const { functionName, url, lineNumber } = nodes.get(id).callFrame;
        const where = url ? ` ${url.split("/").slice(-3).join("/")}:${lineNumber + 1}` : "";
        const key = `${functionName || "(anonymous)"}${where}`;
        self.set(key, (self.get(key) ?? 0) + profile.timeDeltas[i]);
        total += profile.timeDeltas[i];
      });
      return [...self].sort((a, b) => b[1] - a[1]).slice(0, 8)
        .map(([key, us]) => `    ${(us / 1000 / reads).toFixed(1).padStart(6)} ms/${opName} ${((us / total) * 100).toFixed(1).padStart(5)} %  ${key}`);
    },
  };
}

const t = performance.now();
const { store } = await makeStore();
const bytes = [...store.values()].reduce((s, v) => s + v.length, 0);
console.log(`store: ${N}×${N}×3 uint8, ${C}² chunks (${(N / C) ** 2}), jpeg 4:2:0 q90, ${(bytes / 1e6).toFixed(1)} MB, written in ${((performance.now() - t) / 1000).toFixed(1)} s`);
console.log(`node ${process.version}, ${os.availableParallelism()} CPUs, load average ${os.loadavg().map((l) => l.toFixed(1)).join(" ")} (other work competes for the CPUs: compare runs made together), median of ${rounds} ${opName}s`);
for (const n of [0, workers]) {
  const r = await measure(store, n);
  console.log(
    `${n === 0 ? "no pool           " : `pool, ${n} worker${n > 1 ? "s" : ""}      `.slice(0, 18)} (${r.mode}): wall ${r.wall.toFixed(0)} ms, ` +
      `longest main-thread block ${r.longest.toFixed(1)} ms, total blocking time ${r.tbt.toFixed(0)} ms, time in >16 ms blocks ${r.over16.toFixed(0)} ms`,
  );
  if (r.cpu) {
    const { main, mainWait, workers, others } = r.cpu;
    console.log(`  CPU per ${opName} (medians): main thread ${main.toFixed(0)} ms (waited for a core ${mainWait.toFixed(0)} ms), pool workers ${workers.toFixed(0)} ms, other threads ${others.toFixed(0)} ms; total ${(main + workers + others).toFixed(0)} ms`);
  }
  if (r.top) console.log(`  main thread, self time (wasm functions are the decoder):\n${r.top.join("\n")}`);
}

if (inBrowser) {
  const esbuild = await import("esbuild");
  const FileSystemStore = (await import("@zarrita/storage/fs")).default;
  const { startServer } = await import("../tests/js/helpers/server.mjs");
  const { launchBrowser } = await import("../tests/js/helpers/browser.mjs");
  const repo = new URL("..", import.meta.url).pathname;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "zarr-jpeg-bench-"));
  try {
    fs.symlinkSync(dist, path.join(dir, "pkg"));
    await esbuild.build({ stdin: { contents: 'export * from "zarrita";', resolveDir: repo }, bundle: true, format: "esm", platform: "browser", outfile: path.join(dir, "zarrita.js"), logLevel: "error" });
    const fsStore = new FileSystemStore(path.join(dir, "store"));
    for (const [key, value] of store) await fsStore.set(key, value);
    fs.writeFileSync(path.join(dir, "index.html"), `<!doctype html><meta charset="utf-8"><script type="module">
      import * as zarr from "./zarrita.js";
      import { register } from "./pkg/index.js";
      // source "http": FetchStore over HTTP (chunks arrive one by one); "memory": the same
      // bytes already in memory (a cache, a zip, a local file), so decoding is the bottleneck.
      // zarrita's ChunkQueue (add, onIdle) with at most \`limit\` chunks in flight.
      const limitedQueue = (limit) => {
        let active = 0;
        const waiting = [], all = [];
        const next = () => {
          if (active >= limit || waiting.length === 0) return;
          active++;
          const [fn, resolve, reject] = waiting.shift();
          fn().then(resolve, reject).finally(() => { active--; next(); });
        };
        return {
          add(fn) { all.push(new Promise((resolve, reject) => { waiting.push([fn, resolve, reject]); next(); })); },
          onIdle: () => Promise.all(all),
        };
      };
      window.measure = async (workers, rounds, source, keys, queue) => {
        const handle = register(zarr.registry, workers ? { workers } : {});
        let store = new zarr.FetchStore(location.origin + "/store");
        if (source === "memory") {
          const map = new Map();
          for (const key of keys) map.set(key, new Uint8Array(await (await fetch("store" + key)).arrayBuffer()));
          store = map;
        }
        const arr = await zarr.open(store, { kind: "array" });
        await zarr.get(arr, [zarr.slice(0, 256), zarr.slice(0, 256), null]);
        const out = [];
        for (let r = 0; r < rounds; r++) {
          await new Promise((r) => setTimeout(r, 50));
          const tasks = [];
          const obs = new PerformanceObserver((list) => tasks.push(...list.getEntries().map((e) => e.duration)));
          obs.observe({ type: "longtask" });
          let longestFrame = 0, last = performance.now(), running = true;
          const frame = (t) => { longestFrame = Math.max(longestFrame, t - last); last = t; if (running) requestAnimationFrame(frame); };
          requestAnimationFrame(frame);
          const t0 = performance.now();
          await zarr.get(arr, [null, null, null], queue ? { createQueue: () => limitedQueue(queue) } : {});
          const wall = performance.now() - t0;
          await new Promise((r) => setTimeout(r, 100));
          running = false;
          obs.disconnect();
          out.push({ wall, count: tasks.length, longest: Math.max(0, ...tasks), tbt: tasks.reduce((s, d) => s + Math.max(0, d - 50), 0), longestFrame });
        }
        const mode = handle.pool?.mode ?? "main thread";
        await handle.close();
        const med = (k) => out.map((o) => o[k]).sort((a, b) => a - b)[Math.floor(out.length / 2)];
        return { mode, wall: med("wall"), count: med("count"), longest: med("longest"), tbt: med("tbt"), longestFrame: med("longestFrame") };
      };
      window.ready = true;</script>`);
    const server = await startServer(dir);
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage();
      await page.goto(`${server.url}/index.html`);
      await page.waitForFunction(() => window.ready === true);
      const cores = await page.evaluate(() => navigator.hardwareConcurrency);
      console.log(`headless Chromium, navigator.hardwareConcurrency = ${cores}; http: FetchStore from a local server, memory: the same bytes in a Map store; ${queueLimit ? `zarr.get with at most ${queueLimit} chunks in flight (--queue)` : "zarr.get's default queue (every chunk started at once)"}`);
      for (const source of ["http", "memory"]) {
        for (const n of [0, workers]) {
          const r = await page.evaluate(([w, k, src, keys, q]) => window.measure(w, k, src, keys, q), [n, rounds, source, [...store.keys()], queueLimit]);
          console.log(
            `${source.padEnd(6)} ${n === 0 ? "no pool           " : `pool, ${n} worker${n > 1 ? "s" : ""}      `.slice(0, 18)} (${r.mode}): wall ${r.wall.toFixed(0)} ms, ` +
              `${r.count} long tasks, longest ${r.longest.toFixed(0)} ms, total blocking time ${r.tbt.toFixed(0)} ms, longest frame gap ${r.longestFrame.toFixed(0)} ms`,
          );
        }
      }
    } finally {
      await browser.close();
      await server.close();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
