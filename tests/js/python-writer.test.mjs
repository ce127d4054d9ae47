// An independent writer: tests/python/write_jpeg_store.py (zarr-python + a jpeg codec on
// Pillow/libjpeg-turbo) writes a store at test time — unsharded and sharded, partial and
// missing chunks, transpose and reshape layouts, and (when imagecodecs is importable) Zarr
// v2 arrays with imagecodecs' own `imagecodecs_jpeg` compressor. zarrita + this package must read what
// Pillow decodes from the same streams, within the measured tolerance.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import * as zarr from "zarrita";
import FileSystemStore from "@zarrita/storage/fs";
import * as pkg from "../../dist/index.js";
import { PYTHON } from "./helpers/python.mjs";

const api = pkg;
const root = fileURLToPath(new URL("../..", import.meta.url));
// Max |ours - Pillow| allowed per sample (observed: 3 with 4:2:0, ≤ 2 otherwise). The streams
// are identical; IDCT rounding and chroma upsampling differ slightly between decoders.
export const TOLERANCE = Number(process.env.ZARR_JPEG_PILLOW_TOLERANCE ?? 3);

/** Runs the Python writer into a fresh temp dir; returns {dir, manifest} or {skip: reason}. */
export function writePythonStore() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "zarr-jpeg-pywriter-"));
  const r = spawnSync(PYTHON, [path.join(root, "tests/python/write_jpeg_store.py"), dir], { encoding: "utf8", timeout: 120000 });
  if (r.error || r.status !== 0) {
    fs.rmSync(dir, { recursive: true, force: true });
    const message = String(r.error ?? r.stderr);
    if (/No module named '(zarr|PIL|numpy)'|ENOENT/.test(message)) return { skip: `python3 with zarr, Pillow, numpy needed: ${message.trim().split("\n").pop()}` };
    throw new Error(`write_jpeg_store.py failed:\n${r.stderr}`);
  }
  return { dir, manifest: JSON.parse(fs.readFileSync(path.join(dir, "manifest.json"), "utf8")) };
}

export function compare(got, expected) {
  assert.equal(got.length, expected.length);
  let max = 0;
  let sum = 0;
  for (let i = 0; i < got.length; i++) {
    const d = Math.abs(got[i] - expected[i]);
    if (d > max) max = d;
    sum += d;
  }
  return { max, mean: sum / got.length };
}

const written = writePythonStore();

test("zarrita + zarr-jpeg read zarr-python/Pillow-written arrays as Pillow decodes them", { skip: written.skip }, async (t) => {
  const handle = api.register(zarr.registry);
  try {
    const store = new FileSystemStore(path.join(written.dir, "store"));
    const report = [];
    let overall = 0;
    for (const a of written.manifest.arrays) {
      const arr = await zarr.open(zarr.root(store).resolve(a.name), { kind: "array" });
      const got = await zarr.get(arr, a.shape.map(() => null));
      assert.deepEqual(got.shape, a.shape, a.name);
      // zarrita returns the array in its native (transpose) order; bring it to C order.
      const c = zarr._zarrita_internal_getStrides(got.shape, "C");
      let data = got.data;
      if (got.stride.some((s, i) => s !== c[i])) {
        data = new Uint8Array(got.data.length);
        const idx = new Array(got.shape.length).fill(0);
        for (let n = 0; n < data.length; n++) {
          let src = 0;
          for (let d = 0; d < idx.length; d++) src += idx[d] * got.stride[d];
          data[n] = got.data[src];
          for (let d = idx.length - 1; d >= 0; d--) { if (++idx[d] < got.shape[d]) break; idx[d] = 0; }
        }
      }
      const expected = fs.readFileSync(path.join(written.dir, "expected", `${a.name}.bin`));
      const { max, mean } = compare(data, expected);
      overall = Math.max(overall, max);
      const reference = a.zarr_format === 2 ? "imagecodecs" : "Pillow";
      report.push(`${a.name.padEnd(20)} ${JSON.stringify(a.shape).padEnd(14)} ${a.shards ? "sharded  " : "unsharded"} max |ours − ${reference}| = ${max}, mean ${mean.toFixed(3)}`);
      assert.ok(max <= TOLERANCE, `${a.name}: max |ours − Pillow| = ${max} > ${TOLERANCE}`);
    }
    t.diagnostic(`zarr-python ${written.manifest.zarr_python}, Pillow ${written.manifest.pillow}; overall max ${overall}`);
    if (!written.manifest.arrays.some((a) => a.zarr_format === 2)) {
      t.diagnostic("imagecodecs not importable: the Zarr v2 imagecodecs_jpeg arrays were not written (PYTHONPATH=DIR after `pip install --target DIR imagecodecs` adds them)");
    }
    for (const line of report) t.diagnostic(line);
    // Missing inner chunks and missing shards read as the fill value (0).
    const sharded = await zarr.open(zarr.root(store).resolve("sharded_ycbcr420"), { kind: "array" });
    const hole = await zarr.get(sharded, [zarr.slice(160, 200), zarr.slice(64, 150), null]);
    assert.ok(hole.data.every((v) => v === 0), "unwritten region is the fill value");
  } finally {
    await handle.close();
    fs.rmSync(written.dir, { recursive: true, force: true });
  }
});
