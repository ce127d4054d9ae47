// Neuroglancer precomputed volumes in through the npm package: tensorstore writes JPEG volumes
// at test time (grayscale unsharded, colour sharded), the npm converter turns them into Zarr
// arrays of 3-D chunks (reshape + jpeg, transpose first for colour), and zarrita reads them
// back within JPEG tolerance of tensorstore's own read, with the full-size chunks the
// precomputed chunk files byte for byte.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { execFileSync } from "node:child_process";
import * as zarr from "zarrita";
import FileSystemStore from "@zarrita/storage/fs";
import { init, register } from "../../dist/index.js";
import { convert, ConvertError } from "../../dist/convert.js";
import { PYTHON } from "./helpers/python.mjs";

register(zarr.registry);
await init();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "zarr-jpeg-precomputed-"));
process.on("exit", () => fs.rmSync(tmp, { recursive: true, force: true }));
const at = (name) => path.join(tmp, name);
const [X, Y, Z] = [150, 90, 20];

const WRITER = `
import sys, numpy as np, tensorstore as ts
out = sys.argv[1]
X, Y, Z = ${X}, ${Y}, ${Z}
x, y, z = np.meshgrid(np.arange(X), np.arange(Y), np.arange(Z), indexing="ij")
for name, channels, sharding in [("gray", 1, None), ("rgb", 3, {"@type": "neuroglancer_uint64_sharded_v1", "preshift_bits": 0,
        "hash": "murmurhash3_x86_128", "minishard_bits": 1, "shard_bits": 1, "minishard_index_encoding": "gzip"})]:
    data = np.stack([(np.sin(x / (8 + c) + z / 4) + np.cos(y / 11)) * 60 + 120 for c in range(channels)], -1).clip(0, 255).astype(np.uint8)
    meta = {"size": [X, Y, Z], "encoding": "jpeg", "chunk_size": [64, 32, 8], "resolution": [5, 5, 30], "voxel_offset": [10, 0, 0]}
    if sharding:
        meta["sharding"] = sharding
    t = ts.open({"driver": "neuroglancer_precomputed", "kvstore": {"driver": "file", "path": f"{out}/{name}"}, "create": True,
                 "multiscale_metadata": {"type": "image", "data_type": "uint8", "num_channels": channels}, "scale_metadata": meta}).result()
    t[...] = data
    # tensorstore's read, as (c,) z, y, x
    read = t.read().result().transpose(3, 2, 1, 0)
    (read[0] if channels == 1 else read).tofile(f"{out}/{name}.raw")
`;
execFileSync(PYTHON, ["-c", WRITER, tmp]);

/** zarrita's chunk (a transposed one is a strided view) in C order. */
function cOrder({ data, shape, stride }) {
  const out = new Uint8Array(data.length);
  const index = new Array(shape.length).fill(0);
  for (let i = 0; i < out.length; i++) {
    let at = 0;
    for (let d = 0; d < shape.length; d++) at += index[d] * stride[d];
    out[i] = data[at];
    for (let d = shape.length - 1; d >= 0 && ++index[d] === shape[d]; d--) index[d] = 0;
  }
  return out;
}

function psnr(a, b) {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += (a[i] - b[i]) ** 2;
  return sum === 0 ? Infinity : 10 * Math.log10((255 * 255) / (sum / a.length));
}

for (const name of ["gray", "rgb"]) {
  test(`a ${name} precomputed volume becomes a Zarr array that zarrita reads back`, async () => {
    const out = at(`${name}.zarr`);
    const summary = await convert(at(name), out);
    const colour = name === "rgb";
    const group = JSON.parse(fs.readFileSync(path.join(out, "zarr.json"), "utf8"));
    const ms = group.attributes.ome.multiscales[0];
    assert.deepEqual(ms.axes.map((a) => a.name), colour ? ["c", "z", "y", "x"] : ["z", "y", "x"]);
    const [scale, translation] = ms.datasets[0].coordinateTransformations;
    assert.deepEqual(scale.scale, colour ? [1, 30, 5, 5] : [30, 5, 5]);
    assert.deepEqual(translation.translation, colour ? [0, 0, 0, 50] : [0, 0, 50]);
    const array = await zarr.open(new FileSystemStore(out), { kind: "group" }).then((g) => zarr.open(g.resolve("0"), { kind: "array" }));
    assert.deepEqual(array.shape, colour ? [3, Z, Y, X] : [Z, Y, X]);
    assert.deepEqual(array.chunks, colour ? [3, 8, 32, 64] : [8, 32, 64]);
    const got = { data: cOrder(await zarr.get(array)) };
    const reference = new Uint8Array(fs.readFileSync(at(`${name}.raw`)));
    assert.ok(psnr(got.data, reference) >= 40, `PSNR ${psnr(got.data, reference)}`);
    // 3 × 3 × 3 chunks, full in x 0–1, y 0–1, z 0–1
    assert.equal(summary.source.chunks.copied, 8);
    if (!colour) {
      const file = fs.readFileSync(path.join(at(name), "5_5_30", "74-138_32-64_8-16"));
      assert.deepEqual(fs.readFileSync(path.join(out, "0", "c", "1", "1", "1")), file);
    }
  });
}

test("a precomputed chunk of the wrong size is refused by name, with nothing written", async () => {
  const bad = at("bad");
  // sharded: the chunks are found by grid position, and the first is a JPEG of 64 × 32·8 pixels
  fs.cpSync(at("rgb"), bad, { recursive: true });
  const info = JSON.parse(fs.readFileSync(path.join(bad, "info"), "utf8"));
  info.scales[0].chunk_sizes = [[64, 16, 8]];
  fs.writeFileSync(path.join(bad, "info"), JSON.stringify(info));
  await assert.rejects(convert(bad, at("bad.zarr")), (e) => {
    assert.ok(e instanceof ConvertError);
    assert.match(e.message, /a JPEG of 64 × 256 pixels, but a chunk of 64 × 16 × 8 voxels/);
    return true;
  });
  assert.equal(fs.existsSync(at("bad.zarr")), false);
});
