// The full decoder through the synchronous API: the decode-only module leaves progressive
// streams to it (an Error of kind "NeedsFullDecoder" that says what to do) until
// initFullDecoder() has finished; then decode() and decodeInto() give libjpeg-turbo's
// samples. (Its own process, as every node:test file: nothing is loaded before.)
import { test } from "node:test";
import assert from "node:assert/strict";
import { initDecoder, initFullDecoder, decode, decodeInto, decodeAsync } from "../../dist/index.js";
import { isFullDecoderReady, compiledFullDecoderModule, usesSimd } from "../../dist/advanced.js";
import { PROGRESSIVE, BASELINE } from "./helpers/progressive.mjs";
import { assertLikeDjpeg } from "./helpers/djpeg.mjs";
import { flatProgressive } from "./helpers/flat-progressive.mjs";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";

const NEEDS = (f) => (error) => {
  assert.ok(error instanceof Error, String(error));
  assert.equal(error.kind, "NeedsFullDecoder", `${f.file}: ${error.message}`);
  assert.match(error.message, /^jpeg: JPEG stream needs the full decoder: this module.s baseline decoder leaves this stream to the full decoder \(a progressive stream \(SOF2\)\);/);
  assert.match(error.message, /`await initFullDecoder\(\)`/);
  assert.match(error.message, /register\(\) and the worker pool load it by themselves/);
  return true;
};

test("before initFullDecoder(): progressive streams fail with kind NeedsFullDecoder; decodeInto leaves `out` alone", async () => {
  await initDecoder();
  assert.equal(isFullDecoderReady(), false);
  for (const f of PROGRESSIVE) {
    assert.throws(() => decode(f.config, f.bytes, f.shape), NEEDS(f));
    const out = new Uint8Array(f.shape.reduce((a, b) => a * b)).fill(7);
    assert.throws(() => decodeInto(f.config, f.bytes, f.shape, out), NEEDS(f));
    assert.ok(out.every((v) => v === 7), `${f.file}: out was written`);
  }
  // So are sequential streams with components in separate scans, by their own reason.
  const scans = mkdtempSync(join(tmpdir(), "zarr-jpeg-scans-"));
  try {
    writeFileSync(join(scans, "in.ppm"), execFileSync("djpeg", ["-pnm", BASELINE.path]));
    writeFileSync(join(scans, "scans.txt"), "0;\n1;\n2;\n");
    const separate = new Uint8Array(execFileSync("cjpeg", ["-quality", "90", "-sample", "2x2", "-scans", join(scans, "scans.txt"), join(scans, "in.ppm")]));
    assert.throws(() => decode(BASELINE.config, separate, BASELINE.shape), (e) => e.kind === "NeedsFullDecoder" && /\(components coded in separate scans\)/.test(e.message));
  } finally {
    rmSync(scans, { recursive: true, force: true });
  }
  // Baseline streams decode with the decoder alone, and nothing loaded the full decoder.
  assertLikeDjpeg(decode(BASELINE.config, BASELINE.bytes, BASELINE.shape), BASELINE.path);
  assert.equal(isFullDecoderReady(), false);
  assert.equal(compiledFullDecoderModule(), undefined, "the full decoder was not fetched");
});

test("after initFullDecoder(): decode() and decodeInto() retry there and match libjpeg-turbo", async () => {
  await initFullDecoder();
  assert.equal(isFullDecoderReady(), true);
  assert.ok(compiledFullDecoderModule() instanceof WebAssembly.Module);
  await initFullDecoder(); // idempotent
  for (const f of PROGRESSIVE) {
    const samples = decode(f.config, f.bytes, f.shape);
    assertLikeDjpeg(samples, f.path, f.file);
    const out = new Uint8Array(samples.length);
    decodeInto(f.config, f.bytes, f.shape, out);
    assert.deepEqual(out, samples, `${f.file}: decodeInto`);
    assert.deepEqual(await decodeAsync(f.config, f.bytes, f.shape), samples, `${f.file}: decodeAsync`);
  }
  // Other errors of a progressive stream come from the full decoder, with their own kind.
  const f = PROGRESSIVE[1];
  assert.throws(() => decode(f.config, f.bytes, [48, 61, 3]), (e) => e.kind === "StreamMismatch");
  assert.throws(() => decode(f.config, f.bytes.subarray(0, f.bytes.length - 40), f.shape), (e) => e.kind === "CorruptStream");
  assert.equal(typeof usesSimd(), "boolean");
});

// zune-jpeg holds a progressive stream's coefficients, 2 bytes per sample of every
// component, until its last scan, and an allocation that fails in wasm is a trap. A few MB
// of stream can claim an image whose decoding takes more memory than wasm has (4 GiB; 2 GiB
// in one piece): the decoder reserves what it will need first and refuses such an image by
// name, and the instance goes on decoding.
test("a progressive stream too large for wasm memory is refused by name, without a trap", async () => {
  await initFullDecoder();
  const YCC444 = { quality: 90, encoded_color_space: "ycbcr", subsampling: [[1, 1], [1, 1], [1, 1]] };
  const GRAY = { quality: 90, encoded_color_space: "grayscale" };
  // The hand-written streams are ones libjpeg-turbo reads: mid-grey, as ours.
  const dir = mkdtempSync(join(tmpdir(), "zarr-jpeg-flat-"));
  try {
    for (const [config, sampling, shape] of [
      [YCC444, [[1, 1], [1, 1], [1, 1]], [80, 96, 3]],
      [{ ...YCC444, subsampling: [[2, 2], [1, 1], [1, 1]] }, [[2, 2], [1, 1], [1, 1]], [47, 61, 3]],
      [GRAY, [[1, 1]], [47, 61]],
    ]) {
      const stream = flatProgressive(shape[1], shape[0], sampling);
      const file = join(dir, `flat-${shape.join("x")}.jpg`);
      writeFileSync(file, stream);
      const samples = decode(config, stream, shape);
      assertLikeDjpeg(samples, file);
      assert.ok(samples.every((v) => v === 128), `${file}: mid-grey`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const cases = [
    // 4 MB of stream; the coefficients alone would take 4.06 GB
    { size: 26000, needs: /needs 6093984000 bytes of memory/ },
    // 5 MB; the decoded chunk alone is 2.7 GB, more than one allocation can take
    { size: 30000, needs: /needs 8111520000 bytes of memory/ },
  ];
  for (const { size, needs } of cases) {
    const stream = flatProgressive(size, size, [[1, 1], [1, 1], [1, 1]]);
    const check = (error) => {
      assert.ok(error instanceof Error, String(error));
      assert.doesNotMatch(error.message, /trapped/, `${size}²: ${error.message}`);
      assert.equal(error.kind, "UnsupportedStream", `${size}²: ${error.message}`);
      assert.match(error.message, new RegExp(`^jpeg: unsupported JPEG stream: decoding this ${size} × ${size} \\(height × width\\) progressive stream`));
      assert.match(error.message, needs);
      assert.match(error.message, /more than this platform's memory can take \(WebAssembly: 4 GiB in all, 2 GiB in one piece\)/);
      return true;
    };
    assert.throws(() => decode(YCC444, stream, [size, size, 3]), check);
    await assert.rejects(decodeAsync(YCC444, stream, [size, size, 3]), check);
  }
  // The same instance decodes on.
  for (const f of PROGRESSIVE) assertLikeDjpeg(decode(f.config, f.bytes, f.shape), f.path, `${f.file} afterwards`);
});

// Sequential streams that code their components in separate scans (cjpeg -scans; the
// jpeg-encoder crate writes optimised colour so): the decode-only module leaves them to the
// full decoder, whose patched zune-jpeg decodes them like libjpeg-turbo (tests/interop.rs has
// the full matrix natively); the forms it cannot place are refused by name.
test("colour streams with components in separate scans decode like djpeg, in the full decoder", async () => {
  await initFullDecoder();
  const YCC420 = { quality: 90, encoded_color_space: "ycbcr", subsampling: [[2, 2], [1, 1], [1, 1]] };
  const dir = mkdtempSync(join(tmpdir(), "zarr-jpeg-scans-"));
  try {
    // a 61 × 47 RGB image from the 4:2:0 fixture, as cjpeg's PPM input
    const ppm = join(dir, "in.ppm");
    writeFileSync(ppm, execFileSync("djpeg", ["-pnm", BASELINE.path]));
    for (const [name, script, decodes] of [
      ["y-cb-cr", "0;\n1;\n2;\n", true],
      ["y-cbcr", "0;\n1 2;\n", true],
      ["cb-y-cr", "1;\n0;\n2;\n", false],
    ]) {
      for (const sample of ["2x2", "1x2", "4x1"]) {
        const scans = join(dir, `${name}.txt`);
        writeFileSync(scans, script);
        const file = join(dir, `${name}-${sample}.jpg`);
        writeFileSync(file, execFileSync("cjpeg", ["-quality", "90", "-sample", sample, "-scans", scans, ppm]));
        const bytes = new Uint8Array(readFileSync(file));
        if (decodes) {
          assertLikeDjpeg(decode(YCC420, bytes, [47, 61, 3]), file, `${name} ${sample}`);
          assertLikeDjpeg(await decodeAsync(YCC420, bytes, [47, 61, 3]), file, `${name} ${sample} (decodeAsync)`);
        } else {
          assert.throws(() => decode(YCC420, bytes, [47, 61, 3]), (e) => e.kind === "UnsupportedStream" && /first scan does not start with the first component/.test(e.message));
        }
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
