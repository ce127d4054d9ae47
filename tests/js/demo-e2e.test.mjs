// End to end: the demo page in headless Chromium (Debian's, via playwright-core) against
// the server `npm start` runs (scripts/serve.mjs, started here on a free port, sample
// stores prepared by the same code). Checks: no console errors; the sample renders and
// the canvas pixels of a chunk shown 1:1 equal decode() of that chunk's stored stream
// (plain, sharded, grayscale); pan/zoom switches pyramid levels and fetches only visible
// chunks; hover names the chunk; the inspector's figures follow the controls; clear
// messages for a missing URL, a codec the page lacks and a non-uint8 array; the
// inspector's default quality (95); a converted z-stack's z slider and channel composite.
// Screenshots go to tests/artifacts/ (not committed).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { prepareSamples, startDemoServer, ROOT, STORES } from "../../scripts/serve.mjs";
import { launchBrowser } from "./helpers/browser.mjs";
import { init, decode } from "../../dist/index.js";
import { spawnSync } from "node:child_process";
import { PYTHON } from "./helpers/python.mjs";

const ARTIFACTS = path.join(ROOT, "tests", "artifacts");
const FIXTURES = path.join(STORES, "_e2e");
let server;
let browser;
let page;
const failedResponses = [];
const requested = [];

const shot = (name) => page.screenshot({ path: path.join(ARTIFACTS, `demo-${name}.png`), fullPage: true });

function writeFixture(name, meta) {
  fs.mkdirSync(path.join(FIXTURES, name), { recursive: true });
  fs.writeFileSync(path.join(FIXTURES, name, "zarr.json"), JSON.stringify({
    zarr_format: 3, node_type: "array", shape: [64, 64], data_type: "uint8",
    chunk_grid: { name: "regular", configuration: { chunk_shape: [32, 32] } },
    chunk_key_encoding: { name: "default", configuration: { separator: "/" } },
    fill_value: 0, codecs: [{ name: "bytes" }], ...meta,
  }));
}

before(async () => {
  await init();
  await prepareSamples({ log: () => {} });
  writeFixture("zfp.zarr", { data_type: "uint8", codecs: [{ name: "bytes" }, { name: "zfp", configuration: { mode: "fixed-rate" } }] });
  writeFixture("float.zarr", { data_type: "float32", codecs: [{ name: "bytes", configuration: { endian: "little" } }] });
  writeFixture("raw.zarr", {});
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  server = await startDemoServer({ port: 0 });
  browser = await launchBrowser();
  page = await browser.newPage();
  await page.setViewportSize({ width: 1400, height: 1100 });
  page.on("response", (r) => {
    if (r.status() >= 400) failedResponses.push(new URL(r.url()).pathname);
  });
  page.on("request", (r) => requested.push(new URL(r.url()).pathname));
  await page.goto(server.url);
  await page.evaluate(() => window.demo.ready);
});

after(async () => {
  await browser?.close();
  await server?.close();
  fs.rmSync(FIXTURES, { recursive: true, force: true });
});

/** Shows `level` 1:1 with level pixel (x0, y0) at the canvas's top-left; returns RGBA of the canvas's [0, h) × [0, w). */
async function pixelsAt(level, x0, y0, w, h) {
  return page.evaluate(async ([level, x0, y0, w, h]) => {
    const { viewer } = window.demo;
    viewer.setPixelView(level, x0, y0);
    const stats = await viewer.idle();
    const data = viewer.canvas.getContext("2d").getImageData(0, 0, w, h).data;
    return { level: stats.level, rgba: Array.from(data) };
  }, [level, x0, y0, w, h]);
}

function assertPixelsEqual(rgba, samples, w, h, channels, label) {
  let worst = 0;
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++)
      for (let c = 0; c < 3; c++) {
        const want = samples[(y * w + x) * channels + (channels === 3 ? c : 0)];
        worst = Math.max(worst, Math.abs(rgba[(y * w + x) * 4 + c] - want));
      }
  assert.equal(worst, 0, `${label}: canvas pixels differ from decode() by up to ${worst}`);
}

const storeJson = (...p) => JSON.parse(fs.readFileSync(path.join(STORES, ...p), "utf8"));

test("the page loads and renders the first sample (OME-Zarr, ycbcr 4:2:0 through transpose) with the RFC-16 report", async () => {
  assert.equal(await page.evaluate(() => document.body.dataset.state), "ready");
  assert.equal(await page.inputValue("#url"), "/stores/ihc-ycbcr.zarr");
  assert.match(await page.textContent("#status-chunks"), /^(\d+)\/\1$/);
  assert.match(await page.textContent("#dataset"), /OME-Zarr multiscale image, RGB/);
  await page.waitForFunction(() => document.querySelector("#rfc16").dataset.ok !== undefined);
  assert.equal(await page.getAttribute("#rfc16", "data-ok"), "true");
  assert.match(await page.textContent("#rfc16"), /conforms/);
  assert.equal(await page.locator("#samples button").count(), 6); // (the last two: the TIFF sample converted, level 0 copied, and read in place)
  assert.equal(await page.evaluate(() => window.demo.codecs.pool.mode), "workers", "chunks decode in the Web Worker pool");
  await shot("loaded");
});

test("canvas pixels of a chunk shown 1:1 equal decode() of that chunk (level 0 of the ycbcr sample)", async () => {
  const { level, rgba } = await pixelsAt(0, 256, 512, 256, 256); // chunk (y 2, x 1)
  assert.equal(level, 0);
  const meta = storeJson("ihc-ycbcr.zarr", "0", "zarr.json");
  const config = meta.codecs[1].configuration;
  const bytes = fs.readFileSync(path.join(STORES, "ihc-ycbcr.zarr", "0", "c", "0", "2", "1"));
  assertPixelsEqual(rgba, decode(config, bytes, [256, 256, 3]), 256, 256, 3, "ihc-ycbcr level 0 chunk (2, 1)");
  await shot("pixel-check");
});

test("the sharded rgb sample: canvas pixels equal decode() of the inner chunk read from its shard", async () => {
  await page.evaluate(() => window.demo.open("/stores/ihc-rgb.zarr"));
  const { rgba } = await pixelsAt(1, 512, 256, 256, 256); // level 1, inner chunk (y 1, x 2) in shard (0, 0)
  const meta = storeJson("ihc-rgb.zarr", "1", "zarr.json");
  const sharding = meta.codecs[0].configuration;
  const shard = fs.readFileSync(path.join(STORES, "ihc-rgb.zarr", "1", "c", "0", "0", "0"));
  const per = meta.chunk_grid.configuration.chunk_shape[2] / sharding.chunk_shape[2];
  const indexStart = shard.length - 4 - 16 * per * per;
  const entry = indexStart + 16 * (1 * per + 2);
  const offset = Number(shard.readBigUInt64LE(entry));
  const length = Number(shard.readBigUInt64LE(entry + 8));
  const samples = decode(sharding.codecs[1].configuration, shard.subarray(offset, offset + length), [256, 256, 3]);
  assertPixelsEqual(rgba, samples, 256, 256, 3, "ihc-rgb level 1 inner chunk (1, 2)");
});

test("a TIFF read in place: the demo opens tifffile's reference JSON by URL; an Aperio-style slide's pixels match tifffile's decode", async () => {
  // TIFFs and their references written by libvips/tifffile (tests/python/write_tiff_references.py),
  // the references pointing at the TIFFs by a root-relative URL on this server.
  const dir = path.join(FIXTURES, "tiff");
  const py = spawnSync(PYTHON, [path.join(ROOT, "tests/python/write_tiff_references.py"), dir, "/stores/_e2e/tiff"], { encoding: "utf8", timeout: 300000 });
  assert.equal(py.status, 0, py.stderr);
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, "manifest.json"), "utf8"));
  for (const name of ["aperio", "vips_q85"]) {
    const tiff = manifest.tiffs.find((t) => t.name === name);
    const ds = await page.evaluate((url) => window.demo.open(url).then((d) => ({ kind: d.kind, levels: d.levels.length, rgb: d.axes.rgb })), `/stores/_e2e/tiff/${tiff.refs}`);
    assert.deepEqual(ds, { kind: "array", levels: 1, rgb: true }, name);
    const { rgba } = await pixelsAt(0, 0, 0, 256, 256);
    const truth = fs.readFileSync(path.join(dir, tiff.truth));
    let worst = 0;
    for (let y = 0; y < 256; y++)
      for (let x = 0; x < 256; x++)
        for (let c = 0; c < 3; c++) worst = Math.max(worst, Math.abs(rgba[(y * 256 + x) * 4 + c] - truth[(y * tiff.shape[1] + x) * 3 + c]));
    assert.ok(worst <= 4, `${name}: canvas pixels differ from tifffile's decode by up to ${worst}`);
  }
  assert.match(await page.textContent("#dataset"), /a TIFF read in place \(Zarr v2 references\), RGB/);
  await shot("tiff-in-place");
});

test("grayscale sample and the plain (y, x, c) array render; pixels match decode()", async () => {
  await page.evaluate(() => window.demo.open("/stores/cell.zarr"));
  const gray = await pixelsAt(0, 0, 256, 256, 256);
  const bytes = fs.readFileSync(path.join(STORES, "cell.zarr", "0", "c", "1", "0"));
  assertPixelsEqual(gray.rgba, decode(storeJson("cell.zarr", "0", "zarr.json").codecs[0].configuration, bytes, [256, 256]), 256, 256, 1, "cell chunk (1, 0)");
  await shot("cell");
  const ds = await page.evaluate(async () => {
    const ds = await window.demo.open("/stores/ihc-yxc.zarr/0");
    return { kind: ds.kind, axes: ds.axes };
  });
  assert.equal(ds.kind, "array");
  assert.deepEqual([ds.axes.y, ds.axes.x, ds.axes.c], [0, 1, 2]);
  const yxc = await pixelsAt(0, 0, 0, 256, 256);
  const meta = storeJson("ihc-yxc.zarr", "0", "zarr.json");
  const samples = decode(meta.codecs[0].configuration, fs.readFileSync(path.join(STORES, "ihc-yxc.zarr", "0", "c", "0", "0", "0")), [256, 256, 3]);
  assertPixelsEqual(yxc.rgba, samples, 256, 256, 3, "ihc-yxc chunk (0, 0, 0)");
});

test("pan and zoom pick another pyramid level and fetch only the visible chunks", async () => {
  await page.evaluate(() => window.demo.open("/stores/ihc-ycbcr.zarr"));
  const levelOf = () => page.evaluate(() => window.demo.viewer.currentLevel());
  const fitLevel = await levelOf();
  assert.equal(fitLevel, 1, "fitting 2048² into the canvas shows level 1");
  requested.length = 0;
  // Wheel-zoom in over the canvas until level 0 is chosen.
  const box = await page.locator("#canvas").boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  for (let i = 0; i < 8 && (await levelOf()) !== 0; i++) await page.mouse.wheel(0, -400);
  assert.equal(await levelOf(), 0);
  await page.evaluate(() => window.demo.viewer.idle());
  assert.ok(requested.some((p) => p.startsWith("/stores/ihc-ycbcr.zarr/0/c/")), "level-0 chunks fetched");
  // Jump to the bottom-right corner at 1:1: exactly the visible level-0 chunks not yet loaded are fetched.
  requested.length = 0;
  const { visibleKeys, loadedBefore } = await page.evaluate(async () => {
    const { viewer } = window.demo;
    const loadedBefore = [...viewer.cache.keys()];
    viewer.setPixelView(0, 1500, 1600);
    await viewer.idle();
    const L = viewer.dataset.levels[0];
    const r = viewer.visibleRegion(0);
    const keys = [];
    for (let cy = Math.floor(r.y0 / L.chunkHeight); cy < Math.ceil(r.y1 / L.chunkHeight); cy++)
      for (let cx = Math.floor(r.x0 / L.chunkWidth); cx < Math.ceil(r.x1 / L.chunkWidth); cx++) keys.push(`0/${cy}/${cx}`);
    return { visibleKeys: keys, loadedBefore };
  });
  const fetched = requested.filter((p) => p.startsWith("/stores/ihc-ycbcr.zarr/0/c/")).map((p) => p.replace(/^.*\/0\/c\/0\/(\d+)\/(\d+)$/, "0/$1/$2"));
  const expectedFetch = visibleKeys.filter((k) => !loadedBefore.includes(k));
  assert.ok(visibleKeys.length < 64, `only part of level 0's 64 chunks is visible (${visibleKeys.length})`);
  assert.deepEqual([...fetched].sort(), [...expectedFetch].sort(), "fetched exactly the visible chunks that were not loaded");
  // Drag to pan: new chunks come in, the level stays.
  requested.length = 0;
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width / 2 + 300, box.y + box.height / 2 + 200, { steps: 5 });
  await page.mouse.up();
  await page.evaluate(() => window.demo.viewer.idle());
  assert.ok(requested.some((p) => p.startsWith("/stores/ihc-ycbcr.zarr/0/c/")), "panning fetched more level-0 chunks");
  await shot("zoomed");
  // Zooming out far shows the coarsest level.
  await page.click("#zoom-out");
  await page.click("#zoom-out");
  await page.click("#zoom-out");
  await page.click("#zoom-out");
  assert.equal(await levelOf(), 3);
  await page.evaluate(() => window.demo.viewer.idle());
  assert.match(await page.textContent("#status-level"), /^3$/);
});

test("hovering a chunk shows its key, encoded bytes and decode time", async () => {
  await page.click("#zoom-fit");
  await page.evaluate(() => window.demo.viewer.idle());
  const box = await page.locator("#canvas").boundingBox();
  await page.mouse.move(box.x + box.width / 2 + 3, box.y + box.height / 2 + 3);
  await page.mouse.move(box.x + box.width / 2 + 5, box.y + box.height / 2 + 5);
  const tip = page.locator("#tooltip");
  await tip.waitFor({ state: "visible" });
  const text = await tip.textContent();
  assert.match(text, /c\/0\/\d+\/\d+/);
  assert.match(text, /[\d.]+ kB encoded/);
  assert.match(text, /decode [\d.]+ ms/);
  assert.match(await page.textContent("#chunk-info"), /c\/0\//);
});

test("a level-0 chunk of the TIFF sample says it was copied unchanged from the source tile; a level-1 chunk does not", async () => {
  await page.evaluate(async () => {
    await window.demo.open("/stores/ihc-tiff.zarr");
    window.demo.viewer.setPixelView(0, 256, 256);
    await window.demo.viewer.idle();
  });
  assert.equal(await page.evaluate(() => window.demo.viewer.currentLevel()), 0);
  const box = await page.locator("#canvas").boundingBox();
  const tip = page.locator("#tooltip");
  await page.mouse.move(box.x + box.width / 2 + 3, box.y + box.height / 2 + 3);
  await page.mouse.move(box.x + box.width / 2 + 5, box.y + box.height / 2 + 5);
  await tip.waitFor({ state: "visible" });
  await page.waitForFunction(() => /encoded/.test(document.querySelector("#tooltip").textContent));
  assert.match(await tip.textContent(), /copied unchanged from ihc-pyramid\.tif's JPEG tile/);
  await page.evaluate(async () => {
    window.demo.viewer.setPixelView(1, 0, 0);
    await window.demo.viewer.idle();
  });
  assert.equal(await page.evaluate(() => window.demo.viewer.currentLevel()), 1);
  await page.mouse.move(box.x + 20, box.y + 20);
  await page.mouse.move(box.x + 22, box.y + 22);
  await page.waitForFunction(() => /level 1 · chunk/.test(document.querySelector("#tooltip").textContent) && /encoded/.test(document.querySelector("#tooltip").textContent));
  assert.doesNotMatch(await tip.textContent(), /copied/);
  // back to the state the tests below start from
  await page.evaluate(() => window.demo.open("/stores/ihc-ycbcr.zarr"));
  await page.click("#zoom-fit");
  await page.evaluate(() => window.demo.viewer.idle());
});

test("the TIFF sample read in place (tifffile's references, written by npm start) shows the same pixels as its converted copy, at every level tifffile lists", async () => {
  const pixels = async (url, level) => {
    await page.evaluate((u) => window.demo.open(u), url);
    return (await pixelsAt(level, 0, 0, 256, 256)).rgba;
  };
  const ds = await page.evaluate(() => window.demo.open("/stores/ihc-pyramid.refs.json").then((d) => ({ kind: d.kind, levels: d.levels.length })));
  assert.deepEqual(ds, { kind: "multiscale", levels: 3 });
  assert.match(await page.textContent("#dataset"), /a TIFF read in place/);
  // level 0: the converted chunks are the TIFF's tiles, so both decode to the same samples
  const inPlace = await pixels("/stores/ihc-pyramid.refs.json", 0);
  const converted = await pixels("/stores/ihc-tiff.zarr", 0);
  let worst = 0;
  for (let i = 0; i < inPlace.length; i++) worst = Math.max(worst, Math.abs(inPlace[i] - converted[i]));
  assert.equal(worst, 0, `level 0 in place against the converted copy: up to ${worst}`);
  await page.evaluate(() => window.demo.open("/stores/ihc-ycbcr.zarr"));
  await page.click("#zoom-fit");
  await page.evaluate(() => window.demo.viewer.idle());
});

test("the inspector's figures follow quality, colour space, subsampling, trellis and tables; the rate–distortion chart has a curve per setting", async () => {
  await page.click("#inspect");
  await page.waitForFunction(() => document.querySelector("#fig-bytes").dataset.value !== undefined);
  await page.waitForFunction(() => document.querySelectorAll("#insp-rd polyline").length >= 3, null, { timeout: 20000 });
  const figures = () => page.evaluate(() => ({ ...window.demo.inspector.figures }));
  const set = async (selector, value) => {
    const before = await page.evaluate(() => window.demo.inspector.updates);
    await page.$eval(selector, (el, v) => { el.value = v; el.dispatchEvent(new Event("input")); }, String(value));
    await page.waitForFunction((b) => window.demo.inspector.updates > b, before);
    return figures();
  };
  const q90 = await set("#insp-quality", 90);
  const q30 = await set("#insp-quality", 30);
  assert.ok(q30.bytes < q90.bytes, `quality 30 is smaller (${q30.bytes} < ${q90.bytes})`);
  assert.ok(q30.psnr < q90.psnr, `quality 30 is worse (${q30.psnr} < ${q90.psnr})`);
  assert.ok(q30.ratio > q90.ratio);
  assert.match(await page.textContent("#fig-ratio"), /^[\d.]+ : 1$/);
  await shot("inspector-q30");
  await set("#insp-quality", 90);
  const s444 = await set("#insp-subsampling", "4:4:4");
  assert.ok(s444.bytes > q90.bytes, `4:4:4 keeps more chroma (${s444.bytes} > ${q90.bytes})`);
  const rgb = await set("#insp-color", "rgb");
  assert.equal(rgb.config.encoded_color_space, "rgb");
  assert.equal(await page.isDisabled("#insp-subsampling"), true, "subsampling applies only to ycbcr");
  assert.notEqual(rgb.bytes, s444.bytes);
  const gray = await set("#insp-color", "grayscale");
  assert.ok(gray.bytes < rgb.bytes);
  assert.match(await page.textContent("#fig-psnr"), /vs luma/);
  // trellis quantisation (an encode option): fewer bytes, and its own dashed curve beside the plain one
  const toggleTrellis = async () => {
    const before = await page.evaluate(() => window.demo.inspector.updates);
    await page.click("#insp-trellis");
    await page.waitForFunction((b) => window.demo.inspector.updates > b, before);
    return figures();
  };
  const trellis = await toggleTrellis();
  assert.equal(trellis.options.trellis, true);
  assert.equal(trellis.config.quality, gray.config.quality);
  assert.ok(trellis.bytes < gray.bytes, `trellis writes fewer bytes (${trellis.bytes} < ${gray.bytes})`);
  await page.waitForFunction(() => document.querySelectorAll("#insp-rd polyline[stroke-dasharray]").length === 1, null, { timeout: 20000 });
  assert.match(await page.textContent("#insp-rd"), /grayscale trellis \(selected\)/);
  const plain = await toggleTrellis();
  assert.equal(plain.options.trellis, false);
  assert.equal(plain.bytes, gray.bytes, "unchecked: the plain encoding again");
  // other quantisation tables (encode option quantTable): other bytes, and a dotted curve
  assert.deepEqual(await page.$$eval("#insp-table option", (os) => os.map((o) => o.value)), ["annex-k", "flat", "ms-ssim", "imagemagick", "psnr-hvs", "klein", "watson", "ahumada", "peterson"]);
  assert.equal(plain.options.quantTable, "annex-k");
  const msssim = await set("#insp-table", "ms-ssim");
  assert.equal(msssim.options.quantTable, "ms-ssim");
  assert.notEqual(msssim.bytes, gray.bytes);
  await page.waitForFunction(() => document.querySelectorAll('#insp-rd polyline[stroke-dasharray="1.5 2.5"]').length === 1, null, { timeout: 20000 });
  assert.match(await page.textContent("#insp-rd"), /grayscale ms-ssim \(selected\)/);
  const back = await set("#insp-table", "annex-k");
  assert.equal(back.bytes, gray.bytes, "annex-k: the plain encoding again");
  await page.waitForSelector("#rd-current");
  await shot("inspector");
});

test("a converted z-stack of two channels: a z slider picks the plane, and the channels blend by their omero colours and windows", async () => {
  // c × z × y × x = 2 × 3 × 96 × 128, written by tifffile, converted with chunks of 2 z planes
  // and a level 1 that halves z too (2 planes of 48 × 64)
  const [Z, H, W] = [3, 96, 128];
  const tif = path.join(FIXTURES, "czyx.ome.tif");
  const written = spawnSync(PYTHON, ["-c", `
import sys, numpy as np, tifffile
y, x = np.mgrid[0:${H}, 0:${W}]
data = np.array([[(np.sin(x / (6 + 3 * c) + z) + np.cos(y / 9 - z)) * 50 + 100 + 40 * c for z in range(${Z})] for c in range(2)])
tifffile.imwrite(sys.argv[1], data.clip(0, 255).astype(np.uint8), ome=True, photometric="minisblack",
                 metadata={"axes": "CZYX", "Channel": {"Name": ["nuclei", "actin"]}})
`, tif], { encoding: "utf8" });
  assert.equal(written.status, 0, written.stderr);
  const { convert } = await import("../../dist/convert.js");
  const out = path.join(FIXTURES, "czyx.zarr");
  await convert(tif, out, { chunkDepth: 2, quality: 90, downsampleZ: true, levels: 2 });
  const group = storeJson("_e2e", "czyx.zarr", "zarr.json");
  const channels = group.attributes.ome.omero.channels;
  await page.evaluate(() => window.demo.open("/stores/_e2e/czyx.zarr"));
  await page.evaluate(() => window.demo.viewer.idle());
  const slider = page.locator('#planes input[data-axis="1"]');
  assert.equal(await slider.getAttribute("max"), String(Z - 1));
  assert.equal(await slider.inputValue(), "1", "the middle z plane first");
  assert.deepEqual(await page.locator("#channels .channel").allTextContents().then((t) => t.map((s) => s.trim().split(/\s+/)[0])), ["nuclei", "actin"]);
  // plane 2 is the first plane of z-chunk 1 of each channel
  await slider.evaluate((input) => {
    input.value = "2";
    input.dispatchEvent(new Event("input"));
  });
  assert.equal(await page.evaluate(() => window.demo.dataset.axes.fixed[1]), 2);
  const meta = storeJson("_e2e", "czyx.zarr", "0", "zarr.json");
  const planes = [0, 1].map((c) => decode(meta.codecs.at(-1).configuration, fs.readFileSync(path.join(out, "0", "c", String(c), "1", "0", "0")), [2 * H, W]));
  const expected = (only, samples = planes, n = H * W) => {
    const rgba = new Uint8Array(n * 4);
    for (let i = 0; i < n; i++) {
      const sum = [0, 0, 0];
      for (const c of only) {
        const { start, end } = channels[c].window;
        const v = Math.min(Math.max((samples[c][i] - start) / (end - start), 0), 1);
        const color = [0, 2, 4].map((k) => parseInt(channels[c].color.slice(k, k + 2), 16) / 255);
        for (let k = 0; k < 3; k++) sum[k] += v * color[k];
      }
      for (let k = 0; k < 3; k++) rgba[4 * i + k] = Math.min(255, Math.round(sum[k] * 255));
    }
    return rgba;
  };
  const worst = (got, want, n = H * W) => {
    let d = 0;
    for (let i = 0; i < n; i++) for (let k = 0; k < 3; k++) d = Math.max(d, Math.abs(got[4 * i + k] - want[4 * i + k]));
    return d;
  };
  const shown = await pixelsAt(0, 0, 0, W, H);
  assert.ok(worst(shown.rgba, expected([0, 1])) <= 1, `composite of z = 2 differs from decode() by ${worst(shown.rgba, expected([0, 1]))}`);
  await shot("stack-composite");
  // the second channel off: the first alone
  await page.locator('#channels input[data-toggle="1"]').uncheck();
  const alone = await pixelsAt(0, 0, 0, W, H);
  assert.ok(worst(alone.rgba, expected([0])) <= 1, `channel 0 alone differs by ${worst(alone.rgba, expected([0]))}`);
  // level 1 halves z: level 0's plane 2 is in its plane 1 (scale 2), the second of its one
  // z-chunk of 2 planes, rows 48–95 of that chunk's JPEG
  const meta1 = storeJson("_e2e", "czyx.zarr", "1", "zarr.json");
  assert.deepEqual(meta1.shape, [2, 2, H / 2, W / 2]);
  const planes1 = [0, 1].map((c) => decode(meta1.codecs.at(-1).configuration, fs.readFileSync(path.join(out, "1", "c", String(c), "0", "0", "0")), [H, W / 2])
    .subarray((H / 2) * (W / 2)));
  const level1 = await pixelsAt(1, 0, 0, W / 2, H / 2);
  assert.equal(level1.level, 1);
  const n1 = (H / 2) * (W / 2);
  assert.ok(worst(level1.rgba, expected([0], planes1, n1), n1) <= 1, `level 1 at z = 2 differs by ${worst(level1.rgba, expected([0], planes1, n1), n1)}`);
});

test("clear messages: a URL that fails, a codec the page lacks (named), a non-uint8 array", async () => {
  const message = async (url) => {
    await page.evaluate((u) => window.demo.open(u), url);
    return { kind: await page.getAttribute("#message", "data-kind"), text: await page.textContent("#message"), hidden: await page.isHidden("#message") };
  };
  const missing = await message("/stores/nope.zarr");
  assert.equal(missing.hidden, false);
  assert.equal(missing.kind, "fetch");
  assert.match(missing.text, /Cannot open this URL.*No zarr\.json at .*nope\.zarr\/zarr\.json \(HTTP 404\)/);
  const codec = await message("/stores/_e2e/zfp.zarr");
  assert.equal(codec.kind, "codec");
  assert.match(codec.text, /Missing codec.*"zfp"/);
  // zfp is on the RFC-16 allowlist (MAY), and the panel says this reader lacks it.
  await page.waitForFunction(() => /zfp\s+MAY\s+NOT readable/.test(document.querySelector("#rfc16").textContent));
  assert.equal(await page.textContent("#fig-bytes"), "–", "the inspector forgets the previous dataset");
  assert.equal(await page.evaluate(() => window.demo.dataset), null);
  await shot("error-codec");
  const dtype = await message("/stores/_e2e/float.zarr");
  assert.equal(dtype.kind, "dtype");
  assert.match(dtype.text, /"float32".*uint8/);
  const closed = await new Promise((resolve) => {
    const probe = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
  const unreachable = await message(`http://127.0.0.1:${closed}/x.zarr`);
  assert.equal(unreachable.kind, "fetch");
  assert.match(unreachable.text, /Could not fetch/);
  // Opening a good dataset again clears the message.
  await page.evaluate(() => window.demo.open("/stores/ihc-ycbcr.zarr"));
  assert.equal(await page.isHidden("#message"), true);
});

test("the inspector's quality defaults to 95 (the spec's default for builders) for a dataset stored without jpeg", async () => {
  assert.equal(await page.getAttribute("#insp-quality", "value"), "95", "the page's initial value");
  await page.evaluate(() => window.demo.open("/stores/_e2e/raw.zarr"));
  assert.equal(await page.isHidden("#message"), true);
  assert.match(await page.textContent("#insp-stored"), /stored without the jpeg codec/);
  assert.equal(await page.inputValue("#insp-quality"), "95");
  // a jpeg dataset shows its stored quality instead
  await page.evaluate(() => window.demo.open("/stores/ihc-ycbcr.zarr"));
  assert.equal(await page.inputValue("#insp-quality"), "90");
});

test("the server falls back to a free port when the wanted one is taken, and serves stores with byte ranges", async () => {
  const taken = new URL(server.url).port;
  const other = await startDemoServer({ port: Number(taken) });
  try {
    assert.notEqual(String(other.port), taken);
    const response = await fetch(`${other.url}stores/ihc-rgb.zarr/0/c/0/0/0`, { headers: { Range: "bytes=-20" } });
    assert.equal(response.status, 206);
    assert.equal((await response.arrayBuffer()).byteLength, 20);
    assert.equal((await fetch(`${other.url}stores/../package.json`)).status, 404);
  } finally {
    await other.close();
  }
});

test("no console errors, except the browser's log of expected 404s (absent optional keys and the deliberately missing URLs)", async () => {
  const expected = (p) => /\/labels\/zarr\.json$/.test(p) || p.startsWith("/stores/nope.zarr/") || p.startsWith("/stores/_e2e/");
  const unexpected404 = failedResponses.filter((p) => !expected(p));
  assert.deepEqual(unexpected404, [], "unexpected failed requests");
  const errors = page.consoleErrors.filter((m) => !/^Failed to load resource: the server responded with a status of 404/.test(m) && !/ERR_CONNECTION_REFUSED/.test(m));
  assert.deepEqual(errors, []);
  const networkLogs = page.consoleErrors.length - errors.length;
  assert.ok(networkLogs <= failedResponses.length + 1, `${networkLogs} network log lines for ${failedResponses.length} failed responses`);
});
