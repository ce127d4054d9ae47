// PNG input streamed a band of rows at a time (js/convert/png-rows.js, stream-convert.js): the
// store is byte for byte the one convert() writes from the same samples held in memory,
// where those samples come from an independent decoder (pngjs) of PNGs written at test
// time by independent writers (libvips `vips pngsave`, Pillow) in every colour type the
// streaming reader takes, with every PNG row filter (libvips --filter all / Pillow's
// adaptive filtering), odd sizes, palettes and alpha. Bad PNGs are refused by name.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { PNG } from "pngjs";
import { init } from "../../dist/index.js";
import { convert, ConvertError } from "../../dist/convert.js";
import { storeFiles } from "./helpers/store-files.mjs";
import { PYTHON } from "./helpers/python.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const samples = path.join(root, "samples");
await init();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "zarr-jpeg-stream-"));
process.on("exit", () => fs.rmSync(tmp, { recursive: true, force: true }));
let n = 0;
const out = () => path.join(tmp, `out-${n++}.zarr`);
const at = (name) => path.join(tmp, name);

// libvips: a crop of odd size, every filter; Pillow: palette, grayscale+alpha, RGBA with transparency
execFileSync("vips", ["crop", path.join(samples, "ihc.png"), at("rgb.v"), "3", "5", "509", "389"]);
execFileSync("vips", ["pngsave", at("rgb.v"), at("rgb.png"), "--filter", "all", "--compression", "9"]);
execFileSync("vips", ["pngsave", path.join(samples, "cell.png"), at("gray.png"), "--filter", "all"]);
execFileSync(PYTHON, ["-c", `
from PIL import Image
import numpy as np
im = Image.open(${JSON.stringify(path.join(samples, "ihc.png"))}).convert("RGB").crop((0, 0, 301, 277))
im.quantize(64).save(${JSON.stringify(at("palette.png"))})
a = np.asarray(im)
alpha = ((np.arange(a.shape[1])[None, :] + np.arange(a.shape[0])[:, None]) % 256).astype(np.uint8)
Image.fromarray(np.dstack([a, alpha]), "RGBA").save(${JSON.stringify(at("rgba.png"))})
Image.fromarray(np.dstack([a[:, :, 1], alpha]), "LA").save(${JSON.stringify(at("la.png"))})
`]);

/** pngjs's decode → the converter's samples (alpha dropped, palette expanded, as the reader documents). */
function reference(file) {
  const png = PNG.sync.read(fs.readFileSync(file));
  const gray = png.colorType === 0 || png.colorType === 4;
  const C = gray ? 1 : 3;
  const data = new Uint8Array(png.width * png.height * C);
  for (let i = 0, o = 0; i < png.data.length; i += 4) {
    data[o++] = png.data[i];
    if (!gray) {
      data[o++] = png.data[i + 1];
      data[o++] = png.data[i + 2];
    }
  }
  return { data, shape: gray ? [png.height, png.width] : [png.height, png.width, 3] };
}

function assertSameStore(a, b) {
  const fa = storeFiles(a);
  const fb = storeFiles(b);
  assert.deepEqual([...fb.keys()].sort(), [...fa.keys()].sort());
  for (const [rel, bytes] of fa) assert.ok(bytes.equals(fb.get(rel)), `${rel} differs`);
}

const variants = [
  ["defaults", {}],
  ["sharded, 64-px chunks, 4:4:4, 2 workers", { chunk: 64, shard: 128, subsampling: "4:4:4", workers: 2 }],
  ["channel axis last, quality 80", { channelAxis: "last", quality: 80 }],
];
for (const file of ["rgb.png", "gray.png", "palette.png", "rgba.png", "la.png"]) {
  for (const [label, options] of variants) {
    test(`${file}, ${label}: the streamed store equals convert() of pngjs's samples, byte for byte`, async () => {
      const streamed = out();
      const whole = out();
      const gray = file === "gray.png" || file === "la.png";
      const { subsampling, ...rest } = options;
      const opts = { ...(gray ? rest : options), name: "x" };
      const s = await convert(at(file), streamed, opts);
      const w = await convert(reference(at(file)), whole, opts);
      assert.equal(s.streamed, true);
      assertSameStore(whole, streamed);
      assert.equal(s.psnr, w.psnr);
      assert.deepEqual(s.levels, w.levels);
      if (file === "rgba.png" || file === "la.png") assert.ok(s.warnings.some((m) => /alpha is dropped/.test(m)));
    });
  }
}

test("--color grayscale on a colour PNG: luma, as the in-memory path", async () => {
  const streamed = out();
  const whole = out();
  await convert(at("rgb.png"), streamed, { color: "grayscale", name: "x" });
  await convert(reference(at("rgb.png")), whole, { color: "grayscale", name: "x" });
  assertSameStore(whole, streamed);
});

test("bad PNGs: cut short, corrupt image data, a filter type that does not exist; named, nothing written", async () => {
  const good = fs.readFileSync(at("rgb.png"));
  const cases = [
    ["short.png", good.subarray(0, good.length - 2000), /truncated PNG/],
    ["zlib.png", (() => {
      const b = Buffer.from(good);
      const idat = b.indexOf("IDAT");
      b.fill(0x55, idat + 40, idat + 400); // (the chunk's CRC is not checked; zlib's checks fail)
      return b;
    })(), /corrupt PNG|filter type/],
  ];
  for (const [name, bytes, pattern] of cases) {
    fs.writeFileSync(at(name), bytes);
    const dir = out();
    await assert.rejects(convert(at(name), dir), (e) => e instanceof ConvertError && e.message.includes(name) && pattern.test(e.message), name);
    assert.equal(fs.existsSync(dir), false);
    assert.deepEqual(fs.readdirSync(tmp).filter((f) => f.includes(".partial-")), []);
  }
});
