#!/usr/bin/env node
// Wasm memory after one decode in a fresh instance (Node, the decode-only module through
// initDecoder()): `memory.buffer.byteLength` after instantiation and after decoding each
// 2048² case of bench/ab.mjs once, in a fresh process per case.
//   node bench/decode-memory.mjs <dist> [<dist> ...]
// The streams are written once by the first dist's encoder (in a child process).
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { loadPng, tile } from "./lib/images.mjs";
import { CONFIGS, loaderUrl } from "./lib/builds.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const self = fileURLToPath(import.meta.url);
const MiB = 1024 * 1024;

if (process.argv[2] === "--write") {
  const [dist, dir] = process.argv.slice(3);
  const lib = await import(loaderUrl(dist));
  await lib.init();
  for (const mode of Object.keys(CONFIGS)) {
    const img = tile(loadPng(path.join(root, `samples/${mode === "gray" ? "cell" : "ihc"}.png`), mode === "gray" ? 1 : 3), 2048);
    const shape = img.channels === 3 ? [2048, 2048, 3] : [2048, 2048];
    fs.writeFileSync(path.join(dir, `${mode}.bin`), lib.encode(CONFIGS[mode], img.data, shape));
  }
  process.exit(0);
}

if (process.argv[2] === "--measure") {
  const [dist, dir, mode] = process.argv.slice(3);
  const memories = [];
  const instantiate = WebAssembly.instantiate;
  WebAssembly.instantiate = async (...args) => {
    const result = await instantiate(...args);
    const instance = result.instance ?? result;
    if (instance?.exports?.memory) memories.push(instance.exports.memory);
    return result;
  };
  const lib = await import(loaderUrl(dist));
  await lib.initDecoder();
  const before = memories.at(-1).buffer.byteLength;
  const stream = new Uint8Array(fs.readFileSync(path.join(dir, `${mode}.bin`)));
  const shape = mode === "gray" ? [2048, 2048] : [2048, 2048, 3];
  const out = lib.decode(CONFIGS[mode], stream, shape);
  const after = memories.at(-1).buffer.byteLength;
  console.log(JSON.stringify({ before, after, samples: out.length, stream: stream.length }));
  process.exit(0);
}

const dists = process.argv.slice(2);
if (dists.length === 0) {
  console.error("usage: node bench/decode-memory.mjs <dist> [<dist> ...]");
  process.exit(2);
}
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "decode-memory-"));
execFileSync(process.execPath, [self, "--write", dists[0], dir], { stdio: "inherit" });
console.log(`| case | ${dists.map((d) => `${d} (MiB after init → after one decode)`).join(" | ")} |`);
console.log(`| --- | ${dists.map(() => "---:").join(" | ")} |`);
for (const mode of Object.keys(CONFIGS)) {
  const cells = dists.map((dist) => {
    const r = JSON.parse(execFileSync(process.execPath, [self, "--measure", dist, dir, mode]).toString());
    return `${(r.before / MiB).toFixed(1)} → ${(r.after / MiB).toFixed(1)}`;
  });
  console.log(`| 2048² ${mode} | ${cells.join(" | ")} |`);
}
fs.rmSync(dir, { recursive: true });
