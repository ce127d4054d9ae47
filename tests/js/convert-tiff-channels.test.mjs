// Multi-channel TIFFs whose channels are pages of their own (OME-TIFF, ImageJ), written at
// test time by tifffile: every channel is converted, as a `c` axis of grayscale chunks, and
// equals tifffile's read of its page; what the converter cannot take (channel pages that
// differ) is refused by name with no output left, and unlabelled extra
// pages are named in a warning, never dropped silently. JPEG-compressed channel pages (and
// planar JPEG planes) keep their tiles: each is a chunk of its channel.
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
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "zarr-jpeg-tiff-channels-"));
process.on("exit", () => fs.rmSync(tmp, { recursive: true, force: true }));
const at = (name) => path.join(tmp, name);

// Channel 0 a gradient with texture, channels 1 and 2 flat (JPEG keeps flat blocks exactly):
// a channel read from the wrong page would show. Each file's samples go to <name>.npy-like
// raw bytes (C, Y, X) as tifffile reads them back.
const WRITER = `
import sys, numpy as np, tifffile
out = sys.argv[1]
y, x = np.mgrid[0:300, 0:260]
chan = np.stack([(x * 0.8 + y * 0.3 + 20 * np.sin(x / 5.0)) % 256, np.full((300, 260), 100), np.full((300, 260), 200)]).astype(np.uint8)
def save(name, data, **kw):
    tifffile.imwrite(f"{out}/{name}", data, **kw)
    tifffile.imread(f"{out}/{name}").tofile(f"{out}/{name}.raw")
save("ome-lzw.ome.tif", chan, ome=True, tile=(128, 128), compression="lzw", photometric="minisblack", metadata={"axes": "CYX"})
save("ome-strips.ome.tif", chan, ome=True, compression="deflate", rowsperstrip=40, photometric="minisblack", metadata={"axes": "CYX"})
save("ome-uint16.ome.tif", chan.astype(np.uint16) * 250, ome=True, tile=(128, 128), photometric="minisblack", metadata={"axes": "CYX"})
save("imagej.tif", chan[None], imagej=True, metadata={"axes": "ZCYX"})
save("unlabelled.tif", chan, photometric="minisblack", description="three pages")
save("ome-jpeg.ome.tif", chan, ome=True, tile=(128, 128), compression="jpeg", photometric="minisblack", metadata={"axes": "CYX"})
save("planar-jpeg.tif", chan, tile=(128, 128), compression="jpeg", photometric="minisblack", planarconfig="separate", metadata=None)
with tifffile.TiffWriter(f"{out}/unlike.ome.tif", ome=True) as w:
    w.write(chan[:2], photometric="minisblack", metadata={"axes": "CYX"}, compression="lzw")
# an OME-XML that claims 3 channels over pages written apart: the third page is smaller
with tifffile.TiffWriter(f"{out}/mixed.tif") as w:
    w.write(chan[0], photometric="minisblack", metadata=None, description='<OME><Image><Pixels SizeC="3" SizeZ="1" SizeT="1"><Channel SamplesPerPixel="1"/></Pixels></Image></OME>')
    w.write(chan[1], photometric="minisblack", metadata=None)
    w.write(chan[2][:100], photometric="minisblack", metadata=None)
`;
execFileSync(PYTHON, ["-c", WRITER, tmp]);

async function level0(store) {
  const array = await zarr.open(zarr.root(new FileSystemStore(store)).resolve("0"), { kind: "array" });
  return zarr.get(array);
}

for (const [name, options] of [["ome-lzw.ome.tif", {}], ["ome-strips.ome.tif", {}], ["imagej.tif", {}], ["ome-uint16.ome.tif", { rescale: "0:65535" }]]) {
  test(`${name}: every channel page converted into the c axis, each equal to tifffile's read of its page`, async () => {
    const out = at(`${name}.zarr`);
    const summary = await convert(at(name), out, { quality: 100, ...options });
    const meta = JSON.parse(fs.readFileSync(path.join(out, "0", "zarr.json"), "utf8"));
    assert.deepEqual(meta.shape, [3, 300, 260]);
    assert.deepEqual(meta.dimension_names, ["c", "y", "x"]);
    const got = await level0(out);
    const raw = fs.readFileSync(at(`${name}.raw`));
    const expected = name.includes("uint16")
      ? Uint8Array.from(new Uint16Array(raw.buffer, raw.byteOffset, raw.length / 2), (v) => Math.round((v * 255) / 65535))
      : new Uint8Array(raw);
    assert.equal(got.data.length, expected.length);
    assert.deepEqual(got.shape, [3, 300, 260]);
    const [s0, s1, s2] = got.stride; // (zarrita hands back the transposed chunks as strides)
    for (let c = 0; c < 3; c++) {
      let worst = 0;
      for (let y = 0; y < 300; y++) {
        for (let x = 0; x < 260; x++) worst = Math.max(worst, Math.abs(got.data[c * s0 + y * s1 + x * s2] - expected[(c * 300 + y) * 260 + x]));
      }
      // quality 100 on a textured channel; flat channels are exact
      assert.ok(worst <= (c === 0 ? 2 : 0), `channel ${c}: max difference ${worst}`);
    }
    assert.deepEqual(summary.warnings.filter((w) => /not converted/.test(w)), []);
  });
}

for (const name of ["ome-jpeg.ome.tif", "planar-jpeg.tif"]) {
  test(`${name}: each channel's JPEG tiles copied as that channel's chunks, decoding to tifffile's read (libjpeg-turbo) of its plane`, async () => {
    const out = at(`${name}.zarr`);
    const summary = await convert(at(name), out);
    // 3 planes of 3 × 3 tiles of 128², all copied
    assert.deepEqual(summary.tiles, { copied: 27, reencoded: 0, empty: 0 });
    const meta = JSON.parse(fs.readFileSync(path.join(out, "0", "zarr.json"), "utf8"));
    assert.deepEqual(meta.shape, [3, 300, 260]);
    assert.equal(meta.codecs.at(-1).configuration.encoded_color_space, "grayscale");
    // every chunk against its tile: Pillow's decode of the chunk equals tifffile's of the
    // plane exactly, and its entropy-coded data is the tile's byte for byte
    const report = JSON.parse(execFileSync(PYTHON, [path.resolve("tests/python/check_tiff_store.py"), at(name), out], { encoding: "utf8" }));
    assert.equal(report.max_diff, 0, JSON.stringify(report));
    assert.equal(report.identical_entropy, 27, JSON.stringify(report.differing_entropy));
    assert.deepEqual(report.modes, ["L"]);
    // and zarrita reads it within our decoder's rounding (≤ 1) of libjpeg-turbo's
    const got = await level0(out);
    const expected = new Uint8Array(fs.readFileSync(at(`${name}.raw`)));
    const [s0, s1, s2] = got.stride;
    for (let c = 0; c < 3; c++) {
      let worst = 0;
      for (let y = 0; y < 300; y++) {
        for (let x = 0; x < 260; x++) worst = Math.max(worst, Math.abs(got.data[c * s0 + y * s1 + x * s2] - expected[(c * 300 + y) * 260 + x]));
      }
      assert.ok(worst <= 1, `channel ${c}: max difference ${worst}`);
    }
  });
}

test("unlabelled extra pages of the same size: page 0 converted, the others named in a warning", async () => {
  const warnings = [];
  const summary = await convert(at("unlabelled.tif"), at("unlabelled.zarr"), { onWarning: (w) => warnings.push(w) });
  assert.deepEqual(summary.inputShape, [300, 260]);
  assert.ok(warnings.some((w) => /2 more full-resolution page\(s\) .*page 1, page 2.* not converted/.test(w)), warnings.join("\n"));
  assert.deepEqual(summary.warnings, warnings);
});

for (const [name, pattern] of [
  ["mixed.tif", /page 2, channel 2 of 3, differs from page 0/],
]) {
  test(`${name} is refused by name, with no output left`, async () => {
    const out = at(`${name}.zarr`);
    await assert.rejects(convert(at(name), out), (e) => e instanceof ConvertError && e.kind === "InvalidInput" && e.message.startsWith(`zarr-jpeg convert: ${at(name)}: `) && pattern.test(e.message));
    assert.equal(fs.existsSync(out), false);
    assert.deepEqual(fs.readdirSync(tmp).filter((f) => f.startsWith(`${name}.zarr`)), []);
  });
}
