// The Rust core's converter through the converter wasm module (js/convert-files.js): samples
// in memory give the store the JavaScript converter (convert() of the same samples) writes,
// file for file and byte for byte, and refusals name the problem with nothing written.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { convert } from "../../dist/convert.js";
import { convertSamples, ConvertError } from "../../dist/convert-files.js";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "zarr-jpeg-core-"));
process.on("exit", () => fs.rmSync(tmp, { recursive: true, force: true }));

function files(dir) {
  const out = {};
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out[path.relative(dir, p)] = fs.readFileSync(p);
    }
  };
  walk(dir);
  return out;
}

function image(h, w, c) {
  const data = new Uint8Array(h * w * c);
  for (let i = 0; i < data.length; i++) data[i] = (i * 7 + ((i / (w * c)) | 0) * 3) & 255;
  return data;
}

for (const [h, w, c, options] of [[100, 150, 3, { chunk: 32 }], [67, 101, 1, { chunk: 16, shard: 32 }], [40, 30, 4, { chunk: 16, channelAxis: "last" }]]) {
  test(`samples ${h}×${w}×${c} ${JSON.stringify(options)}: the JavaScript converter's store, byte for byte`, async () => {
    const shape = c === 1 ? [h, w] : [h, w, c];
    const data = image(h, w, c);
    const before = data.slice();
    const js = path.join(tmp, `js-${h}-${c}.zarr`);
    const core = path.join(tmp, `core-${h}-${c}.zarr`);
    const warnings = [];
    await convert({ data, shape }, js, { ...options, onWarning: () => {} });
    const summary = await convertSamples(data, shape, core, { ...options, onWarning: (m) => warnings.push(m) });
    assert.deepEqual(data, before, "the caller's samples are not modified");
    const a = files(js);
    const b = files(core);
    assert.deepEqual(Object.keys(b).sort(), Object.keys(a).sort());
    for (const key of Object.keys(a)) assert.ok(a[key].equals(b[key]), key);
    assert.equal(summary.chunks, summary.levels.reduce((n, l) => n + l.chunks, 0));
    assert.match(summary.text, /^wrote .* in /);
    assert.equal(warnings.length, c === 4 ? 1 : 0);
  });
}

test("refusals: a wrong size or type, bad options; nothing written", async () => {
  const out = path.join(tmp, "never.zarr");
  await assert.rejects(convertSamples(new Uint8Array(10), [4, 4], out), (e) => e instanceof ConvertError && e.kind === "InvalidArgument" && /data holds 10 samples but shape \[4,4\] needs 16/.test(e.message));
  await assert.rejects(convertSamples(new Uint16Array(16), [4, 4], out), (e) => e instanceof ConvertError && /data must be a Uint8Array \(uint8 samples\), got Uint16Array/.test(e.message));
  await assert.rejects(convertSamples(new Uint8Array(16), [4, 4], out, { quality: 0 }), (e) => e instanceof ConvertError && /quality must be an integer from 1 to 100/.test(e.message));
  await assert.rejects(convertSamples(new Uint8Array(16), [4, 4], out, null), (e) => e instanceof ConvertError && /options must be an object, got null/.test(e.message));
  assert.equal(fs.existsSync(out), false);
  assert.deepEqual(fs.readdirSync(tmp).filter((n) => n.includes("partial")), []);
});
