// The package's one error convention (docs/api.md, "Errors"): every Error thrown has a
// `kind` from the table there, and its message begins with who refused — a codec by its
// zarr.json name, else "zarr-jpeg: ", "zarr-jpeg convert: " or "zarr-jpeg check: ". Each
// kind is provoked here through the public API (InstanceTrapped needs a build that traps
// on purpose: trap-recovery.test.mjs) and checked against the table, and the sources are
// checked for throws that bypass the convention.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { execFileSync } from "node:child_process";
import * as zarr from "zarrita";
import * as pkg from "../../dist/index.js";
import { CodecPool, makeImagecodecsJpegCodec } from "../../dist/advanced.js";
import { checkDataset } from "../../dist/check.js";
import { convert, ConvertError } from "../../dist/convert.js";

const root = new URL("../../", import.meta.url);
const fixture = (name) => new Uint8Array(fs.readFileSync(new URL(`tests/fixtures/${name}`, root)));
const dist = new URL("dist/index.js", root).href;

/** The kinds table of docs/api.md: kind → who may throw it. */
function documentedKinds() {
  const text = fs.readFileSync(new URL("docs/api.md", root), "utf8");
  const section = text.slice(text.indexOf("\n## Errors"), text.indexOf("\n## ", text.indexOf("\n## Errors") + 1));
  const kinds = new Map();
  for (const m of section.matchAll(/^\| `(\w+)` \| ([^|]+?) \|/gm)) kinds.set(m[1], m[2].trim());
  return kinds;
}

const PREFIX = {
  "a codec": /^(jpeg|imagecodecs_jpeg|reshape): \S/,
  "the package": /^zarr-jpeg( check| convert)?: \S/,
  "`convert()`": /^zarr-jpeg convert: \S/,
};

/** Runs `body` (an async function's text, given the package as `z`) in a fresh Node; its error's kind, message and class. */
function errorInFreshProcess(prelude, body) {
  const script = `${prelude}
    const z = await import(${JSON.stringify(dist)});
    try { await (async () => { ${body} })(); console.log(JSON.stringify(null)); }
    catch (e) { console.log(JSON.stringify({ kind: e.kind, message: e.message, type: e.constructor.name })); }`;
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8", cwd: new URL(".", root) });
  return JSON.parse(out.trim().split("\n").at(-1));
}

async function caught(fn) {
  try {
    await fn();
  } catch (error) {
    return error;
  }
  assert.fail(`expected a throw from ${fn}`);
}

test("every kind docs/api.md lists is thrown with its prefix, and every thrown kind is listed", async () => {
  await pkg.init();
  const kinds = documentedKinds();
  assert.ok(kinds.size >= 14, `docs/api.md lists ${kinds.size} kinds`);
  for (const from of new Set(kinds.values())) assert.ok(PREFIX[from], `docs/api.md: unknown origin ${from}`);

  const gray = { quality: 90, encoded_color_space: "grayscale" };
  const rgb = { quality: 90, encoded_color_space: "rgb" };
  const stream = pkg.encode(gray, new Uint8Array(64).fill(100), [8, 8]);
  const meta = { dataType: "uint8", shape: [8, 8], codecs: [], chunk_shape: [8, 8] };
  const Imagecodecs = makeImagecodecsJpegCodec(null);
  const pool = new CodecPool({ size: 1 });
  const out = fs.mkdtempSync(path.join(os.tmpdir(), "zarr-jpeg-errors-"));
  fs.mkdirSync(path.join(out, "taken"));
  fs.writeFileSync(path.join(out, "taken", "file"), "not a store");
  fs.writeFileSync(path.join(out, "text.png"), "plain text, not an image");
  const cases = {
    InvalidConfiguration: [() => pkg.validateConfig({ quality: 0, encoded_color_space: "rgb" }), () => pkg.ReshapeCodec.fromConfig({ shape: [8, 8], extra: 1 }, meta), () => Imagecodecs.fromConfig({ lossless: true }, meta)],
    InvalidShape: [() => pkg.encode(gray, new Uint8Array(64), [8, 8, 3])],
    InvalidData: [() => pkg.encode(gray, new Uint8Array(63), [8, 8])],
    UnsupportedStream: [() => pkg.decode(gray, fixture("reject_arithmetic_progressive_gray_cjpeg_61x47.jpg"), [47, 61])],
    CorruptStream: [() => pkg.decode(gray, stream.subarray(0, 12), [8, 8]), () => new Imagecodecs({}, meta).decode(stream.subarray(0, 12)), () => pool.decode(gray, stream.subarray(0, 12), [8, 8])],
    StreamMismatch: [() => pkg.decode(rgb, stream, [8, 8, 3])],
    NeedsFullDecoder: [() => pkg.decode(gray, fixture("gray_progressive_q90_cjpeg_61x47.jpg"), [47, 61])],
    InvalidArgument: [() => pkg.register(zarr), () => pkg.init({ simd: "yes" }), () => checkDataset(42), () => convert({ data: new Uint8Array(64), shape: [8, 8] }, path.join(out, "a.zarr"), { quality: 101 })],
    InvalidInput: [() => convert(path.join(out, "text.png"), path.join(out, "b.zarr"))],
    OutputUnavailable: [() => convert({ data: new Uint8Array(64), shape: [8, 8] }, path.join(out, "taken"))],
  };
  const seen = new Set();
  try {
    for (const [kind, calls] of Object.entries(cases)) {
      for (const call of calls) {
        const error = await caught(call);
        assert.equal(error.kind, kind, `${call}: ${error.message}`);
        assert.ok(kinds.has(kind), `kind ${kind} is not in docs/api.md`);
        assert.match(error.message, PREFIX[kinds.get(kind)], `${call}`);
        seen.add(kind);
      }
    }
  } finally {
    await pool.close();
    fs.rmSync(out, { recursive: true, force: true });
  }
  // A codec's error names that codec; the converter's are ConvertErrors.
  assert.match((await caught(() => pkg.ReshapeCodec.fromConfig({ shape: [8, 8], extra: 1 }, meta))).message, /^reshape: /);
  assert.match((await caught(() => new Imagecodecs({}, meta).decode(stream.subarray(0, 12)))).message, /^imagecodecs_jpeg: corrupt JPEG stream: /);
  assert.ok((await caught(() => convert(path.join(out, "missing.png"), path.join(out, "c.zarr")))) instanceof ConvertError);
  assert.match((await caught(() => pkg.register(zarr))).constructor.name, /^TypeError$/);
  assert.match((await caught(() => pkg.register(zarr.registry, { workers: -1 }))).constructor.name, /^RangeError$/);

  const fresh = [
    ["NotInitialized", "", "z.encode({ quality: 90, encoded_color_space: 'grayscale' }, new Uint8Array(64), [8, 8]);"],
    ["EnvironmentUnsupported", "globalThis.DecompressionStream = undefined;", "await z.init();"],
    ["LoadFailed", "", "await z.init({ module: new WebAssembly.Module(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0])) });"],
  ];
  for (const [kind, prelude, body] of fresh) {
    const error = errorInFreshProcess(prelude, body);
    assert.equal(error?.kind, kind, JSON.stringify(error));
    assert.match(error.message, PREFIX[kinds.get(kind)]);
    seen.add(kind);
  }
  seen.add("InstanceTrapped"); // trap-recovery.test.mjs
  assert.deepEqual([...kinds.keys()].filter((k) => !seen.has(k)), [], "documented kinds no test provokes");
});

test("the package's sources throw only through the convention's helpers", () => {
  const offenders = [];
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== "wasm") walk(file);
      } else if (file.endsWith(".js") && entry.name !== "errors.js") {
        fs.readFileSync(file, "utf8").split("\n").forEach((line, i) => {
          // Internal invariants ("internal: …") are bugs, not errors a caller handles.
          if (/\bnew (Error|TypeError|RangeError)\(/.test(line) && !/\(["`]internal: /.test(line)) offenders.push(`${path.relative(new URL(".", root).pathname, file)}:${i + 1}: ${line.trim()}`);
        });
      }
    }
  };
  walk(new URL("js", root).pathname);
  assert.deepEqual(offenders, []);
});
