// An image read a band of rows at a time → JPEG OME-Zarr, streamed: rows come from a row
// source (a PNG: ./png-rows.js; a TIFF whose tiles are not JPEG: ./tiff-convert.js) and go
// through the streaming pyramid (./pyramid.js), so memory holds a chunk row per level, not
// the image. Writes the same store, byte for byte, as convert() of the same samples held
// in memory (tests/js/convert-stream.test.mjs checks it).
import fs from "node:fs";
import path from "node:path";
import * as loader from "../loader.js";
import { CodecPool } from "../pool.js";
import {
  ConvertError, argumentProblem, resolveOptions, pyramidGrids, levelArrayMetadata, groupMetadata, chunkKey, prepareOutput, commitOutput,
  fileSystemError, parseRescale,
} from "./core.js";
import { ImageInputError } from "../image-input.js";
import { ChunkStore, LevelWriter, planeOf } from "./pyramid.js";
import { pngSampleRange, readPngRows } from "./png-rows.js";

const PNG_COLOR_TYPES = { 0: "grayscale", 2: "RGB", 3: "palette", 4: "grayscale+alpha", 6: "RGBA" };

export async function convertPngStream(file, header, output, options, started = performance.now()) {
  const { colorType, bitDepth } = header;
  let rescale = parseRescale(options.rescale);
  if (bitDepth === 16 && !rescale) {
    throw new ConvertError(`${file} is a 16-bit ${PNG_COLOR_TYPES[colorType]} PNG: the samples are uint16; the jpeg codec stores uint8 (8-bit) samples only: ` +
      "pass --rescale auto (map the image's own min–max to 0–255) or --rescale MIN:MAX");
  }
  if (bitDepth !== 16 && rescale) throw argumentProblem(`rescale applies to 16-bit input; ${file} is an 8-bit PNG`);
  if (rescale === "auto") {
    // a first pass over every row for the image's own range
    try {
      const { min, max } = await pngSampleRange(file, header);
      rescale = { min, max: Math.max(max, min + 1) };
    } catch (error) {
      if (error instanceof ImageInputError) throw new ConvertError(error.message, { cause: error });
      throw error;
    }
  }
  return convertRows({
    file, height: header.height, width: header.width,
    channels: colorType === 0 || colorType === 4 ? 1 : 3,
    rescale: rescale ? { dataType: "uint16", ...rescale } : null,
    summary: rescale ? { rescale } : undefined,
    readRows: async (onRows, { toGray }) => {
      const alpha = await readPngRows(file, header, { toGray, batch: 16, rescale }, onRows);
      return alpha.hadAlpha
        ? [`${file} has an alpha channel (${PNG_COLOR_TYPES[colorType]}); JPEG has none, so alpha is dropped` +
          (alpha.opaque ? " (every pixel was opaque)" : " — transparent pixels keep their colour values, not a background")]
        : [];
    },
  }, output, options, started);
}

/**
 * Converts rows from `source`: { file, height, width, channels (1 | 3), readRows(onRows,
 * { toGray }) → Promise<warnings[]>, warnings?, summary? } (readRows calls `await onRows(rows, n)`
 * with every row in order, converted to luma when toGray).
 */
export async function convertRows(source, output, options, started = performance.now()) {
  const { file, width, height } = source;
  const sourceChannels = source.channels;
  // more than 3 channels, 2, or 3 that are not RGB: a c axis of grayscale chunks ("planes")
  const planes = source.planes ? sourceChannels : 1;
  if (planes > 1 && options.color != null && options.color !== "grayscale") {
    throw argumentProblem(`${file} has ${planes} channels, stored as a c axis of grayscale chunks; color ${options.color} needs RGB input`);
  }
  const toGray = planes === 1 && sourceChannels === 3 && options.color === "grayscale";
  const channels = toGray ? 1 : sourceChannels; // samples per pixel in the rows
  const { rescale: _ignored, ...rest } = options;
  const plan = { ...resolveOptions(rest, planes > 1 ? 1 : channels), rescale: source.rescale ?? null, planes };
  const warnings = [];
  const warn = (w) => {
    warnings.push(w);
    options.onWarning?.(w);
  };
  for (const w of source.warnings ?? []) warn(w);
  if (toGray) warn("the colour input is converted to grayscale (BT.601 luma)");
  for (const w of plan.warnings) warn(w);
  const { target, temp } = prepareOutput(output, options, file);

  const { nLevels, levelShapes, grids, chunksTotal } = pyramidGrids(plan, height, width);
  const name = options.name ?? path.basename(file).replace(/\.[^.]+$/, "");
  let chunksDone = 0;
  const progress = (event) => options.onProgress?.({ levels: nLevels, chunksTotal, chunksDone, ...event });
  let bytesWritten = 0;
  const write = (f, bytes) => {
    fs.writeFileSync(f, bytes);
    bytesWritten += bytes.length;
  };
  const pool = plan.workers > 0 ? new CodecPool({ size: plan.workers }) : null;
  let workersUsed = 0;
  const levelStats = levelShapes.map(() => ({ chunks: 0, bytes: 0 }));
  const error0 = { sum: 0, count: 0 };
  let readWarnings = [];
  const tracked = [];
  const track = (store) => (tracked.push(store), store);
  try {
    fs.mkdirSync(temp);
    write(path.join(temp, "zarr.json"), JSON.stringify(groupMetadata(plan, levelShapes, name), null, 2));
    const metas = levelShapes.map((shape, level) => {
      const dir = path.join(temp, String(level));
      fs.mkdirSync(dir);
      const meta = levelArrayMetadata(plan, shape, grids[level]);
      write(path.join(dir, "zarr.json"), JSON.stringify(meta, null, 2));
      return meta;
    });
    let below = null;
    const started0 = new Set();
    for (let level = nLevels - 1; level >= 0; level--) {
      const grid = grids[level];
      const [ch, cw] = grid.chunk;
      const shape = channels === 3 && planes === 1 ? [ch, cw, 3] : [ch, cw];
      const [lh, lw] = levelShapes[level];
      const store = track(new ChunkStore(path.join(temp, String(level)), grid, (cy, cx, c) => chunkKey(plan, cy, cx, c), (n) => { bytesWritten += n; }));
      const encodeOne = async (samples, cy, cx) => {
          const bytes = pool
            ? await pool.encode(plan.config, samples, shape, plan.encodeOptions, { readWhenSent: true })
            : loader.encode(plan.config, samples, shape, plan.encodeOptions);
          if (level === 0) {
            // level 0's error against the input, over the image's own pixels
            const decoded = pool ? await pool.decode(plan.config, bytes, shape) : loader.decode(plan.config, bytes, shape);
            const h = Math.min(ch, lh - cy * ch);
            const perPixel = planes > 1 ? 1 : channels;
            const w = Math.min(cw, lw - cx * cw) * perPixel;
            for (let y = 0; y < h; y++) {
              let row = 0;
              for (let i = y * cw * perPixel, end = i + w; i < end; i++) {
                const d = samples[i] - decoded[i];
                row += d * d;
              }
              error0.sum += row;
            }
            error0.count += h * w;
          }
          return bytes;
      };
      below = new LevelWriter({
        height: lh, width: lw, channels, grid, store, next: below,
        // several channels: a grayscale chunk per channel, from the interleaved tile
        encodeChunk: planes === 1 ? encodeOne
          : (samples, cy, cx) => Promise.all(Array.from({ length: planes }, (_, c) => encodeOne(planeOf(samples, planes, c), cy, cx))),
        onChunk: (n) => {
          if (!started0.has(level)) {
            started0.add(level);
            progress({ phase: "level", level, shape: metas[level].shape });
          }
          levelStats[level].chunks++;
          levelStats[level].bytes += n;
          chunksDone++;
          progress({ phase: "chunk", level, levelChunksDone: levelStats[level].chunks, levelChunksTotal: grid.chunks[0] * grid.chunks[1] });
        },
      });
    }
    const level0 = below;
    try {
      readWarnings = await source.readRows((rows, n) => level0.push(rows, n), { toGray });
    } catch (error) {
      if (error instanceof ImageInputError) throw new ConvertError(error.message, { cause: error });
      throw error;
    }
    await level0.finish();
    commitOutput(target, temp);
  } catch (error) {
    for (const store of tracked) store.abort();
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
  for (const w of readWarnings) warn(w);
  const summaryLevels = levelShapes.map((shape, level) => {
    const raw = shape[0] * shape[1] * channels;
    const grid = grids[level];
    const withChannel = (yx) => (planes > 1 ? [planes, ...yx] : channels === 1 ? yx : plan.channelAxis === "first" ? [3, ...yx] : [...yx, 3]);
    const chunkWith = (yx) => (planes > 1 ? [1, ...yx] : withChannel(yx));
    return {
      path: String(level),
      shape: withChannel(shape),
      chunkShape: chunkWith(grid.chunk),
      shardShape: grid.shard ? chunkWith(grid.shard) : null,
      chunks: levelStats[level].chunks,
      rawBytes: raw,
      encodedBytes: levelStats[level].bytes,
      ratio: raw / levelStats[level].bytes,
    };
  });
  const rawBytes = summaryLevels.reduce((n, l) => n + l.rawBytes, 0);
  const encodedBytes = summaryLevels.reduce((n, l) => n + l.encodedBytes, 0);
  const mse = error0.sum / error0.count;
  return {
    output: target,
    name,
    inputShape: channels === 1 ? [height, width] : [height, width, channels],
    config: plan.config,
    encodeOptions: plan.encodeOptions,
    channelAxis: planes > 1 ? "first" : channels === 3 ? plan.channelAxis : null,
    levels: summaryLevels,
    chunks: chunksDone,
    bytesWritten,
    encodedBytes,
    rawBytes,
    ratio: rawBytes / encodedBytes,
    level0Ratio: summaryLevels[0].ratio,
    psnr: mse === 0 ? Infinity : 10 * Math.log10((255 * 255) / mse),
    seconds: (performance.now() - started) / 1000,
    workers: workersUsed,
    warnings,
    streamed: true,
    ...(source.summary ?? {}),
  };
}
