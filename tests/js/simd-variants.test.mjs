// The two builds of each module: wasm SIMD (used wherever the engine supports it) and the
// scalar fallback. Each scenario runs in its own Node process, since the loader keeps one
// instance per module for the life of the process.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const dist = new URL("../../dist/index.js", import.meta.url).href;
const advanced = new URL("../../dist/advanced.js", import.meta.url).href;
const ihcPath = fileURLToPath(new URL("../../samples/ihc.png", import.meta.url));

/** Runs an ES module snippet in a fresh Node process; returns its JSON result. */
function inFreshProcess(body, { noSimd = false } = {}) {
  const prelude = noSimd
    ? // An engine without SIMD: the loader's probe (and anything with SIMD) fails to validate.
      `const validate = WebAssembly.validate;
       WebAssembly.validate = (bytes) => (new Uint8Array(bytes.buffer ?? bytes).includes(253) && bytes.length < 64 ? false : validate(bytes));\n`
    : "";
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", `${prelude}${body}`], { encoding: "utf8" });
  return JSON.parse(out.trim().split("\n").at(-1));
}

// Snippet for the child processes: `crop(h, w)`, the RGB samples of an h×w crop of ihc.png
// from row 37, column 11 (repeating past its edges).
const cropSnippet = `
import { PNG } from "pngjs";
import { readFileSync } from "node:fs";
const png = PNG.sync.read(readFileSync(${JSON.stringify(ihcPath)}));
const crop = (h, w) => {
  const rgb = new Uint8Array(h * w * 3);
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) for (let c = 0; c < 3; c++)
    rgb[(y * w + x) * 3 + c] = png.data[((y + 37) % png.height * png.width + (x + 11) % png.width) * 4 + c];
  return rgb;
};
`;

// Encodes and decodes crops of ihc.png in every colour mode and sampling scheme; prints
// a digest of every output so two processes can be compared.
const roundTrips = `
import * as root from ${JSON.stringify(dist)}; import * as more from ${JSON.stringify(advanced)}; const z = { ...root, ...more };
import { createHash } from "node:crypto";
${cropSnippet}
await (process.env.VARIANT_INIT === "auto" ? z.init() : z.init({ simd: process.env.VARIANT_INIT === "simd" }));
const digests = [];
for (const [h, w] of [[1, 1], [7, 13], [61, 47], [128, 96], [512, 512]]) {
  const rgb = crop(h, w);
  const gray = rgb.filter((_, i) => i % 3 === 1);
  const cases = [
    [{ quality: 90, encoded_color_space: "grayscale" }, gray, [h, w]],
    [{ quality: 75, encoded_color_space: "rgb" }, rgb, [h, w, 3]],
  ];
  for (const s of [[1, 1], [2, 1], [1, 2], [2, 2], [4, 1], [1, 4], [4, 2], [2, 4]]) {
    cases.push([{ quality: 90, encoded_color_space: "ycbcr", decoded_color_space: "rgb", subsampling: [s, [1, 1], [1, 1]] }, rgb, [h, w, 3]]);
  }
  cases.push([{ quality: 50, encoded_color_space: "ycbcr", decoded_color_space: "ycbcr", subsampling: [[2, 2], [1, 1], [1, 1]] }, rgb, [h, w, 3]]);
  for (const [config, data, shape] of cases) {
    const copy = data.slice();
    const stream = z.encode(config, data, shape);
    const pixels = z.decode(config, stream, shape);
    if (!data.every((v, i) => v === copy[i])) throw new Error("input modified");
    digests.push(createHash("sha256").update(stream).update(pixels).digest("hex").slice(0, 16));
    // trellis quantisation: blocks from the SIMD kernels, the same scalar optimisation
    const trellis = z.encode(config, data, shape, { trellis: true });
    digests.push(createHash("sha256").update(trellis).update(z.decode(config, trellis, shape)).digest("hex").slice(0, 16));
  }
}
console.log(JSON.stringify({ simd: z.usesSimd(), supported: z.simdSupported(), digests }));
`;

function runVariant(variant, options) {
  const prev = process.env.VARIANT_INIT;
  process.env.VARIANT_INIT = variant;
  try {
    return inFreshProcess(roundTrips, options);
  } finally {
    if (prev === undefined) delete process.env.VARIANT_INIT;
    else process.env.VARIANT_INIT = prev;
  }
}

test("Node has wasm SIMD, and init() picks the SIMD module by default", () => {
  const auto = runVariant("auto");
  assert.equal(auto.supported, true);
  assert.equal(auto.simd, true);
});

test("the SIMD and scalar modules write identical streams and decode identical pixels", () => {
  const simd = runVariant("simd");
  const scalar = runVariant("scalar");
  assert.equal(simd.simd, true);
  assert.equal(scalar.simd, false);
  assert.equal(simd.digests.length, scalar.digests.length);
  assert.ok(simd.digests.length >= 50);
  const differing = simd.digests.flatMap((d, i) => (d === scalar.digests[i] ? [] : [i]));
  assert.deepEqual(differing, [], "cases whose stream or pixels differ between the SIMD and scalar modules");
});

test("the SIMD and scalar decode-only modules decode every stream to the whole codec's pixels", () => {
  // The decode-only modules have their own IDCT kernel (16-bit lanes in SIMD builds), so
  // their pixels are compared with the whole codec's on streams it writes: every colour
  // mode and sampling scheme, qualities 50 to 100 (at 100 some blocks have coefficients
  // beyond the 16-bit path, which then takes the 32-bit kernel).
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "zarr-jpeg-readers-"));
  const file = path.join(dir, "streams.json");
  try {
    const write = `
      import * as root from ${JSON.stringify(dist)}; import * as more from ${JSON.stringify(advanced)}; const z = { ...root, ...more };
      import { writeFileSync } from "node:fs";
      import { createHash } from "node:crypto";
      ${cropSnippet}
      await z.init({ simd: true });
      const out = [];
      for (const [h, w] of [[7, 13], [61, 47], [256, 200]]) {
        const rgb = crop(h, w);
        for (const quality of [50, 90, 100]) {
          const cases = [
            [{ quality, encoded_color_space: "grayscale" }, rgb.filter((_, i) => i % 3 === 1), [h, w]],
            [{ quality, encoded_color_space: "rgb" }, rgb, [h, w, 3]],
          ];
          for (const s of [[1, 1], [2, 1], [1, 2], [2, 2], [4, 1], [4, 2]])
            cases.push([{ quality, encoded_color_space: "ycbcr", subsampling: [s, [1, 1], [1, 1]] }, rgb, [h, w, 3]]);
          for (const [config, data, shape] of cases) {
            const stream = z.encode(config, data, shape);
            const digest = createHash("sha256").update(z.decode(config, stream, shape)).digest("hex");
            out.push({ config, shape, stream: Buffer.from(stream).toString("base64"), digest });
          }
        }
      }
      writeFileSync(${JSON.stringify(file)}, JSON.stringify(out));
      console.log(JSON.stringify({ cases: out.length }));`;
    const read = (simd) => `
      import * as root from ${JSON.stringify(dist)}; import * as more from ${JSON.stringify(advanced)}; const z = { ...root, ...more };
      import { readFileSync } from "node:fs";
      import { createHash } from "node:crypto";
      await z.initDecoder({ simd: ${simd} });
      const cases = JSON.parse(readFileSync(${JSON.stringify(file)}, "utf8"));
      const digests = cases.map((c) => createHash("sha256").update(z.decode(c.config, Buffer.from(c.stream, "base64"), c.shape)).digest("hex"));
      console.log(JSON.stringify({ simd: z.usesSimd(), digests }));`;
    const { cases } = inFreshProcess(write);
    assert.ok(cases >= 72);
    const expected = JSON.parse(fs.readFileSync(file, "utf8")).map((c) => c.digest);
    for (const simd of [true, false]) {
      const reader = inFreshProcess(read(simd));
      assert.equal(reader.simd, simd);
      const differing = reader.digests.flatMap((d, i) => (d === expected[i] ? [] : [i]));
      assert.deepEqual(differing, [], `cases the ${simd ? "SIMD" : "scalar"} decode-only module decodes differently`);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("the SIMD and scalar full decoders decode progressive streams identically; initFullDecoder() follows the loaded variant", () => {
  const body = (simd) => `
    import * as root from ${JSON.stringify(dist)}; import * as more from ${JSON.stringify(advanced)}; const z = { ...root, ...more };
    import { fullDecoderUsesSimd } from ${JSON.stringify(new URL("../../dist/loader.js", import.meta.url).href)};
    import { PROGRESSIVE } from ${JSON.stringify(new URL("./helpers/progressive.mjs", import.meta.url).href)};
    import { createHash } from "node:crypto";
    await z.initDecoder({ simd: ${simd} });
    await z.initFullDecoder();
    const digests = PROGRESSIVE.map((f) => createHash("sha256").update(z.decode(f.config, f.bytes, f.shape)).digest("hex"));
    console.log(JSON.stringify({ full: fullDecoderUsesSimd(), digests }));`;
  const simd = inFreshProcess(body(true));
  const scalar = inFreshProcess(body(false));
  assert.equal(simd.full, true);
  assert.equal(scalar.full, false);
  assert.equal(simd.digests.length, 3);
  assert.deepEqual(simd.digests, scalar.digests);
});

test("an engine without SIMD gets the scalar module automatically, and simd: true is refused there", () => {
  const fallback = runVariant("auto", { noSimd: true });
  assert.equal(fallback.supported, false);
  assert.equal(fallback.simd, false);
  assert.deepEqual(fallback.digests, runVariant("scalar").digests);
  const refused = inFreshProcess(
    `import * as root from ${JSON.stringify(dist)}; import * as more from ${JSON.stringify(advanced)}; const z = { ...root, ...more };
     let message = null;
     try { await z.initDecoder({ simd: true }); } catch (e) { message = e.message; }
     console.log(JSON.stringify({ message }));`,
    { noSimd: true },
  );
  assert.match(refused.message ?? "", /does not support WebAssembly SIMD/);
});

test("the simd option must be a boolean", () => {
  const r = inFreshProcess(
    `import * as root from ${JSON.stringify(dist)}; import * as more from ${JSON.stringify(advanced)}; const z = { ...root, ...more };
     let error = null;
     try { await z.init({ simd: "yes" }); } catch (e) { error = e.name + ": " + e.message; }
     await z.init();
     console.log(JSON.stringify({ error, simd: z.usesSimd() }));`,
  );
  assert.match(r.error, /TypeError: .*simd/);
  assert.equal(r.simd, true);
});

// Before: a bad `simd` option threw synchronously from functions that return a Promise
// (`init({ simd: "yes" }).catch(...)` did not catch it), init(null) threw a destructuring
// TypeError, and a handed-over module that instantiated but failed to start (one without
// the codec's exports) stayed in the glue: every later init() resolved at once with it
// "ready", and every encode() failed with "wasm.encode is not a function" for good.
test("init options: failures reject, never throw; a module that fails to start leaves nothing behind", () => {
  const r = inFreshProcess(
    `import * as root from ${JSON.stringify(dist)}; import * as more from ${JSON.stringify(advanced)}; const z = { ...root, ...more };
     const results = {};
     for (const [name, call] of [["init", () => z.init({ simd: "yes" })], ["initDecoder", () => z.initDecoder({ simd: 1 })], ["initFullDecoder", () => z.initFullDecoder({ simd: "no" })]]) {
       try { const p = call(); results[name] = "returned " + (p instanceof Promise); await p; } catch (e) { results[name] += " then " + e.name; }
     }
     // a module with no imports and no exports instantiates, then fails to start
     const empty = new WebAssembly.Module(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]));
     try { await z.init({ module: empty }); results.empty = "resolved"; } catch (e) { results.empty = "rejected"; }
     results.readyAfterFailure = z.isReady();
     await z.init(null);
     const config = { quality: 90, encoded_color_space: "grayscale" };
     const stream = z.encode(config, new Uint8Array(64).fill(9), [8, 8]);
     results.decoded = Array.from(z.decode(config, stream, [8, 8])).every((v) => Math.abs(v - 9) <= 1);
     console.log(JSON.stringify(results));`,
  );
  assert.deepEqual(r, {
    init: "returned true then TypeError",
    initDecoder: "returned true then TypeError",
    initFullDecoder: "returned true then TypeError",
    empty: "rejected",
    readyAfterFailure: false,
    decoded: true,
  });
});

test("a pool started after initDecoder({ simd: false }) decodes exactly like the calling thread", () => {
  const r = inFreshProcess(
    `import * as root from ${JSON.stringify(dist)}; import * as more from ${JSON.stringify(advanced)}; const z = { ...root, ...more };
     import { CodecPool } from ${JSON.stringify(new URL("../../dist/advanced.js", import.meta.url).href)};
     await z.initDecoder({ simd: false });
     const config = { quality: 90, encoded_color_space: "grayscale" };
     const data = new Uint8Array(64 * 48).map((_, i) => (i * 7) % 256);
     await z.init({ simd: false });
     const stream = z.encode(config, data, [64, 48]);
     const pool = new CodecPool({ size: 1 });
     const pixels = await pool.decode(config, stream, [64, 48]);
     await pool.close();
     const same = Buffer.from(pixels).equals(Buffer.from(z.decode(config, stream, [64, 48])));
     console.log(JSON.stringify({ simd: z.usesSimd(), same }));`,
  );
  assert.deepEqual(r, { simd: false, same: true });
});
