// register(): reading loads only the decode-only module; the encoder loads when something
// is first written. (Runs in its own process, as every node:test file does, so no other
// test has loaded a module before.)
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as zarr from "zarrita";
import { register, encode, encodeInto, decode } from "../../dist/index.js";
import { isReady, compiledWasmModule, compiledDecoderModule, compiledFullDecoderModule, isFullDecoderReady } from "../../dist/advanced.js";

const config = { quality: 90, encoded_color_space: "ycbcr", subsampling: [[2, 2], [1, 1], [1, 1]] };

function storeWithOneChunk() {
  const meta = {
    zarr_format: 3,
    node_type: "array",
    shape: [64, 64, 3],
    data_type: "uint8",
    chunk_grid: { name: "regular", configuration: { chunk_shape: [64, 64, 3] } },
    chunk_key_encoding: { name: "default", configuration: { separator: "/" } },
    codecs: [{ name: "jpeg", configuration: config }],
    fill_value: 0,
  };
  // A stream written by libjpeg-turbo (PIL), so nothing here needs our encoder.
  const jpeg = new Uint8Array(readFileSync(new URL("../fixtures/ycc420_q90_pil_64x64.jpg", import.meta.url)));
  return new Map([
    ["/zarr.json", new TextEncoder().encode(JSON.stringify(meta))],
    ["/c/0/0/0", jpeg],
  ]);
}

test("reading through register() loads the decoder only; the first write loads the encoder", async () => {
  register(zarr.registry);
  const store = storeWithOneChunk();
  const arr = await zarr.open(store, { kind: "array" });
  const { data, shape } = await zarr.get(arr, null);
  assert.deepEqual(shape, [64, 64, 3]);
  assert.equal(data.length, 64 * 64 * 3);
  assert.ok(compiledDecoderModule() instanceof WebAssembly.Module, "the decoder is loaded");
  assert.equal(isReady(), false, "the encoder is not loaded by reading");
  assert.equal(compiledWasmModule(), undefined);
  assert.equal(isFullDecoderReady(), false, "baseline data does not load the full decoder");
  assert.equal(compiledFullDecoderModule(), undefined);
  assert.throws(() => encode(config, data, shape), /encoder is not loaded; call `await init\(\)` first \(initDecoder\(\) loads the decoder only\)/);
  assert.throws(() => encodeInto(config, data, shape, new Uint8Array(data.length)), /encoder is not loaded; call `await init\(\)` first/);
  // decode() works with the decoder alone.
  assert.deepEqual(decode(config, store.get("/c/0/0/0"), [64, 64, 3]), data);

  await zarr.set(arr, null, { data, shape, stride: [192, 3, 1] });
  assert.equal(isReady(), true, "writing loaded the encoder");
  const again = await zarr.get(arr, null);
  assert.equal(again.data.length, data.length);
  assert.equal(isFullDecoderReady(), false, "nor does writing and reading our own (baseline) streams");
});
