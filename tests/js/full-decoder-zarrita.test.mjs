// The full decoder loaded on demand by register() + zarrita on the main thread, reading
// progressive chunks (libjpeg-turbo and PIL streams) as libjpeg-turbo decodes them; then
// decodeAsync(). (Its own process: nothing is loaded before.)
import { test } from "node:test";
import assert from "node:assert/strict";
import * as zarr from "zarrita";
import { register, decodeAsync } from "../../dist/index.js";
import { isFullDecoderReady } from "../../dist/advanced.js";
import { PROGRESSIVE, storeOf } from "./helpers/progressive.mjs";
import { assertLikeDjpeg } from "./helpers/djpeg.mjs";

async function readAll(store) {
  const out = [];
  for (let i = 0; i < PROGRESSIVE.length; i++) {
    const arr = await zarr.open(zarr.root(store).resolve(String(i)), { kind: "array" });
    out.push(await zarr.get(arr, null));
  }
  return out;
}

test("register() + zarrita on the main thread loads the full decoder for progressive chunks", async () => {
  register(zarr.registry);
  assert.equal(isFullDecoderReady(), false);
  const got = await readAll(storeOf(PROGRESSIVE));
  PROGRESSIVE.forEach((f, i) => {
    assert.deepEqual(got[i].shape, f.shape);
    assertLikeDjpeg(got[i].data, f.path, `${f.file} via zarrita`);
  });
  assert.equal(isFullDecoderReady(), true);
});

test("decodeAsync() matches libjpeg-turbo", async () => {
  for (const f of PROGRESSIVE) assertLikeDjpeg(await decodeAsync(f.config, f.bytes, f.shape), f.path, f.file);
});
