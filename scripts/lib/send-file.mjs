// Serving one file over node:http, shared by the demo server (scripts/serve.mjs) and the
// test server (tests/js/helpers/server.mjs): directory → index.html, 404 for missing keys
// (what zarrita's FetchStore expects for absent chunks), single byte ranges (sharded
// reads and suffix reads of shard indexes), HEAD.
import fs from "node:fs";
import path from "node:path";

export const MIME = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".json": "application/json",
  ".css": "text/css; charset=utf-8",
  ".wasm": "application/wasm",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".svg": "image/svg+xml",
};

/** Sends `file` (or 404) with `headers` added to every response. */
export function sendFile(req, res, file, headers = {}) {
  fs.stat(file, (err, stat) => {
    if (!err && stat.isDirectory() && fs.existsSync(path.join(file, "index.html"))) {
      return sendFile(req, res, path.join(file, "index.html"), headers);
    }
    if (err || !stat.isFile()) {
      res.writeHead(404, { ...headers, "Content-Type": "text/plain" }).end("not found");
      return;
    }
    const common = {
      ...headers,
      "Content-Type": MIME[path.extname(file)] ?? "application/octet-stream",
      "Accept-Ranges": "bytes",
    };
    const range = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range ?? "");
    if (range && (range[1] !== "" || range[2] !== "")) {
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
        res.writeHead(416, { ...common, "Content-Range": `bytes */${stat.size}` }).end();
        return;
      }
      res.writeHead(206, { ...common, "Content-Range": `bytes ${start}-${end}/${stat.size}`, "Content-Length": end - start + 1 });
      if (req.method === "HEAD") return res.end();
      fs.createReadStream(file, { start, end }).pipe(res);
      return;
    }
    res.writeHead(200, { ...common, "Content-Length": stat.size });
    if (req.method === "HEAD") return res.end();
    fs.createReadStream(file).pipe(res);
  });
}
