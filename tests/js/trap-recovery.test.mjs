// Trap recovery: when the wasm instance traps, the call throws an Error, the instance is
// replaced, and the next call works (with results identical to before the trap).
//
// 1. A build that traps on purpose: the crate built with the test-only cargo feature
//    `test-trap`, whose validateConfig panics (→ `unreachable`) or aborts as on
//    out-of-memory when given a sentinel string. Built by the real scripts/build.mjs
//    (`--features test-trap`, without the converter module) in a scratch copy of the repository (tests/.tmp/trap-build,
//    gitignored). Set ZARR_JPEG_SKIP_TRAP_BUILD=1 to skip this part.
// 2. The normal build: an exception thrown into the middle of a wasm call (a getter on the
//    configuration throws WebAssembly.RuntimeError, as a trap would), and any input known
//    to trap today.
// Run: node --test tests/js/trap-recovery.test.mjs   (after `npm run build`)
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const scratch = path.join(root, "tests/.tmp/trap-build");

const gray = { quality: 90, encoded_color_space: "grayscale" };
const samples = Uint8Array.from({ length: 32 * 32 }, (_, i) => (i * 13) & 255);

/** Copies what scripts/build.mjs needs into the scratch dir and builds it with the `test-trap` feature. */
function buildTrapVariant() {
  fs.mkdirSync(scratch, { recursive: true });
  for (const item of ["Cargo.toml", "Cargo.lock", "src", "js", "scripts", "vendor"]) {
    fs.rmSync(path.join(scratch, item), { recursive: true, force: true });
    fs.cpSync(path.join(root, item), path.join(scratch, item), { recursive: true, preserveTimestamps: true });
  }
  const modules = path.join(scratch, "node_modules");
  if (!fs.existsSync(modules)) fs.symlinkSync(path.join(root, "node_modules"), modules);
  // Start from the main build's compiled dependencies the first time.
  for (const dir of ["target/simd/wasm32-unknown-unknown/release", "target/simd-decoder/wasm32-unknown-unknown/release", "target/simd-full-decoder/wasm32-unknown-unknown/release"]) {
    const from = path.join(root, dir);
    const to = path.join(scratch, dir);
    if (!fs.existsSync(to) && fs.existsSync(from)) fs.cpSync(from, to, { recursive: true });
  }
  execFileSync(process.execPath, [path.join(scratch, "scripts/build.mjs"), "--features", "test-trap", "--variants", "simd", "--without-converter"], {
    cwd: scratch,
    stdio: ["ignore", "ignore", "inherit"],
  });
  return path.join(scratch, "dist/index.js");
}

test("a build that traps on purpose: each trap is one failed call, the next call works", { skip: process.env.ZARR_JPEG_SKIP_TRAP_BUILD === "1", timeout: 600_000 }, async () => {
  const started = Date.now();
  const pkg = await import(buildTrapVariant());
  console.log(`trap variant built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  await pkg.init();
  const stream = pkg.encode(gray, samples, [32, 32]);
  const expected = pkg.decode(gray, stream, [32, 32]);
  let traps = 0;
  for (let round = 0; round < 20; round++) {
    const kind = round % 2 === 0 ? "panic" : "oom";
    assert.throws(
      () => pkg.validateConfig(`__zarr_jpeg_test_trap__:${kind}`),
      (e) => e instanceof Error && !(e instanceof WebAssembly.RuntimeError) && e.kind === "InstanceTrapped" && /^zarr-jpeg: the WebAssembly instance trapped/.test(e.message) && e.cause instanceof WebAssembly.RuntimeError,
      `round ${round} (${kind})`,
    );
    traps++;
    // The fresh instance works, and gives exactly the results from before the trap.
    assert.deepEqual(pkg.decode(gray, stream, [32, 32]), expected);
    assert.deepEqual(pkg.encode(gray, samples, [32, 32]), stream);
    assert.deepEqual(pkg.validateConfig(gray), { ...gray, decoded_color_space: "grayscale" });
    assert.throws(() => pkg.decode(gray, stream.subarray(0, 10), [32, 32]), (e) => /^jpeg: /.test(e.message));
  }
  console.log(`${traps} traps, each followed by working calls`);

  // The full decoder recovers the same way: the codec module leaves the sentinel stream
  // to it (NeedsFullDecoder), and it traps there.
  const sentinel = new TextEncoder().encode("__zarr_jpeg_test_trap__:full-decoder");
  assert.throws(() => pkg.decode(gray, sentinel, [32, 32]), (e) => e.kind === "NeedsFullDecoder", "before initFullDecoder()");
  await pkg.initFullDecoder();
  const progressive = new Uint8Array(fs.readFileSync(new URL("../fixtures/gray_progressive_q90_cjpeg_61x47.jpg", import.meta.url)));
  const progressiveSamples = pkg.decode(gray, progressive, [47, 61]);
  for (let round = 0; round < 5; round++) {
    assert.throws(
      () => pkg.decode(gray, sentinel, [32, 32]),
      (e) => e instanceof Error && /trapped/.test(e.message) && e.cause instanceof WebAssembly.RuntimeError,
      `full decoder, round ${round}`,
    );
    assert.deepEqual(pkg.decode(gray, progressive, [47, 61]), progressiveSamples);
    assert.deepEqual(pkg.decode(gray, stream, [32, 32]), expected);
  }
});

// The configuration is read through Reflect (src/js_value.rs), so whatever a getter or
// Proxy trap throws, even a WebAssembly.RuntimeError, comes back as a configuration error
// instead of unwinding through wasm frames (which would leave the instance suspect).
test("exceptions thrown by the caller's getters are configuration errors, and the instance stays usable", async () => {
  const pkg = await import("../../dist/index.js");
  await pkg.init();
  const stream = pkg.encode(gray, samples, [32, 32]);
  const expected = pkg.decode(gray, stream, [32, 32]);
  for (const [make, text] of [
    [() => new WebAssembly.RuntimeError("unreachable (simulated)"), /reading it threw: unreachable \(simulated\)/],
    [() => new Error("the caller's getter"), /reading it threw: the caller's getter/],
    [() => "a thrown string", /reading it threw: a thrown string/],
  ]) {
    const config = { quality: 90, get encoded_color_space() { throw make(); } };
    for (let i = 0; i < 500; i++) {
      assert.throws(() => pkg.decode(config, stream, [32, 32]), (e) => e.kind === "InvalidConfiguration" && text.test(e.message) && !/trapped/.test(e.message));
    }
    assert.deepEqual(pkg.decode(gray, stream, [32, 32]), expected);
  }
});

test("inputs that trap in the normal build (if any are left) fail as one Error, then calls work", async () => {
  const pkg = await import("../../dist/index.js");
  await pkg.init();
  const stream = pkg.encode(gray, samples, [32, 32]);
  const expected = pkg.decode(gray, stream, [32, 32]);
  let deep = {};
  for (let i = 0, cur = deep; i < 5000; i++) cur = cur.a = {};
  let trapped = 0;
  for (let i = 0; i < 10; i++) {
    assert.throws(() => pkg.validateConfig({ ...gray, extra: deep }), (e) => {
      if (/trapped/.test(e.message)) trapped++;
      return e instanceof Error;
    });
    assert.deepEqual(pkg.decode(gray, stream, [32, 32]), expected);
  }
  console.log(`deeply nested configuration: ${trapped} of 10 calls trapped (and recovered)`);
});
