// Every file of a store on disk, by path relative to `dir` → its bytes: to compare two stores
// byte for byte (tests/js/convert.test.mjs, bench/convert-workers.mjs).
import fs from "node:fs";
import path from "node:path";

export function storeFiles(dir) {
  const out = new Map();
  for (const rel of fs.readdirSync(dir, { recursive: true })) {
    const p = path.join(dir, rel);
    if (fs.statSync(p).isFile()) out.set(rel, fs.readFileSync(p));
  }
  return out;
}
