// The zarrita versions package.json's peer range admits, at both ends of what is installed:
// 0.7.4 (devDependency alias "zarrita-0.7.4", the oldest in the range) and 0.7.5 ("zarrita").
// Each, after register(), reads one channel of the converter's colour store, stored
// (c, y, x) with a transpose codec, which zarrita before 0.7.4 cannot ("Order length must
// match the number of dimensions.", docs/viewers.md), and reads it exactly as the other.
// Run: node --test tests/js/zarrita-versions.test.mjs
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import FileSystemStore from "@zarrita/storage/fs";
import * as newest from "zarrita";
import * as oldest from "zarrita-0.7.4";
import { register } from "../../dist/index.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const pkg = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"));
const versionOf = (dir) => JSON.parse(fs.readFileSync(path.join(root, "node_modules", dir, "package.json"), "utf8")).version;

test("the peer range starts at the oldest zarrita the suite runs, and admits the newest", () => {
  assert.equal(versionOf("zarrita-0.7.4"), "0.7.4");
  assert.equal(pkg.peerDependencies.zarrita, `^${versionOf("zarrita-0.7.4")}`);
  assert.equal(versionOf("zarrita"), "0.7.5");
  assert.equal(pkg.devDependencies.zarrita, versionOf("zarrita"));
});

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "zarr-jpeg-zarrita-versions-"));
process.on("exit", () => fs.rmSync(tmp, { recursive: true, force: true }));
const store = path.join(tmp, "ihc.zarr");
execFileSync(process.execPath, [path.join(root, "dist/cli.js"), "convert", path.join(root, "samples/ihc.png"), store, "--chunk", "128", "--quiet"]);

async function readChannels(zarr) {
  register(zarr.registry);
  const array = await zarr.open(zarr.root(new FileSystemStore(store)).resolve("0"), { kind: "array" });
  assert.deepEqual(array.shape, [3, 512, 512]);
  const whole = await zarr.get(array);
  const channels = [];
  for (let c = 0; c < 3; c++) {
    const got = await zarr.get(array, [c, zarr.slice(100, 300), zarr.slice(50, 250)]);
    assert.deepEqual(got.shape, [200, 200]);
    // The same samples as the whole read, windowed by hand.
    for (const [y, x] of [[0, 0], [199, 199], [57, 131]]) {
      assert.equal(got.data[y * got.stride[0] + x * got.stride[1]],
        whole.data[c * whole.stride[0] + (100 + y) * whole.stride[1] + (50 + x) * whole.stride[2]], `channel ${c} (${y}, ${x})`);
    }
    channels.push(got.data);
  }
  return channels;
}

test("zarrita 0.7.4 and 0.7.5 read each channel of a (c, y, x) + transpose colour store, alike", async () => {
  const a = await readChannels(oldest);
  const b = await readChannels(newest);
  assert.deepEqual(a, b);
});
