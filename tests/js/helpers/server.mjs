// A static file server on 127.0.0.1 for browser and FetchStore tests: files under
// `root`, with the same serving rules as the demo server (scripts/lib/send-file.mjs),
// no caching and permissive CORS.
import http from "node:http";
import path from "node:path";
import { sendFile } from "../../../scripts/lib/send-file.mjs";

const HEADERS = { "Cache-Control": "no-store", "Access-Control-Allow-Origin": "*" };

export async function startServer(root, { port = 0, host = "127.0.0.1" } = {}) {
  const absRoot = path.resolve(root);
  const server = http.createServer((req, res) => {
    let rel;
    try {
      rel = decodeURIComponent(new URL(req.url, "http://localhost").pathname);
    } catch {
      res.writeHead(400, HEADERS).end();
      return;
    }
    const file = path.resolve(absRoot, "." + rel);
    if (file !== absRoot && !file.startsWith(absRoot + path.sep)) {
      res.writeHead(403, HEADERS).end();
      return;
    }
    sendFile(req, res, file, HEADERS);
  });
  await new Promise((resolve) => server.listen(port, host, resolve));
  const { port: actual } = server.address();
  return {
    url: `http://${host}:${actual}`,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}
