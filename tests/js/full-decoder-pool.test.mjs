// The worker pool and the full decoder: workers start with the decode-only module; a
// progressive chunk makes the pool load the full decoder (here, on demand) and hand it to
// the worker, which then decodes it as libjpeg-turbo does. (Its own process: nothing is
// loaded before, so the calling thread has no full decoder either.)
import { test } from "node:test";
import assert from "node:assert/strict";
import * as zarr from "zarrita";
import { register } from "../../dist/index.js";
import { isFullDecoderReady } from "../../dist/advanced.js";
import { PROGRESSIVE, BASELINE, storeOf } from "./helpers/progressive.mjs";
import { assertLikeDjpeg } from "./helpers/djpeg.mjs";

async function readAll(store, fixtures) {
  const out = [];
  for (let i = 0; i < fixtures.length; i++) {
    const arr = await zarr.open(zarr.root(store).resolve(String(i)), { kind: "array" });
    out.push(await zarr.get(arr, null));
  }
  return out;
}

test("a pool reading baseline chunks does not load the full decoder", async () => {
  const handle = register(zarr.registry, { workers: 2 });
  try {
    const [got] = await readAll(storeOf([BASELINE]), [BASELINE]);
    assertLikeDjpeg(got.data, BASELINE.path);
    assert.equal(handle.pool.mode, "workers");
    assert.deepEqual(handle.pool.stats, { fullDecoderWorkers: 0, decodedHere: 0, encodedHere: 0, workersReplaced: 0 });
    assert.equal(isFullDecoderReady(), false);
  } finally {
    await handle.close();
  }
});

test("the worker pool hands the full decoder to its workers and decodes progressive chunks there", async () => {
  const handle = register(zarr.registry, { workers: 2 });
  try {
    // Several reads at once, so both workers meet a progressive chunk.
    const rounds = await Promise.all([readAll(storeOf(PROGRESSIVE), PROGRESSIVE), readAll(storeOf(PROGRESSIVE), PROGRESSIVE), readAll(storeOf(PROGRESSIVE), PROGRESSIVE)]);
    for (const got of rounds) {
      PROGRESSIVE.forEach((f, i) => assertLikeDjpeg(got[i].data, f.path, `${f.file} via the pool`));
    }
    assert.equal(handle.pool.mode, "workers");
    assert.ok(handle.pool.stats.fullDecoderWorkers >= 1, JSON.stringify(handle.pool.stats));
    assert.equal(handle.pool.stats.decodedHere, 0, "every chunk decoded in a worker");
  } finally {
    await handle.close();
  }
});

