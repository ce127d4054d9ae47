// Browser side of `npm run bench`: bundled by esbuild (bench/run.mjs) into
// bench/results/page.bundle.js and driven through Playwright. Exposes window.bench.
//
// Every candidate is timed on the same inputs: raw C-order samples (RGB or gray) for the
// encoders, and the same JPEG stream (written by our encoder, i.e. what a zarr store holds)
// for the decoders. Pixel-format adaptation that a candidate needs (RGB -> RGBA input for
// jsquash, jpeg-js and canvas) is done once, outside the timed region; outputs are whatever
// each candidate returns natively (RGBA for the browser paths and jsquash), copied out of
// wasm memory where the API hands back a view (cornerstone), as any real caller must.
import * as ours from "zarr-jpeg-under-test"; // bench/run.mjs resolves this to its snapshot of dist/
import * as oursScalar from "zarr-jpeg-scalar-under-test"; // a copy of it, loaded as the scalar fallback
// Another copy, loaded with initDecoder() only: the decode-only module a viewer runs
// (register() loads it). Its SIMD build has a faster IDCT than the whole codec's (the
// writer's payload has no room for it), so "ours" decodes with it.
import * as oursReader from "zarr-jpeg-reader-under-test";
import { usesSimd } from "zarr-jpeg-under-test/advanced";
import { usesSimd as scalarUsesSimd } from "zarr-jpeg-scalar-under-test/advanced";
import { usesSimd as readerUsesSimd } from "zarr-jpeg-reader-under-test/advanced";
import libjpegturbowasm from "@cornerstonejs/codec-libjpeg-turbo-8bit/wasmjs";
import jsqDecode, { init as jsqDecInit } from "@jsquash/jpeg/decode.js";
import jsqEncode, { init as jsqEncInit } from "@jsquash/jpeg/encode.js";
import jpegjs from "jpeg-js";

const CS_WASM = "/node_modules/@cornerstonejs/codec-libjpeg-turbo-8bit/dist/libjpegturbowasm.wasm";
const JSQ_DEC_WASM = "/node_modules/@jsquash/jpeg/codec/dec/mozjpeg_dec.wasm";
const JSQ_ENC_WASM = "/node_modules/@jsquash/jpeg/codec/enc/mozjpeg_enc.wasm";

const TJSAMP = { "420": 2, "444": 0, gray: 3 };

// jpeg-js's encoder returns `Buffer.from(bytes)`; in a browser that needs a Buffer, as its README
// says. This minimal stand-in (a Uint8Array copy, same cost as Buffer.from) is all it uses.
globalThis.Buffer ??= { from: (a) => Uint8Array.from(a), alloc: (n) => new Uint8Array(n) };

let cs;
let csDecoder;
let csEncoder;

async function compile(url) {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  return WebAssembly.compile(await res.arrayBuffer());
}

async function setup() {
  await ours.init();
  await oursScalar.init({ simd: false });
  await oursReader.initDecoder();
  if (usesSimd() !== true || scalarUsesSimd() !== false || readerUsesSimd() !== true) {
    throw new Error("ours: expected the SIMD modules and, beside them, the scalar one");
  }
  cs = await libjpegturbowasm({ locateFile: () => CS_WASM });
  csDecoder = new cs.JPEGDecoder();
  csEncoder = new cs.JPEGEncoder();
  await jsqDecInit(await compile(JSQ_DEC_WASM));
  await jsqEncInit(await compile(JSQ_ENC_WASM));
  return {
    userAgent: navigator.userAgent,
    imageDecoder: typeof ImageDecoder !== "undefined",
    crossOriginIsolated: globalThis.crossOriginIsolated,
  };
}

function toRGBA(raw, channels, n) {
  const out = new Uint8ClampedArray(n * 4);
  for (let i = 0; i < n; i++) {
    const r = raw[i * channels];
    out[i * 4] = r;
    out[i * 4 + 1] = channels === 3 ? raw[i * 3 + 1] : r;
    out[i * 4 + 2] = channels === 3 ? raw[i * 3 + 2] : r;
    out[i * 4 + 3] = 255;
  }
  return out;
}

async function fetchBytes(url) {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  return new Uint8Array(await res.arrayBuffer());
}

// Mean absolute difference of a candidate's decoded samples against ours (stride-aware),
// a sanity check that every decoder really decoded the stream the same way.
function meanAbsDiff(ref, refChannels, out, outChannels, n) {
  let sum = 0;
  let count = 0;
  const step = Math.max(1, Math.floor(n / 65536));
  for (let i = 0; i < n; i += step) {
    for (let c = 0; c < refChannels; c++) {
      sum += Math.abs(ref[i * refChannels + c] - out[i * outChannels + c]);
      count++;
    }
  }
  return sum / count;
}

// SOF sampling factors and component count of a JPEG stream, to report what an encoder wrote.
function jpegLayout(bytes) {
  for (let i = 2; i + 9 < bytes.length; ) {
    if (bytes[i] !== 0xff) return null;
    const marker = bytes[i + 1];
    const len = (bytes[i + 2] << 8) | bytes[i + 3];
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      const nc = bytes[i + 9];
      const f = [];
      for (let c = 0; c < nc; c++) {
        const s = bytes[i + 11 + c * 3];
        f.push(`${s >> 4}x${s & 15}`);
      }
      return { sof: marker - 0xc0, components: nc, sampling: f.join(",") };
    }
    i += 2 + len;
  }
  return null;
}

function oursConfig(mode) {
  switch (mode) {
    case "420":
      return { quality: 90, encoded_color_space: "ycbcr", subsampling: [[2, 2], [1, 1], [1, 1]] };
    case "444":
      return { quality: 90, encoded_color_space: "ycbcr", subsampling: [[1, 1], [1, 1], [1, 1]] };
    case "rgb":
      return { quality: 90, encoded_color_space: "rgb" };
    case "gray":
      return { quality: 90, encoded_color_space: "grayscale" };
  }
  throw new Error(`unknown mode ${mode}`);
}

function jsquashOptions(mode, baseline) {
  const o = { quality: 90 };
  if (mode === "444") Object.assign(o, { auto_subsample: false, chroma_subsample: 1 });
  if (mode === "420") Object.assign(o, { auto_subsample: false, chroma_subsample: 2 });
  if (mode === "rgb") o.color_space = 2;
  if (mode === "gray") o.color_space = 1;
  if (baseline) Object.assign(o, { baseline: true, progressive: false });
  return o;
}

// cornerstone's reused decoder: the stream copied in, the samples copied out of wasm memory
function cornerstoneDecode(stream) {
  csDecoder.getEncodedBuffer(stream.length).set(stream);
  csDecoder.decode();
  return csDecoder.getDecodedBuffer().slice();
}

// Chromium's decoder: RGBA samples copied out of the VideoFrame into a new array
async function imageDecoderDecode(stream) {
  const dec = new ImageDecoder({ data: stream, type: "image/jpeg", colorSpaceConversion: "none" });
  const { image } = await dec.decode();
  const out = new Uint8Array(image.allocationSize({ format: "RGBA" }));
  await image.copyTo(out, { format: "RGBA" });
  image.close();
  dec.close();
  return out;
}

function candidates(spec, raw, jpeg, plain) {
  const { width: w, height: h, channels, mode } = spec;
  const n = w * h;
  const shape = channels === 3 ? [h, w, 3] : [h, w];
  const config = oursConfig(mode);
  const rgba = toRGBA(raw, channels, n);
  const imageData = new ImageData(rgba, w, h);
  const canvas = new OffscreenCanvas(w, h);
  const ctx = canvas.getContext("2d", { willReadFrequently: true });
  const jpegBlob = new Blob([jpeg], { type: "image/jpeg" });

  const intoBuffer = new Uint8Array(n * channels);
  const decode = {
    ours: { run: () => oursReader.decode(config, jpeg, shape), channels },
    "ours (scalar)": { run: () => oursScalar.decode(config, jpeg, shape), channels },
    // The same decode into one reused buffer (decodeInto): no new array per call.
    "ours (decodeInto)": {
      run: () => {
        oursReader.decodeInto(config, jpeg, shape, intoBuffer);
        return intoBuffer;
      },
      channels,
    },
    cornerstone: { run: () => cornerstoneDecode(jpeg), channels },
    jsquash: { run: async () => (await jsqDecode(jpeg.slice().buffer)).data, channels: 4 },
    "jpeg-js": {
      run: () => jpegjs.decode(jpeg, { useTArray: true, formatAsRGBA: false, maxMemoryUsageInMB: 4096 }).data,
      channels: 3,
    },
    ImageDecoder: { run: () => imageDecoderDecode(jpeg), channels: 4 },
    "createImageBitmap+canvas": {
      run: async () => {
        const bmp = await createImageBitmap(jpegBlob, { colorSpaceConversion: "none", premultiplyAlpha: "none" });
        ctx.drawImage(bmp, 0, 0);
        bmp.close();
        return ctx.getImageData(0, 0, w, h).data;
      },
      channels: 4,
    },
  };

  // The same decoders on the same stream without restart intervals (`plain`: jpegtran
  // -optimize of it, the same coefficients), to show what our restart intervals do to each.
  if (plain) {
    decode["ours (no restarts)"] = { run: () => oursReader.decode(config, plain, shape), channels };
    decode["cornerstone (no restarts)"] = { run: () => cornerstoneDecode(plain), channels };
    decode["ImageDecoder (no restarts)"] = { run: () => imageDecoderDecode(plain), channels: 4 };
  }

  // Room for any stream these images give at q90 (each is well under its raw size).
  const streamBuffer = new Uint8Array(raw.length + 65536);
  const encode = {
    ours: { run: () => ours.encode(config, raw, shape) },
    // The same encode into one reused buffer (encodeInto): no new array per call.
    "ours (encodeInto)": { run: () => streamBuffer.subarray(0, ours.encodeInto(config, raw, shape, streamBuffer)) },
    "ours (scalar)": { run: () => oursScalar.encode(config, raw, shape) },
    // The smallest streams at equal PSNR (README "Quantisation tables"): other bytes, so
    // compare these with mozjpeg (jsquash), which also trades speed for bytes.
    "ours (trellis)": { run: () => ours.encode(config, raw, shape, { trellis: true }) },
    "ours (flat, trellis)": { run: () => ours.encode(config, raw, shape, { quantTable: "flat", trellis: true }) },
    cornerstone:
      mode === "rgb"
        ? { unsupported: "the TurboJPEG API cannot write an RGB-colour-space (Adobe transform 0) JPEG" }
        : {
            run: () => {
              csEncoder.setQuality(90);
              csEncoder.setProgressive(0);
              csEncoder.setSubSampling(TJSAMP[mode]);
              csEncoder
                .getDecodedBuffer({ width: w, height: h, bitsPerSample: 8, componentCount: channels, isSigned: false })
                .set(raw);
              csEncoder.encode();
              return csEncoder.getEncodedBuffer().slice();
            },
          },
    "jsquash (defaults)": {
      options: jsquashOptions(mode, false),
      run: async () => new Uint8Array(await jsqEncode(imageData, jsquashOptions(mode, false))),
    },
    "jsquash (baseline)": {
      options: jsquashOptions(mode, true),
      run: async () => new Uint8Array(await jsqEncode(imageData, jsquashOptions(mode, true))),
    },
    "jpeg-js":
      mode === "444"
        ? { run: () => jpegjs.encode({ data: rgba, width: w, height: h }, 90).data }
        : { unsupported: "jpeg-js writes only 3-component YCbCr 4:4:4" },
    "OffscreenCanvas.convertToBlob":
      mode === "420"
        ? {
            run: async () => {
              ctx.putImageData(imageData, 0, 0);
              const blob = await canvas.convertToBlob({ type: "image/jpeg", quality: 0.9 });
              return new Uint8Array(await blob.arrayBuffer());
            },
          }
        : { unsupported: "Chromium's canvas encoder writes only YCbCr 4:2:0" },
  };
  return { decode, encode, n, channels };
}

const now = () => performance.now();
/** Pause after each collection, before a candidate's timed sample (see runCase). */
const SETTLE_MS = 50;

async function runCase(spec, timing) {
  const raw = await fetchBytes(spec.rawUrl);
  const jpeg = await fetchBytes(spec.jpegUrl);
  const plain = spec.plainJpegUrl ? await fetchBytes(spec.plainJpegUrl) : null;
  const { decode, encode, n, channels } = candidates(spec, raw, jpeg, plain);
  const ref = ours.decode(oursConfig(spec.mode), jpeg, channels === 3 ? [spec.height, spec.width, 3] : [spec.height, spec.width]);
  const out = { decode: {}, encode: {} };
  const active = [];
  for (const [kind, table] of [["decode", decode], ["encode", encode]]) {
    for (const [name, c] of Object.entries(table)) {
      if (c.unsupported) {
        out[kind][name] = { unsupported: c.unsupported };
        continue;
      }
      const entry = (out[kind][name] = {});
      if (c.options) entry.options = c.options;
      try {
        // Warm-up: at least two runs and warmupMs; also sizes the batch so a sample is >= minSampleMs.
        const t0 = now();
        let runs = 0;
        let result;
        do {
          result = await c.run();
          runs++;
        } while (runs < 2 || now() - t0 < timing.warmupMs);
        const perRun = (now() - t0) / runs;
        entry.iters = Math.max(1, Math.ceil(timing.minSampleMs / perRun));
        if (kind === "decode") {
          entry.outputChannels = c.channels;
          entry.meanAbsDiffVsOurs = Number(meanAbsDiff(ref, channels, result, c.channels, n).toFixed(3));
          // More than a few levels apart means the candidate decoded the stream differently
          // (e.g. ignored the Adobe transform-0 marker of an `rgb` stream): timed, but flagged.
          if (entry.meanAbsDiffVsOurs > 3) entry.mismatch = true;
          if (result.length !== n * c.channels) entry.outputLength = result.length;
        } else {
          entry.bytes = result.length;
          entry.layout = jpegLayout(result);
        }
        entry.samplesMs = [];
        active.push({ kind, name, c, entry });
      } catch (e) {
        entry.error = String(e?.stack ?? e);
      }
    }
  }
  // Timed runs, interleaved (one sample of every candidate per round) so machine noise
  // hits all candidates alike and the same-run ratios stay meaningful.
  for (let rep = 0; rep < timing.reps; rep++) {
    for (const a of active) {
      if (a.entry.error) continue;
      try {
        // Collect first (outside the timed region), so one candidate's garbage is not
        // collected on the next one's clock; a collection its own allocations trigger still
        // counts. (gc exists when Chromium runs with --js-flags=--expose-gc, as bench/run.mjs
        // starts it.) Then let the collection's background work (V8 sweeps and frees on
        // helper threads) finish: on 2 cores it competed with the next candidate, most with
        // one that decodes on another thread. ImageDecoder, timed right after jpeg-js's
        // garbage, measured 93 MP/s on cell 2048² instead of the 154 it gives settled.
        globalThis.gc?.();
        await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
        const t0 = now();
        for (let i = 0; i < a.entry.iters; i++) await a.c.run();
        a.entry.samplesMs.push((now() - t0) / a.entry.iters);
      } catch (e) {
        a.entry.error = String(e?.stack ?? e);
      }
    }
  }
  for (const a of active) {
    if (a.entry.error) continue;
    const s = [...a.entry.samplesMs].sort((x, y) => x - y);
    const mid = s.length >> 1;
    a.entry.medianMs = s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
    a.entry.mps = n / 1e6 / (a.entry.medianMs / 1e3);
    a.entry.bestMps = n / 1e6 / (s[0] / 1e3); // fastest sample: less sensitive to machine noise
    a.entry.samplesMs = a.entry.samplesMs.map((x) => Number(x.toFixed(4)));
  }
  return out;
}

window.bench = { setup, runCase };
window.benchReady = true;
