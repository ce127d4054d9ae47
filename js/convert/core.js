// The converter (Node): an image file, or raw uint8 samples with a shape, → an OME-Zarr 0.5
// image whose levels are uint8 Zarr v3 arrays compressed with the `jpeg` codec, each
// optionally inside `sharding_indexed` (written here: zarrita cannot write shards).
//
//   level 0 = the image; level n+1 = level n averaged over 2×2 areas; until a level fits
//   in one chunk (or `levels` levels).
//   colour data is laid out (c, y, x) — OME-Zarr 0.5 orders axes channel before space —
//   with a `transpose` codec (order [1, 2, 0]) before `jpeg`, so each chunk is still one
//   interleaved (H, W, 3) JPEG image; `channelAxis: "last"` writes (y, x, c) without it.
//
// The store is written under a temporary name next to the output and renamed at the end,
// so an interrupted or failed conversion never leaves a store that looks complete.
import fs from "node:fs";
import path from "node:path";
import { init, encode, decode, validateConfig } from "../loader.js";
import { encodeOptionsProblem } from "../options.js";
import { readImageFile, ImageInputError, sniffFormat } from "../image-input.js";
import { CodecPool, MAX_WORKERS } from "../pool.js";
import { SUBSAMPLING, rgbToLuma } from "../color-names.js";
// The error type and the output rules are the file-system side's (../convert-files.js), which
// the CLI uses with the Rust core: one ConvertError class for both.
import { ConvertError, argumentProblem, outputProblem, fileSystemError, prepareOutput, commitOutput } from "../convert-files.js";

export { ConvertError, argumentProblem, outputProblem, fileSystemError, prepareOutput, commitOutput };


/** `rescale` as given ("auto", "MIN:MAX", or { min, max }) → "auto" | { min, max } | null. */
export function parseRescale(value) {
  if (value == null) return null;
  if (value === "auto") return "auto";
  const m = typeof value === "string" ? /^\s*(\d+)\s*:\s*(\d+)\s*$/.exec(value) : null;
  const [min, max] = m ? [Number(m[1]), Number(m[2])] : [value?.min, value?.max];
  if (!(Number.isInteger(min) && Number.isInteger(max) && min >= 0 && max > min && max <= 65535)) {
    throw argumentProblem(`rescale must be "auto" or "MIN:MAX" (integers, 0 ≤ MIN < MAX ≤ 65535), got ${JSON.stringify(value)}`);
  }
  return { min, max };
}

/** The map of a rescale window { min, max } (16-bit samples) to 0–255: round((clamp(v, min, max) − min) · 255 / (max − min)). */
export function rescaleMap({ min, max }) {
  const scale = 255 / (max - min);
  return (v) => (v <= min ? 0 : v >= max ? 255 : Math.round((v - min) * scale));
}

export { SUBSAMPLING };

export const DEFAULTS = Object.freeze({ quality: 95, chunk: 256, subsampling: "4:2:0", channelAxis: "first" });

const MAX_JPEG_SIDE = 65535;
// Chunks being encoded at once per worker (the rest of a level waits): enough to keep the
// workers busy while this thread tiles and writes, few enough to bound the tiles in memory.
const CHUNKS_IN_FLIGHT_PER_WORKER = 8;
const EMPTY = 0xffffffffffffffffn; // shard index entry of a chunk that is not stored

// ------------------------------------------------------------------ options

function isPositiveInt(v) {
  return Number.isInteger(v) && v > 0;
}

function subsamplingName(value) {
  const found = Object.entries(SUBSAMPLING).find(([, s]) => JSON.stringify(s) === JSON.stringify(value));
  return found ? found[0] : JSON.stringify(value);
}

// The options as their own enumerable members only, as JSON and register() read them: an
// inherited member (Object.create({ quality: 10 })) is not an option.
function ownOptions(options) {
  if (options === null || typeof options !== "object") throw argumentProblem(`options must be an object, got ${options === null ? "null" : typeof options}`);
  return Object.assign(Object.create(null), options);
}

/**
 * Checks the options against the input's channel count and returns the normalised plan:
 * the codec configuration (as validateConfig normalises it), chunk, shard, levels, layout.
 */
export function resolveOptions(options, channels) {
  options = ownOptions(options);
  const known = new Set(["quality", "color", "subsampling", "chunk", "shard", "levels", "channelAxis", "name",
    "pixelSize", "unit", "restartIntervals", "trellis", "quantTable", "workers", "overwrite", "onProgress", "onWarning", "rescale"]);
  for (const key of Object.keys(options)) {
    if (!known.has(key)) throw argumentProblem(`unknown option "${key}"`);
  }
  const quality = options.quality ?? DEFAULTS.quality;
  if (!Number.isInteger(quality) || quality < 1 || quality > 100) {
    throw argumentProblem(`quality must be an integer from 1 to 100 (the jpeg codec's range), got ${JSON.stringify(quality)}`);
  }
  const color = options.color ?? (channels === 3 ? "ycbcr" : "grayscale");
  if (!["ycbcr", "rgb", "grayscale"].includes(color)) {
    throw argumentProblem(`color must be ycbcr, rgb or grayscale, got ${JSON.stringify(color)}`);
  }
  if (channels === 1 && color !== "grayscale") {
    throw argumentProblem(`the input is grayscale (1 channel); color ${color} needs 3 channels (use --color grayscale)`);
  }
  let subsampling;
  if (options.subsampling != null) {
    if (color !== "ycbcr") {
      throw argumentProblem(`subsampling applies only to color ycbcr (the spec allows no subsampling for ${color})`);
    }
    const given = options.subsampling;
    subsampling = typeof given === "string" ? SUBSAMPLING[given] : given;
    if (!subsampling) {
      throw argumentProblem(`subsampling must be one of ${Object.keys(SUBSAMPLING).join(", ")}, got ${JSON.stringify(given)}`);
    }
  } else if (color === "ycbcr") {
    subsampling = SUBSAMPLING[DEFAULTS.subsampling];
  }
  const raw = { quality, encoded_color_space: color, ...(subsampling ? { subsampling } : {}) };
  let config;
  try {
    config = validateConfig(raw);
  } catch (error) {
    throw argumentProblem(`invalid jpeg configuration ${JSON.stringify(raw)}: ${error.message}`, { cause: error });
  }
  const chunk = options.chunk ?? DEFAULTS.chunk;
  if (!isPositiveInt(chunk) || chunk > MAX_JPEG_SIDE) {
    throw argumentProblem(`chunk must be a positive integer of at most ${MAX_JPEG_SIDE} (a JPEG side), got ${JSON.stringify(chunk)}`);
  }
  const warnings = [];
  const mcu = mcuSize(config);
  if (chunk % mcu.height !== 0 || chunk % mcu.width !== 0) {
    // The spec: chunk width SHOULD be a multiple of 8·h_max, height of 8·v_max.
    warnings.push(`chunk ${chunk} is not a multiple of this configuration's ${mcu.height} × ${mcu.width} ` +
      "(height × width) MCU: the edge blocks of every chunk are padded, which can add artefacts near its right and bottom edges");
  }
  if (color === "rgb") {
    // The spec: rgb is not supported by every decoder and SHOULD be used only when
    // portability is not a concern.
    warnings.push("color rgb stores the channels without a colour transform (marked by an Adobe APP14 marker, transform 0), " +
      "which not every JPEG decoder supports: some ignore the marker and return wrong values (e.g. jpgjs, used by Neuroglancer). " +
      "Use rgb only when portability does not matter; grayscale and ycbcr are read everywhere");
  }
  const shard = options.shard ?? null;
  if (shard !== null && (!isPositiveInt(shard) || shard % chunk !== 0)) {
    throw argumentProblem(`shard must be a positive multiple of chunk (${chunk}), got ${JSON.stringify(shard)}`);
  }
  return { config, chunk, shard, ...resolvePyramidOptions(options), warnings, components: color === "grayscale" ? 1 : 3, mcu };
}

/**
 * The options every input's conversion checks alike (the TIFF copy path too): levels,
 * channel axis, pixel size and unit, encode options, workers.
 */
export function resolvePyramidOptions(options) {
  const levels = options.levels ?? null;
  if (levels !== null && !isPositiveInt(levels)) {
    throw argumentProblem(`levels must be a positive integer, got ${JSON.stringify(levels)}`);
  }
  const channelAxis = options.channelAxis ?? DEFAULTS.channelAxis;
  if (channelAxis !== "first" && channelAxis !== "last") {
    throw argumentProblem(`channelAxis must be "first" or "last", got ${JSON.stringify(channelAxis)}`);
  }
  const pixelSize = options.pixelSize ?? null;
  if (pixelSize !== null && !(typeof pixelSize === "number" && pixelSize > 0 && Number.isFinite(pixelSize))) {
    throw argumentProblem(`pixelSize must be a positive number, got ${JSON.stringify(pixelSize)}`);
  }
  const encodeOptions = {
    restartIntervals: options.restartIntervals ?? true,
    trellis: options.trellis ?? false,
    quantTable: options.quantTable ?? "annex-k",
  };
  const problem = encodeOptionsProblem(encodeOptions);
  if (problem) throw argumentProblem(problem);
  const workers = options.workers ?? 0;
  if (!(Number.isInteger(workers) && workers >= 0 && workers <= MAX_WORKERS)) {
    throw argumentProblem(`workers must be a whole number from 0 to ${MAX_WORKERS}, got ${JSON.stringify(workers)}`);
  }
  return { levels, channelAxis, pixelSize, unit: options.unit ?? null, encodeOptions, workers };
}

/** The MCU of a (normalised) configuration: 8·v_max rows by 8·h_max columns. */
export function mcuSize(config) {
  const factors = config.subsampling ?? [[1, 1]];
  return { height: 8 * Math.max(...factors.map((f) => f[1])), width: 8 * Math.max(...factors.map((f) => f[0])) };
}

// ------------------------------------------------------------------ input

/** `{data, shape}` (shape (H, W), (H, W, 1), (H, W, 3) or (H, W, 4)) → the converter's image form. */
export function imageFromArray(data, shape) {
  if (!(data instanceof Uint8Array)) {
    throw argumentProblem(`data must be a Uint8Array (uint8 samples), got ${data?.constructor?.name ?? typeof data}`);
  }
  if (!Array.isArray(shape) || shape.length < 2 || shape.length > 3 || !shape.every(isPositiveInt)) {
    throw argumentProblem(`shape must be [height, width] or [height, width, channels], got ${JSON.stringify(shape)}`);
  }
  const [height, width, channels = 1] = shape;
  if (![1, 3, 4].includes(channels)) {
    throw argumentProblem(`channels must be 1 (grayscale), 3 (RGB) or 4 (RGBA), got ${channels}`);
  }
  if (data.length !== height * width * channels) {
    throw argumentProblem(`data holds ${data.length} samples but shape ${JSON.stringify(shape)} needs ${height * width * channels}`);
  }
  if (channels !== 4) return { data, height, width, channels, warnings: [] };
  const rgb = new Uint8Array(height * width * 3);
  for (let i = 0, o = 0; i < data.length; i += 4) {
    rgb[o++] = data[i];
    rgb[o++] = data[i + 1];
    rgb[o++] = data[i + 2];
  }
  return { data: rgb, height, width, channels: 3, warnings: ["the input has 4 channels (RGBA); JPEG has no alpha, so alpha is dropped"] };
}

/** RGB → luma (ITU-R BT.601, as JPEG's Y), for --color grayscale on a colour input. */
function toGray(image) {
  return { ...image, data: rgbToLuma(image.data.subarray(0, image.height * image.width * 3)), channels: 1 };
}

// ------------------------------------------------------------------ pyramid

/** One level down: each output sample is the rounded mean of the (up to) 2×2 input samples it covers. */
export function downsample2x(image) {
  const { data, height, width, channels: C } = image;
  const h = Math.ceil(height / 2);
  const w = Math.ceil(width / 2);
  const out = new Uint8Array(h * w * C);
  const rowLen = width * C;
  const pairs = (width >> 1) * 2 * C; // the samples of the columns that come in pairs
  let o = 0;
  // Loops by case (2×2, 2×1, 1×2, 1×1 inputs) rather than one with branches and a division
  // per sample: 52 → 30 ms for a 4096² RGB level.
  for (let y = 0; y < h; y++) {
    const a = 2 * y * rowLen; // the first input row
    const b = 2 * y + 1 < height ? a + rowLen : -1; // the second, if there is one
    if (b >= 0) {
      for (let i = 0; i < pairs; i += 2 * C) {
        for (let c = 0; c < C; c++) out[o++] = (data[a + i + c] + data[a + i + C + c] + data[b + i + c] + data[b + i + C + c] + 2) >> 2;
      }
      if (width & 1) for (let c = 0; c < C; c++) out[o++] = (data[a + pairs + c] + data[b + pairs + c] + 1) >> 1;
    } else {
      for (let i = 0; i < pairs; i += 2 * C) {
        for (let c = 0; c < C; c++) out[o++] = (data[a + i + c] + data[a + i + C + c] + 1) >> 1;
      }
      if (width & 1) for (let c = 0; c < C; c++) out[o++] = data[a + pairs + c];
    }
  }
  return { data: out, height: h, width: w, channels: C };
}

/** The number of levels: halve until the image fits one chunk, or exactly `levels` (≥ 1 pixel). */
export function levelCount(height, width, chunk, levels) {
  const possible = Math.ceil(Math.log2(Math.max(height, width))) + 1; // down to a 1×1 level
  if (levels != null) {
    if (levels > possible) {
      throw argumentProblem(`levels ${levels} is too many for a ${height}×${width} image (at most ${possible}, down to 1×1)`);
    }
    return levels;
  }
  let n = 1;
  for (let h = height, w = width; h > chunk || w > chunk; n++) {
    h = Math.ceil(h / 2);
    w = Math.ceil(w / 2);
  }
  return n;
}

export const roundUp = (v, m) => Math.ceil(v / m) * m;

/**
 * The pyramid of an image of `height` × `width` under `plan`: each level's shape (halved,
 * rounded up) and chunk/shard grid, and the number of chunks in all.
 */
export function pyramidGrids(plan, height, width) {
  const nLevels = levelCount(height, width, plan.chunk, plan.levels);
  const levelShapes = [[height, width]];
  for (let l = 1; l < nLevels; l++) {
    const [h, w] = levelShapes[l - 1];
    levelShapes.push([Math.ceil(h / 2), Math.ceil(w / 2)]);
  }
  const grids = levelShapes.map(([h, w]) => {
    // a level smaller than a chunk: the chunk rounded up to whole MCUs (the spec's SHOULD)
    const chunk = [Math.min(plan.chunk, roundUp(h, plan.mcu.height)), Math.min(plan.chunk, roundUp(w, plan.mcu.width))];
    const shard = plan.shard ? [Math.min(plan.shard, roundUp(h, chunk[0])), Math.min(plan.shard, roundUp(w, chunk[1]))] : null;
    return { chunk, shard, chunks: [Math.ceil(h / chunk[0]), Math.ceil(w / chunk[1])] };
  });
  const chunksTotal = grids.reduce((n, g) => n + g.chunks[0] * g.chunks[1], 0);
  return { nLevels, levelShapes, grids, chunksTotal };
}

// ------------------------------------------------------------------ shard index checksum

let CRC32C_TABLE;
/** CRC-32C (Castagnoli), as the `crc32c` codec appends it (little-endian). */
export function crc32c(bytes) {
  if (!CRC32C_TABLE) {
    CRC32C_TABLE = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
      CRC32C_TABLE[n] = c >>> 0;
    }
  }
  let crc = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) crc = CRC32C_TABLE[(crc ^ bytes[i]) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

// ------------------------------------------------------------------ metadata

export function levelArrayMetadata(plan, levelShape, grid) {
  if (plan.planes > 1) return planesArrayMetadata(plan, levelShape, grid);
  const { config, channelAxis, components } = plan;
  const color = components === 3;
  const [h, w] = levelShape;
  const shape = !color ? [h, w] : channelAxis === "first" ? [3, h, w] : [h, w, 3];
  const withChannel = (yx) => (!color ? yx : channelAxis === "first" ? [3, ...yx] : [...yx, 3]);
  const jpeg = { name: "jpeg", configuration: config };
  const chunkCodecs = color && channelAxis === "first"
    ? [{ name: "transpose", configuration: { order: [1, 2, 0] } }, jpeg]
    : [jpeg];
  const dimensionNames = !color ? ["y", "x"] : channelAxis === "first" ? ["c", "y", "x"] : ["y", "x", "c"];
  return uint8ArrayMetadata(shape, grid, withChannel, chunkCodecs, dimensionNames);
}

/**
 * A level's Zarr v3 metadata: uint8 samples of `shape` in chunks of `grid.chunk` (y, x),
 * inside shards of `grid.shard` when it has them; `withChannel` adds the channel axis to a
 * (y, x) chunk shape, `chunkCodecs` code one chunk.
 */
function uint8ArrayMetadata(shape, grid, withChannel, chunkCodecs, dimensionNames) {
  const codecs = grid.shard
    ? [{
        name: "sharding_indexed",
        configuration: {
          chunk_shape: withChannel(grid.chunk),
          codecs: chunkCodecs,
          index_codecs: [{ name: "bytes", configuration: { endian: "little" } }, { name: "crc32c" }],
          index_location: "end",
        },
      }]
    : chunkCodecs;
  return {
    zarr_format: 3,
    node_type: "array",
    shape,
    data_type: "uint8",
    chunk_grid: { name: "regular", configuration: { chunk_shape: withChannel(grid.shard ?? grid.chunk) } },
    chunk_key_encoding: { name: "default", configuration: { separator: "/" } },
    fill_value: 0,
    codecs,
    dimension_names: dimensionNames,
    attributes: {},
  };
}

/**
 * Several channels (`plan.planes` > 1) as a `c` axis of grayscale chunks: shape (C, H, W),
 * chunks (1, h, w), each a grayscale JPEG through a transpose to (h, w, 1).
 */
function planesArrayMetadata(plan, levelShape, grid) {
  const C = plan.planes;
  const [h, w] = levelShape;
  const chunkCodecs = [{ name: "transpose", configuration: { order: [1, 2, 0] } }, { name: "jpeg", configuration: plan.config }];
  return uint8ArrayMetadata([C, h, w], grid, (yx) => [1, ...yx], chunkCodecs, ["c", "y", "x"]);
}

export function groupMetadata(plan, levelShapes, name) {
  if (plan.planes > 1) {
    // a c axis of grayscale channels
    const meta = groupMetadata({ ...plan, planes: 1, components: 3, channelAxis: "first" }, levelShapes, name);
    const ome = meta.attributes.ome;
    const colors = ["FF0000", "00FF00", "0000FF", "FFFF00", "FF00FF", "00FFFF", "FFFFFF"];
    ome.omero = {
      channels: Array.from({ length: plan.planes }, (_, i) => ({
        label: `channel ${i}`, color: colors[i % colors.length], window: { start: 0, end: 255, min: 0, max: 255 },
        active: true, coefficient: 1, family: "linear", inverted: false,
        ...(plan.rescale ? { rescaled_from: { data_type: plan.rescale.dataType, start: plan.rescale.min, end: plan.rescale.max } } : {}),
      })),
      rdefs: { model: "color" },
    };
    return meta;
  }
  const { components, channelAxis, pixelSize, unit } = plan;
  const space = (n) => ({ name: n, type: "space", ...(unit ? { unit } : {}) });
  const channel = { name: "c", type: "channel" };
  const spatial = [space("y"), space("x")];
  const axes = components === 1 ? spatial : channelAxis === "first" ? [channel, ...spatial] : [...spatial, channel];
  const size = pixelSize ?? 1;
  const datasets = levelShapes.map((_, level) => {
    const s = size * 2 ** level;
    const scale = components === 1 ? [s, s] : channelAxis === "first" ? [1, s, s] : [s, s, 1];
    return { path: String(level), coordinateTransformations: [{ type: "scale", scale }] };
  });
  const ome = {
    version: "0.5",
    multiscales: [{
      name,
      axes,
      datasets,
      type: "mean",
      metadata: { description: "2×2 area averaging per level", method: "zarr-jpeg convert" },
    }],
  };
  // 16-bit input mapped to uint8 (--rescale): the source window each channel was mapped from
  const rescaled = plan.rescale ? { rescaled_from: { data_type: plan.rescale.dataType, start: plan.rescale.min, end: plan.rescale.max } } : {};
  if (components === 3) {
    const window = { start: 0, end: 255, min: 0, max: 255 };
    ome.omero = {
      channels: ["FF0000", "00FF00", "0000FF"].map((color, i) => ({
        label: ["red", "green", "blue"][i], color, window, active: true, coefficient: 1, family: "linear", inverted: false, ...rescaled,
      })),
      rdefs: { model: "color" },
    };
  } else if (plan.rescale) {
    ome.omero = {
      channels: [{ label: "gray", color: "FFFFFF", window: { start: 0, end: 255, min: 0, max: 255 }, active: true, coefficient: 1,
        family: "linear", inverted: false, ...rescaled }],
      rdefs: { model: "greyscale" },
    };
  }
  return { zarr_format: 3, node_type: "group", attributes: { ome } };
}

// ------------------------------------------------------------------ chunks

/** The (ch × cw × C) tile at (y0, x0), edges beyond the image filled by repeating the last row/column. */
function tile(image, y0, x0, ch, cw) {
  const { data, height, width, channels: C } = image;
  const out = new Uint8Array(ch * cw * C);
  const rowLen = cw * C;
  const validW = Math.min(cw, width - x0);
  for (let y = 0; y < ch; y++) {
    const sy = Math.min(y0 + y, height - 1);
    const src = (sy * width + x0) * C;
    out.set(data.subarray(src, src + validW * C), y * rowLen);
    for (let x = validW; x < cw; x++) out.copyWithin(y * rowLen + x * C, y * rowLen + (validW - 1) * C, y * rowLen + validW * C);
  }
  return out;
}

export function chunkKey(plan, cy, cx, c = 0) {
  const coords = plan.planes > 1 ? [c, cy, cx] : plan.components === 1 ? [cy, cx] : plan.channelAxis === "first" ? [0, cy, cx] : [cy, cx, 0];
  return path.join("c", ...coords.map(String));
}

function squaredError(image, y0, x0, ch, cw, decoded) {
  const { data, height, width, channels: C } = image;
  let sum = 0;
  const h = Math.min(ch, height - y0);
  const w = Math.min(cw, width - x0);
  const n = w * C;
  for (let y = 0; y < h; y++) {
    const a = ((y0 + y) * width + x0) * C;
    const b = y * cw * C;
    // A row's sum first (exact: at most 65,535 · 3 · 255² < 2^53), then into the total.
    let row = 0;
    for (let i = 0; i < n; i++) {
      const d = data[a + i] - decoded[b + i];
      row += d * d;
    }
    sum += row;
  }
  return { sum, count: h * w * C };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

// ------------------------------------------------------------------ convert


/** The first `n` bytes of a file (fewer if it is shorter; none if it cannot be read: the reader then says why). */
function firstBytes(file, n) {
  let fd;
  try {
    fd = fs.openSync(file, "r");
    const out = new Uint8Array(n);
    return out.subarray(0, fs.readSync(fd, out, 0, n, 0));
  } catch {
    return new Uint8Array(0);
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/**
 * Converts an image into a JPEG-compressed OME-Zarr 0.5 image at `output` (a directory path).
 * @param input a PNG/JPEG file path, or `{ data: Uint8Array, shape: [H, W] | [H, W, C] }`
 * @param output the store directory to create (must not exist unless `overwrite`)
 * @param options `{ quality=95, color, subsampling="4:2:0", chunk=256, shard, levels, channelAxis="first",
 *   name, pixelSize, unit, restartIntervals=true, trellis=false, quantTable="annex-k" (encode()'s options),
 *   workers=0 (encode in this many worker_threads; the same output),
 *   overwrite (replaces a Zarr store or an empty directory, never one that holds the input), onProgress(event),
 *   onWarning(message) }`
 * @returns a summary: levels, bytes, compression ratio, PSNR of level 0, seconds, warnings
 */
export async function convert(input, output, options = {}) {
  const started = performance.now();
  options = ownOptions(options);
  if (typeof output !== "string" || output === "") throw argumentProblem("output must be a directory path");
  await init();
  const format = typeof input === "string" ? sniffFormat(firstBytes(input, 8)) : null;
  if (format === "tiff") {
    const { convertTiff } = await import("./tiff-convert.js");
    return convertTiff(input, output, options, started);
  }
  if (format === "jpeg") {
    // baseline JPEGs stream a band of rows at a time; others are decoded whole there
    const { convertJpegStream } = await import("./jpeg-rows.js");
    return convertJpegStream(input, output, options, started);
  }
  if (format === "png") {
    // 8-bit, non-interlaced PNGs stream a band of rows at a time; others are read whole
    const { pngHeader, streamablePng } = await import("./png-rows.js");
    const header = pngHeader(input);
    if (streamablePng(header)) {
      const { convertPngStream } = await import("./stream-convert.js");
      return convertPngStream(input, header, output, options, started);
    }
  }
  let image;
  if (typeof input === "string") {
    try {
      image = await readImageFile(input);
    } catch (error) {
      if (error instanceof ImageInputError) throw new ConvertError(error.message, { cause: error });
      throw error;
    }
  } else if (input && typeof input === "object" && "data" in input) {
    image = imageFromArray(input.data, input.shape);
  } else {
    throw argumentProblem("input must be an image file path or { data: Uint8Array, shape }");
  }
  if (image.channels === 3 && options.color === "grayscale") {
    image = { ...toGray(image), warnings: [...image.warnings, "the colour input is converted to grayscale (BT.601 luma)"] };
  }
  const plan = resolveOptions(options, image.channels);
  const warnings = [...image.warnings, ...plan.warnings];
  for (const w of warnings) options.onWarning?.(w);

  const { target, temp } = prepareOutput(output, options, typeof input === "string" ? input : null);

  const { nLevels, levelShapes, grids, chunksTotal } = pyramidGrids(plan, image.height, image.width);
  const name = options.name ?? (typeof input === "string" ? path.basename(input).replace(/\.[^.]+$/, "") : "image");
  let chunksDone = 0;
  const progress = (event) => options.onProgress?.({ levels: nLevels, chunksTotal, chunksDone, ...event });

  const summaryLevels = [];
  let bytesWritten = 0;
  let chunkBytes = 0;
  let rawBytes = 0;
  let error0 = { sum: 0, count: 0 };
  const write = (file, bytes) => {
    fs.writeFileSync(file, bytes);
    bytesWritten += bytes.length;
  };
  // Encoding (and level 0's check decode) in worker_threads when asked: the same streams.
  const pool = plan.workers > 0 ? new CodecPool({ size: plan.workers }) : null;
  let workersUsed = 0;
  try {
    fs.mkdirSync(temp);
    write(path.join(temp, "zarr.json"), JSON.stringify(groupMetadata(plan, levelShapes, name), null, 2));
    let current = image;
    for (let level = 0; level < nLevels; level++) {
      if (level > 0) current = downsample2x(current);
      const grid = grids[level];
      const dir = path.join(temp, String(level));
      fs.mkdirSync(dir);
      const meta = levelArrayMetadata(plan, levelShapes[level], grid);
      write(path.join(dir, "zarr.json"), JSON.stringify(meta, null, 2));
      progress({ phase: "level", level, shape: meta.shape });
      const [ch, cw] = grid.chunk;
      const shape = plan.components === 3 ? [ch, cw, 3] : [ch, cw];
      const levelRaw = current.data.length;
      rawBytes += levelRaw;
      let levelBytes = 0;
      let levelChunks = 0;
      // A chunk's stream (and, at level 0, its error against the image): in the pool's
      // workers when there are any, else here.
      const encodeChunk = async (cy, cx) => {
        const samples = tile(current, cy * ch, cx * cw, ch, cw);
        const bytes = pool
          ? await pool.encode(plan.config, samples, shape, plan.encodeOptions, { readWhenSent: true })
          : encode(plan.config, samples, shape, plan.encodeOptions);
        const decoded = level === 0 ? (pool ? await pool.decode(plan.config, bytes, shape) : decode(plan.config, bytes, shape)) : null;
        return { bytes, decoded };
      };
      // Each chunk as it is done, in order: its error, sizes and progress.
      const chunkDone = (cy, cx, { bytes, decoded }) => {
        if (decoded) {
          const e = squaredError(current, cy * ch, cx * cw, ch, cw, decoded);
          error0.sum += e.sum;
          error0.count += e.count;
        }
        levelBytes += bytes.length;
        levelChunks++;
        chunksDone++;
        return bytes;
      };
      // The chunks in the order they are stored (row by row, or shard by shard), with at most
      // `inFlight` being encoded at once; `store(cy, cx, bytes)` gets them in that order.
      const order = [];
      let shards = null;
      if (!grid.shard) {
        for (let cy = 0; cy < grid.chunks[0]; cy++) for (let cx = 0; cx < grid.chunks[1]; cx++) order.push([cy, cx]);
      } else {
        const [sh, sw] = grid.shard;
        shards = { per: [sh / ch, sw / cw], count: [Math.ceil(levelShapes[level][0] / sh), Math.ceil(levelShapes[level][1] / sw)] };
        for (let sy = 0; sy < shards.count[0]; sy++) {
          for (let sx = 0; sx < shards.count[1]; sx++) {
            for (let iy = 0; iy < shards.per[0]; iy++) {
              for (let ix = 0; ix < shards.per[1]; ix++) {
                const cy = sy * shards.per[0] + iy;
                const cx = sx * shards.per[1] + ix;
                // outside the array: not stored
                if (cy < grid.chunks[0] && cx < grid.chunks[1]) order.push([cy, cx]);
              }
            }
          }
        }
      }
      // A shard being assembled: its chunks' streams and index, written when its last chunk is in.
      let shard = null;
      const writeShard = () => {
        const indexBytes = new Uint8Array(shard.index.buffer); // little-endian on every platform Node runs on
        const view = new DataView(new ArrayBuffer(4));
        view.setUint32(0, crc32c(indexBytes), true);
        const file = path.join(dir, chunkKey(plan, shard.sy, shard.sx));
        fs.mkdirSync(path.dirname(file), { recursive: true });
        write(file, Buffer.concat([...shard.parts, indexBytes, new Uint8Array(view.buffer)]));
        shard = null;
      };
      const store = (cy, cx, bytes) => {
        if (!shards) {
          const file = path.join(dir, chunkKey(plan, cy, cx));
          fs.mkdirSync(path.dirname(file), { recursive: true });
          write(file, bytes);
          return;
        }
        const [sy, sx] = [Math.floor(cy / shards.per[0]), Math.floor(cx / shards.per[1])];
        if (shard && (shard.sy !== sy || shard.sx !== sx)) writeShard();
        shard ??= { sy, sx, parts: [], offset: 0, index: new BigUint64Array(shards.per[0] * shards.per[1] * 2).fill(EMPTY) };
        const at = 2 * ((cy - sy * shards.per[0]) * shards.per[1] + (cx - sx * shards.per[1])); // C order over the shard's chunk grid (channel axis has 1 chunk)
        shard.index[at] = BigInt(shard.offset);
        shard.index[at + 1] = BigInt(bytes.length);
        shard.parts.push(bytes);
        shard.offset += bytes.length;
      };
      const inFlight = pool ? plan.workers * CHUNKS_IN_FLIGHT_PER_WORKER : 1;
      const pending = [];
      for (let k = 0; k < order.length || pending.length > 0; ) {
        while (k < order.length && pending.length < inFlight) {
          const [cy, cx] = order[k++];
          const result = encodeChunk(cy, cx);
          result.catch(() => {}); // (awaited below, in order; one that fails after an earlier one is not reported)
          pending.push([cy, cx, result]);
        }
        const [cy, cx, result] = pending.shift();
        store(cy, cx, chunkDone(cy, cx, await result));
        progress({ phase: "chunk", level, levelChunksDone: levelChunks, levelChunksTotal: grid.chunks[0] * grid.chunks[1] });
        if (!pool && chunksDone % 8 === 0) await tick(); // (with a pool, the awaits above let other work in)
      }
      if (shard) writeShard();
      chunkBytes += levelBytes;
      summaryLevels.push({
        path: String(level),
        shape: meta.shape,
        chunkShape: meta.codecs[0].name === "sharding_indexed" ? meta.codecs[0].configuration.chunk_shape : meta.chunk_grid.configuration.chunk_shape,
        shardShape: grid.shard ? meta.chunk_grid.configuration.chunk_shape : null,
        chunks: levelChunks,
        rawBytes: levelRaw,
        encodedBytes: levelBytes,
        ratio: levelRaw / levelBytes,
      });
    }
    commitOutput(target, temp);
  } catch (error) {
    try {
      fs.rmSync(temp, { recursive: true, force: true });
    } catch {
      // (the error that stopped the conversion is the one to report)
    }
    throw fileSystemError(error, output);
  } finally {
    if (pool?.mode === "workers") workersUsed = plan.workers;
    await pool?.close();
  }
  const mse = error0.sum / error0.count;
  const psnr = mse === 0 ? Infinity : 10 * Math.log10((255 * 255) / mse);
  return {
    output: target,
    name,
    inputShape: image.channels === 3 ? [image.height, image.width, 3] : [image.height, image.width],
    config: plan.config,
    encodeOptions: plan.encodeOptions,
    channelAxis: plan.components === 3 ? plan.channelAxis : null,
    levels: summaryLevels,
    chunks: chunksDone,
    bytesWritten,
    encodedBytes: chunkBytes,
    rawBytes,
    ratio: rawBytes / chunkBytes,
    level0Ratio: summaryLevels[0].ratio,
    psnr,
    seconds: (performance.now() - started) / 1000,
    workers: workersUsed,
    warnings,
  };
}

/** A few lines for people: what was written, how small, how faithful. */
export function formatSummary(summary) {
  const mb = (n) => (n / 1e6).toFixed(2) + " MB";
  const c = summary.config;
  const o = summary.encodeOptions ?? {};
  const codec = `jpeg quality ${c.quality}, ${c.encoded_color_space}${c.subsampling ? " " + subsamplingName(c.subsampling) : ""}` +
    (o.quantTable && o.quantTable !== "annex-k" ? `, ${o.quantTable} quantisation tables` : "") +
    (o.trellis ? ", trellis quantisation" : "") +
    (o.restartIntervals === false ? ", no restart intervals" : "");
  const lines = [
    `wrote ${summary.output} in ${summary.seconds.toFixed(2)} s`,
    `  image ${summary.inputShape.join("×")} → ${summary.levels.length} level(s), ${summary.chunks} chunks, ${codec}`,
  ];
  for (const l of summary.levels) {
    lines.push(`  level ${l.path}: shape ${l.shape.join("×")}, chunk ${l.chunkShape.join("×")}` +
      (l.shardShape ? `, shard ${l.shardShape.join("×")}` : "") +
      `, ${l.chunks} chunks, ${mb(l.encodedBytes)} (${l.ratio.toFixed(1)}:1)`);
  }
  lines.push(`  bytes written ${mb(summary.bytesWritten)} for ${mb(summary.rawBytes)} of samples: compression ratio ${summary.ratio.toFixed(1)}:1`);
  if (summary.tiles) {
    const t = summary.tiles;
    lines.splice(1, 0, `  source ${summary.source.format}: ${summary.source.page}` +
      (summary.source.pixelSize ? `; pixel ${summary.source.pixelSize.x} µm (${summary.source.pixelSize.source})` : ""));
    lines.push(`  level 0: ${t.copied} tiles copied unchanged from the TIFF, ${t.reencoded} re-encoded` + (t.empty ? `, ${t.empty} empty (not stored)` : "") +
      `; quality ${c.quality} ${summary.qualityEstimated ? "estimated from the tiles' quantisation tables (the nearest IJG quality)" : "(the tiles' tables are not IJG-like: a guess)"}`);
    const u = summary.levelConfig;
    if (summary.levels.length > 1) lines.push(`  levels 1+: re-encoded at quality ${u.quality}, ${u.encoded_color_space}${u.subsampling ? " " + subsamplingName(u.subsampling) : ""}`);
  } else {
    lines.push(`  PSNR of level 0 against the input: ${Number.isFinite(summary.psnr) ? summary.psnr.toFixed(2) + " dB" : "∞ (identical)"}`);
  }
  return lines.join("\n");
}
