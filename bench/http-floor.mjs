#!/usr/bin/env node
// What fetching alone costs in the zarrita benchmark's HTTP read: the 256 chunks of the
// 4096² RGB array (ihc tiled, 256² chunks, 4:2:0 q90, as bench/zarrita-blocking.mjs writes
// them) fetched all at once, with no decoding, from the test server that benchmark uses
// (files on disk) and from an in-memory server, by Node's fetch and by headless Chromium.
// If Chromium takes far longer than Node from the same server, the browser's fetching, not
// the server, bounds the HTTP read, and no decoder or pool can shorten it.
//   node bench/http-floor.mjs [rounds=5]
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { ihcMosaic } from "./lib/images.mjs";
import { startServer } from "../tests/js/helpers/server.mjs";
import { launchBrowser } from "../tests/js/helpers/browser.mjs";

const rounds = Number(process.argv[2] ?? 5);
const N = 4096, C = 256;
const dist = new URL("../dist/index.js", import.meta.url);
const { init, encode } = await import(pathToFileURL(dist.pathname).href);
await init();

// The chunks, encoded as the zarrita benchmark's store holds them.
const config = { quality: 90, encoded_color_space: "ycbcr", subsampling: [[2, 2], [1, 1], [1, 1]] };
const image = ihcMosaic(N);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "zarr-jpeg-http-floor-"));
fs.writeFileSync(path.join(dir, "index.html"), "<!doctype html><title>http floor</title>");
const chunks = new Map();
const tile = new Uint8Array(C * C * 3);
for (let cy = 0; cy < N / C; cy++) {
  for (let cx = 0; cx < N / C; cx++) {
    for (let y = 0; y < C; y++) tile.set(image.subarray(((cy * C + y) * N + cx * C) * 3, ((cy * C + y) * N + cx * C + C) * 3), y * C * 3);
    const key = `/c/${cy}/${cx}`;
    chunks.set(key, encode(config, tile, [C, C, 3]));
    fs.mkdirSync(path.join(dir, "c", String(cy)), { recursive: true });
    fs.writeFileSync(path.join(dir, key), chunks.get(key));
  }
}
const keys = [...chunks.keys()];
const total = [...chunks.values()].reduce((s, b) => s + b.length, 0);

const fileServer = await startServer(dir);
const memory = http.createServer((req, res) => {
  const body = chunks.get(new URL(req.url, "http://x").pathname);
  if (!body) return res.writeHead(200, { "Content-Type": "text/html" }).end("<!doctype html><title>http floor</title>");
  res.writeHead(200, { "Content-Length": body.length, "Content-Type": "application/octet-stream", "Cache-Control": "no-store" }).end(body);
});
await new Promise((resolve) => memory.listen(0, "127.0.0.1", resolve));
const servers = [
  ["test server (files)", fileServer.url],
  ["in-memory server", `http://127.0.0.1:${memory.address().port}`],
];
const median = (xs) => xs.sort((a, b) => a - b)[xs.length >> 1];

console.log(`${keys.length} chunks, ${(total / 1e6).toFixed(1)} MB (mean ${(total / keys.length / 1e3).toFixed(1)} KB); node ${process.version}, ${os.availableParallelism()} CPUs, load ${os.loadavg()[0].toFixed(1)}; median of ${rounds}, all fetched at once, nothing decoded\n`);
const browser = await launchBrowser();
try {
  const page = await browser.newPage();
  for (const [name, url] of servers) {
    const nodeMs = [];
    for (let r = 0; r < rounds + 1; r++) {
      const t0 = performance.now();
      await Promise.all(keys.map(async (k) => (await fetch(url + k)).arrayBuffer()));
      if (r > 0) nodeMs.push(performance.now() - t0);
    }
    await page.goto(`${url}/index.html`);
    const chromiumMs = await page.evaluate(async ([keys, rounds]) => {
      const out = [];
      for (let r = 0; r < rounds + 1; r++) {
        const t0 = performance.now();
        await Promise.all(keys.map(async (k) => (await fetch(k, { cache: "no-store" })).arrayBuffer()));
        if (r > 0) out.push(performance.now() - t0);
      }
      return out;
    }, [keys, rounds]);
    console.log(`${name.padEnd(20)} Node fetch ${median(nodeMs).toFixed(0).padStart(4)} ms   Chromium fetch ${median(chromiumMs).toFixed(0).padStart(4)} ms`);
  }
} finally {
  await browser.close();
  await fileServer.close();
  memory.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
