// A static file server on 127.0.0.1 for browser and FetchStore tests.
// Serves files under `root`; answers 404 for missing keys (what zarrita's FetchStore expects
// for absent chunks), supports single byte ranges (sharded reads), and sends no-cache headers.
import http from "node:http";
import fs from "node:fs";
import path from "node:path";

const MIME = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".json": "application/json",
  ".css": "text/css",
  ".wasm": "application/wasm",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".svg": "image/svg+xml",
};

export async function startServer(root, { port = 0, host = "127.0.0.1" } = {}) {
  const absRoot = path.resolve(root);
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, "http://localhost");
    let rel = decodeURIComponent(url.pathname);
    const file = path.resolve(absRoot, "." + rel);
    if (!file.startsWith(absRoot)) {
      res.writeHead(403).end();
      return;
    }
    let target = file;
    try {
      if (fs.statSync(target).isDirectory()) target = path.join(target, "index.html");
    } catch {
      // fall through to the 404 below
    }
    fs.stat(target, (err, stat) => {
      if (err || !stat.isFile()) {
        res.writeHead(404, { "Access-Control-Allow-Origin": "*" }).end("not found");
        return;
      }
      const headers = {
        "Content-Type": MIME[path.extname(target)] ?? "application/octet-stream",
        "Cache-Control": "no-store",
        "Access-Control-Allow-Origin": "*",
        "Accept-Ranges": "bytes",
      };
      const range = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range ?? "");
      if (range) {
        let start;
        let end;
        if (range[1] === "") {
          start = Math.max(0, stat.size - Number(range[2]));
          end = stat.size - 1;
        } else {
          start = Number(range[1]);
          end = range[2] === "" ? stat.size - 1 : Math.min(Number(range[2]), stat.size - 1);
        }
        if (start > end || start >= stat.size) {
          res.writeHead(416, { ...headers, "Content-Range": `bytes */${stat.size}` }).end();
          return;
        }
        res.writeHead(206, {
          ...headers,
          "Content-Range": `bytes ${start}-${end}/${stat.size}`,
          "Content-Length": end - start + 1,
        });
        if (req.method === "HEAD") return res.end();
        fs.createReadStream(target, { start, end }).pipe(res);
        return;
      }
      res.writeHead(200, { ...headers, "Content-Length": stat.size });
      if (req.method === "HEAD") return res.end();
      fs.createReadStream(target).pipe(res);
    });
  });
  await new Promise((resolve) => server.listen(port, host, resolve));
  const { port: actual } = server.address();
  return {
    url: `http://${host}:${actual}`,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}
