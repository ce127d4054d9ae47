// The full decoder through the synchronous API: the decode-only module leaves progressive
// streams to it (an Error of kind "NeedsFullDecoder" that says what to do) until
// initFullDecoder() has finished; then decode() and decodeInto() give libjpeg-turbo's
// samples. (Its own process, as every node:test file: nothing is loaded before.)
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  initDecoder,
  initFullDecoder,
  isFullDecoderReady,
  compiledFullDecoderModule,
  decode,
  decodeInto,
  decodeAsync,
  usesSimd,
} from "../../dist/index.js";
import { PROGRESSIVE, BASELINE } from "./helpers/progressive.mjs";
import { assertLikeDjpeg } from "./helpers/djpeg.mjs";

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
