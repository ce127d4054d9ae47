// A headless Chromium page served by a local HTTP server, for the scripts that time builds
// of dist/ in the browser (bench/ab.mjs, bench/fixed-cost.mjs): each folder in `roots` is
// served under its own prefix (`/<prefix>/<path>`), so a page can import
// `/<prefix>/loader.js` as a native ES module; `/` is an empty page on the same origin.
import fs from "node:fs";
import http from "node:http";
import path from "node:path";

const TYPES = { ".js": "text/javascript", ".mjs": "text/javascript", ".json": "application/json" };

/** Runs `body(page, browser)` on a fresh page at `/`; `roots`: { prefix: folder }. */
export async function withServedPage(roots, body) {
  const { chromium } = await import("playwright-core");
  const bases = Object.fromEntries(Object.entries(roots).filter(([, dir]) => dir).map(([prefix, dir]) => [prefix, path.resolve(dir)]));
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, "http://x");
    if (url.pathname === "/") {
      res.writeHead(200, { "content-type": "text/html" });
      return res.end("<!doctype html><title>bench</title>");
    }
    const [, prefix, ...rest] = url.pathname.split("/");
    const base = Object.hasOwn(bases, prefix) ? bases[prefix] : undefined;
    const file = base && path.resolve(base, rest.join("/"));
    if (!file || !file.startsWith(base + path.sep) || !fs.existsSync(file)) {
      res.writeHead(404);
      return res.end();
    }
    res.writeHead(200, { "content-type": TYPES[path.extname(file)] ?? "application/octet-stream" });
    res.end(fs.readFileSync(file));
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
  try {
    const page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${server.address().port}/`);
    return await body(page, browser);
  } finally {
    await browser.close();
    server.close();
  }
}
