// The converter's modules form layers: no import cycle, in the Rust core (src/convert/,
// every `super::` path, in `use` lines or in code) or among the package's js/ modules.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** A cycle of `graph` (Map name → Set of names) as a list of names, or null. */
function findCycle(graph) {
  const state = new Map(); // 1: on the path, 2: done
  const pathNow = [];
  const visit = (node) => {
    state.set(node, 1);
    pathNow.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 1) return [...pathNow.slice(pathNow.indexOf(next)), next];
      if (!state.has(next)) {
        const found = visit(next);
        if (found) return found;
      }
    }
    pathNow.pop();
    state.set(node, 2);
    return null;
  };
  for (const node of graph.keys()) {
    if (!state.has(node)) {
      const found = visit(node);
      if (found) return found;
    }
  }
  return null;
}

/** src/convert's modules ("" for mod.rs, "tiff" for tiff/mod.rs, "tiff/tiles", …) → the modules they name through `super::`. */
export function rustModuleGraph(dir = path.join(root, "src/convert")) {
  const files = fs.readdirSync(dir, { recursive: true }).filter((f) => f.endsWith(".rs")).map((f) => f.split(path.sep).join("/"));
  const moduleOf = (file) => file.replace(/\.rs$/, "").replace(/(^|\/)mod$/, "");
  const modules = new Set(files.map(moduleOf));
  const graph = new Map();
  for (const file of files) {
    const name = moduleOf(file);
    // (unit tests below #[cfg(test)] take `super::*` of their own module)
    const code = fs.readFileSync(path.join(dir, file), "utf8").split("#[cfg(test)]")[0].replace(/\/\/.*$/gm, "");
    const here = name === "" ? [] : name.split("/");
    const edges = new Set();
    const add = (supers, rest) => {
      // `super` of a file is its directory's module; of a mod.rs, the directory above
      // (`super` is the parent of the module, whether it is a file or a directory's mod.rs)
      let base = here.slice(0, -1);
      if (supers - 1 > base.length) return;
      base = base.slice(0, base.length - (supers - 1));
      const target = [...base, rest].join("/");
      edges.add(modules.has(target) ? target : base.join("/"));
    };
    for (const m of code.matchAll(/\b((?:super::)+)(\{[^}]*\}|\w+)/g)) {
      const supers = m[1].split("super::").length - 1;
      const names = m[2].startsWith("{") ? m[2].slice(1, -1).split(",").map((s) => s.trim().split("::")[0]).filter(Boolean) : [m[2]];
      for (const n of names) add(supers, n === "self" ? "" : n);
    }
    // a mod.rs's `pub use child::…` re-exports: the parent depends on the child
    for (const m of code.matchAll(/^pub use (\w+)::/gm)) {
      const child = [...here, m[1]].join("/");
      if (modules.has(child)) edges.add(child);
    }
    edges.delete(name);
    graph.set(name, edges);
  }
  return graph;
}

test("src/convert: no module imports from a module that imports it (mod.rs only re-exports)", () => {
  const graph = rustModuleGraph();
  assert.ok(graph.get("conversion").has("pyramid") && graph.get("tiff/tiles").has("tile_copy") && graph.get("dicom").has("tile_copy"), "the graph is read");
  const cycle = findCycle(graph);
  assert.equal(cycle, null, `an import cycle: ${cycle?.map((m) => m || "mod.rs").join(" → ")}`);
});

test("js/: no import cycle among the package's modules", () => {
  const dir = path.join(root, "js");
  const graph = new Map();
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith(".js"))) {
    const code = fs.readFileSync(path.join(dir, file), "utf8");
    const deps = [...code.matchAll(/(?:^|\n)\s*(?:import|export)\b[^;]*?from\s+["']\.\/([\w.-]+\.js)["']/g)].map((m) => m[1]);
    const dynamic = [...code.matchAll(/import\(\s*["']\.\/([\w.-]+\.js)["']\s*\)/g)].map((m) => m[1]);
    graph.set(file, new Set([...deps, ...dynamic]));
  }
  assert.ok(graph.get("convert-files.js").has("convert-encoders.js"), "the graph is read");
  const cycle = findCycle(graph);
  assert.equal(cycle, null, `an import cycle: ${cycle?.join(" → ")}`);
});

test("the cycle finder finds a cycle", () => {
  assert.deepEqual(findCycle(new Map([["a", new Set(["b"])], ["b", new Set(["c"])], ["c", new Set(["a"])]])), ["a", "b", "c", "a"]);
  assert.equal(findCycle(new Map([["a", new Set(["b"])], ["b", new Set()]])), null);
});
