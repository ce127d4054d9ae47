// The TypeScript declarations in dist/, checked under --strict with no casts: tests/types/
// (usage.ts: the API against zarrita's own types; readme.ts: README's examples as written,
// readonly and `as const` arguments, a widened configuration refused; convert.ts: the
// converter, zarr-jpeg/convert).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));

test("tsc -p tests/types passes (the declarations in dist/, README's examples as written)", () => {
  const r = spawnSync(process.execPath, [path.join(root, "node_modules", "typescript", "bin", "tsc"), "-p", "tests/types"], { cwd: root, encoding: "utf8" });
  assert.equal(r.status, 0, r.stdout + r.stderr);
});
