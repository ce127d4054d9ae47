// The typings cannot drift from the modules: for each entry point of package.json's
// `exports`, every value its .d.ts declares exists at run time, and every value the module
// exports is declared. (Types-only declarations — interfaces, type aliases — are skipped.)
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));
const pkg = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"));

/** The value names a declaration file exports, following `export … from` into other files. */
function declaredValues(file, seen = new Set()) {
  if (seen.has(file)) return new Set();
  seen.add(file);
  const text = fs.readFileSync(file, "utf8").replace(/\/\*[\s\S]*?\*\//g, "").replace(/\/\/.*$/gm, "");
  const names = new Set();
  for (const m of text.matchAll(/^export\s+(?:declare\s+)?(?:function|const|let|class)\s+([A-Za-z_$][\w$]*)/gm)) names.add(m[1]);
  for (const m of text.matchAll(/^export\s+\{([^}]*)\}\s*from\s*"([^"]+)"/gm)) {
    for (const part of m[1].split(",").map((s) => s.trim()).filter(Boolean)) {
      const name = part.split(/\s+as\s+/).pop().trim();
      names.add(name);
    }
  }
  for (const m of text.matchAll(/^export\s+\*\s+from\s*"([^"]+)"/gm)) {
    const target = path.resolve(path.dirname(file), m[1].replace(/\.js$/, ".d.ts"));
    for (const name of declaredValues(target, seen)) names.add(name);
  }
  return names;
}

for (const [subpath, entry] of Object.entries(pkg.exports)) {
  if (typeof entry !== "object" || !entry.types) continue;
  test(`"${subpath}": ${entry.default} exports exactly what ${entry.types} declares`, async () => {
    const declared = declaredValues(path.join(root, entry.types));
    const actual = new Set(Object.keys(await import(path.join(root, entry.default))));
    assert.deepEqual([...declared].filter((n) => !actual.has(n)).sort(), [], "declared but not exported");
    assert.deepEqual([...actual].filter((n) => !declared.has(n)).sort(), [], "exported but not declared");
  });
}

test("the root is card-sized: loading, the codec functions, validateConfig, register and the codec classes", async () => {
  const names = Object.keys(await import(path.join(root, "dist/index.js"))).sort();
  assert.deepEqual(names, [
    "JpegCodec", "ReshapeCodec", "decode", "decodeAsync", "decodeInto", "encode", "encodeInto",
    "init", "initDecoder", "initFullDecoder", "register", "validateConfig",
  ]);
});
