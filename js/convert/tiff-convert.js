// TIFF / BigTIFF / OME-TIFF / SVS → JPEG OME-Zarr, streaming.
//
// Level 0: when the first page's tiles are baseline 8-bit JPEG with 1 or 3 components,
// each chunk IS its tile — made a complete stream (the page's JPEGTables spliced in, the
// colour markers made to say what the Photometric tag says; entropy-coded data unchanged,
// by the Rust core's completeTileStream) with the chunk shape = the tile shape. A tile
// whose frame differs from the page's (progressive, another sampling, another size) is
// decoded and re-encoded to the array's configuration. Levels 1+ are made from level 0 by
// 2×2 area averaging, depth-first over the tiles in Z-order (./pyramid.js's walkQuadtree;
// tiles of an odd size: a row of tiles at a time, LevelWriter).
import fs from "node:fs";
import path from "node:path";
import * as loader from "../loader.js";
import { CodecPool } from "../pool.js";
import {
  ConvertError, argumentProblem, SUBSAMPLING, levelArrayMetadata, groupMetadata, chunkKey, mcuSize, prepareOutput, commitOutput,
  fileSystemError, resolvePyramidOptions, roundUp, parseRescale, rescaleMap,
} from "./core.js";
import { openTiff, tileGrid, TiffInputError, COMPRESSION, PHOTOMETRIC } from "./tiff.js";
import { ChunkStore, LevelWriter, cutTile, walkQuadtree, planeOf, streamLength, IN_FLIGHT } from "./pyramid.js";
import { convertRows } from "./stream-convert.js";
import { imagePage, omePixels } from "./tiff-image.js";
import { J2K_COMPRESSIONS, j2kDecoder } from "./j2k.js";

const MAX_TILE_PIXELS = 2 ** 26; // a tile or strip of at most 64 Mpixels (8192² is 2^26)
const MAX_JPEG_SIDE = 65535;
/** The default shard rule: a level of more than this many chunks is stored in shards of SHARD_CHUNKS² chunks. */
export const AUTO_SHARD_ABOVE = 1024;
export const SHARD_CHUNKS = 16;

const PHOTOMETRIC_COLOR = { 1: "grayscale", 2: "rgb", 6: "ycbcr" };

// ------------------------------------------------------------------ options

function resolveTiffOptions(options) {
  const known = new Set(["quality", "shard", "levels", "channelAxis", "name", "pixelSize", "unit", "restartIntervals",
    "trellis", "quantTable", "workers", "overwrite", "onProgress", "onWarning", "color", "subsampling", "chunk", "rescale"]);
  for (const key of Object.keys(options)) {
    if (!known.has(key)) throw argumentProblem(`unknown option "${key}"`);
  }
  if (options.rescale != null) throw argumentProblem("rescale applies to 16-bit input; this TIFF's tiles are 8-bit JPEG");
  for (const key of ["color", "subsampling", "chunk"]) {
    if (options[key] != null) {
      throw argumentProblem(`${key} applies to PNG and JPEG input; a TIFF's level 0 keeps its tiles (their size, colour space and subsampling)`);
    }
  }
  const quality = options.quality ?? null;
  if (quality !== null && !(Number.isInteger(quality) && quality >= 1 && quality <= 100)) {
    throw argumentProblem(`quality must be an integer from 1 to 100 (the jpeg codec's range), got ${JSON.stringify(quality)}`);
  }
  const shard = options.shard ?? null; // null: the default rule; 0: none
  if (shard !== null && !(Number.isInteger(shard) && shard >= 0)) {
    throw argumentProblem(`shard must be 0 (no shards) or a positive multiple of the tile size, got ${JSON.stringify(shard)}`);
  }
  return { quality, shard, ...resolvePyramidOptions(options) };
}

// ------------------------------------------------------------------ metadata in the TIFF

const UNIT_TO_MICROMETRE = { "µm": 1, "um": 1, "μm": 1, "micrometer": 1, "micron": 1, "nm": 1e-3, "nanometer": 1e-3, "mm": 1e3, "millimeter": 1e3, "cm": 1e4, "centimeter": 1e4, "m": 1e6, "meter": 1e6, "Å": 1e-4, "angstrom": 1e-4, "pm": 1e-6 };

/** The pixel size in micrometres from OME-XML (PhysicalSizeX/Y with units) or an Aperio description (MPP), or null. */
export function pixelSizeFromDescription(description) {
  if (!description) return null;
  if (description.includes("<OME") && description.includes("PhysicalSizeX")) {
    const pixels = omePixels(description) ?? "";
    const attr = (name) => new RegExp(`\\b${name}="([^"]*)"`).exec(pixels)?.[1];
    const size = (axis) => {
      const value = Number(attr(`PhysicalSize${axis}`));
      const unit = attr(`PhysicalSize${axis}Unit`) ?? "µm";
      const factor = UNIT_TO_MICROMETRE[unit];
      return Number.isFinite(value) && value > 0 && factor ? value * factor : null;
    };
    const x = size("X");
    const y = size("Y") ?? x;
    return x ? { x, y, source: "OME-XML PhysicalSizeX/Y" } : null;
  }
  if (description.startsWith("Aperio")) {
    const mpp = Number(/\|\s*MPP\s*=\s*([0-9.eE+-]+)/.exec(description)?.[1]);
    if (Number.isFinite(mpp) && mpp > 0) return { x: mpp, y: mpp, source: "Aperio MPP" };
  }
  return null;
}

// ------------------------------------------------------------------ level 0 from the tiles

function describePage(page) {
  return `${page.width} × ${page.height}, ${page.samplesPerPixel} sample(s) of ${page.bitsPerSample.join("/")} bits, ` +
    `${COMPRESSION[page.compression] ?? `compression ${page.compression}`}, ${PHOTOMETRIC[page.photometric] ?? `photometric ${page.photometric}`}`;
}

/** Refuses, by name, what the JPEG copy path cannot take; → { color, planes } (planes > 1: a c axis of grayscale tiles). */
function checkJpegPage(page, file) {
  const where = `${file}: ${page.label}`;
  const bits = page.bitsPerSample;
  if (page.sampleFormat !== 1 || bits.some((b) => b !== 8)) {
    const dtype = page.sampleFormat === 3 ? `float${bits[0]}` : page.sampleFormat === 2 ? `int${bits[0]}` : `uint${bits[0]}`;
    throw new ConvertError(`${where}: the samples are ${dtype}; the jpeg codec stores uint8 (8-bit) samples only`);
  }
  if (page.compression !== 7) {
    throw new ConvertError(`${where}: ${COMPRESSION[page.compression] ?? `compression ${page.compression}`} is not supported yet; ` +
      "this converter reads JPEG-compressed (compression 7) TIFF pages");
  }
  // several min-is-black channels, each plane of grayscale JPEG tiles (planar samples, or
  // OME-TIFF/ImageJ channel pages joined by ./tiff-image.js): a c axis, each tile copied
  if (page.planar === 2 && page.samplesPerPixel > 1 && (page.photometric ?? 1) === 1) {
    if (page.tileWidth > MAX_JPEG_SIDE || page.tileHeight > MAX_JPEG_SIDE || page.tileWidth * page.tileHeight > MAX_TILE_PIXELS) {
      throw new ConvertError(`${where}: ${page.tiled ? "tiles" : "strips"} of ${page.tileWidth} × ${page.tileHeight} pixels are larger than this converter accepts (65535 per side, 2^26 pixels)`);
    }
    return { color: "grayscale", planes: page.samplesPerPixel };
  }
  if (page.samplesPerPixel !== 1 && page.samplesPerPixel !== 3) {
    throw new ConvertError(`${where}: ${page.samplesPerPixel} samples per pixel; JPEG tiles with 1 or 3 are supported`);
  }
  if (page.samplesPerPixel === 3 && page.planar !== 1) {
    throw new ConvertError(`${where}: planar (separate) colour planes are not supported for JPEG tiles`);
  }
  const color = PHOTOMETRIC_COLOR[page.photometric];
  if (!color || (color === "grayscale") !== (page.samplesPerPixel === 1)) {
    throw new ConvertError(`${where}: Photometric ${PHOTOMETRIC[page.photometric] ?? page.photometric} with ${page.samplesPerPixel} sample(s) is not supported`);
  }
  if (page.tileWidth > MAX_JPEG_SIDE || page.tileHeight > MAX_JPEG_SIDE || page.tileWidth * page.tileHeight > MAX_TILE_PIXELS) {
    throw new ConvertError(`${where}: ${page.tiled ? "tiles" : "strips"} of ${page.tileWidth} × ${page.tileHeight} pixels are larger than this converter accepts (65535 per side, 2^26 pixels)`);
  }
  return { color, planes: 1 };
}

/** The level-0 configuration for tiles of this frame: colour from the Photometric tag, subsampling from the SOF. */
function level0Config(color, frame, quality) {
  const config = { quality, encoded_color_space: color };
  if (color === "ycbcr") config.subsampling = frame.components.map((c) => [c.h, c.v]);
  return loader.validateConfig(config);
}

const sameFrame = (a, b) =>
  a.components.length === b.components.length && a.components.every((c, i) => c.h === b.components[i].h && c.v === b.components[i].v);

// ------------------------------------------------------------------ convert

export async function convertTiff(file, output, options, started = performance.now()) {
  let tiff;
  try {
    tiff = await openTiff(file);
  } catch (error) {
    if (error instanceof TiffInputError) throw new ConvertError(error.message, { cause: error });
    throw error;
  }
  const warnings = [];
  const warn = (w) => {
    warnings.push(w);
    options.onWarning?.(w);
  };
  let pool = null;
  let temp = null;
  const tracked = [];
  const track = (store) => (tracked.push(store), store);
  try {
    const pageWarnings = [];
    const page = imagePage(tiff, file, (w) => pageWarnings.push(w));
    if (page.compression !== 7) return await convertDecodedTiff(tiff, page, file, output, options, started, pageWarnings);
    pageWarnings.forEach(warn);
    const opts = resolveTiffOptions(options);
    const { color, planes } = checkJpegPage(page, file);
    let grid0;
    try {
      grid0 = tileGrid(page, file);
    } catch (error) {
      throw new ConvertError(error.message, { cause: error });
    }
    const where = `${file}: ${page.label}`;
    const { width, height, tileWidth: tw, tileHeight: th } = page;
    // TC: a tile's components; C: the samples per pixel the pyramid averages (the planes,
    // interleaved, when there are several)
    const TC = planes > 1 ? 1 : page.samplesPerPixel;
    const C = planes > 1 ? planes : TC;
    const planeTiles = grid0.rows * grid0.columns;
    const declared = color; // what completeTileStream makes the markers say
    const tileLabel = (i) => {
      const j = i % planeTiles;
      return `${where} ${grid0.kind} ${i} (row ${Math.floor(j / grid0.columns)}, column ${j % grid0.columns}${planes > 1 ? `, channel ${Math.floor(i / planeTiles)}` : ""})`;
    };
    const readTile = (i) => {
      let bytes;
      try {
        bytes = tiff.readBytes(page.offsets[i], page.byteCounts[i], tileLabel(i).slice(file.length + 2));
      } catch (error) {
        throw new ConvertError(error.message, { cause: error });
      }
      try {
        return loader.completeTileStream(bytes, page.jpegTables, declared);
      } catch (error) {
        throw new ConvertError(`${tileLabel(i)}: ${error.message}`, { cause: error });
      }
    };
    const inspect = (i, stream) => {
      try {
        return loader.inspectStream(stream);
      } catch (error) {
        throw new ConvertError(`${tileLabel(i)}: ${error.message}`, { cause: error });
      }
    };
    // The page's frame: its first tile's (the tiles of one page share it, as the TIFF
    // JPEG rules (TechNote 2) have it; one that differs is re-encoded).
    const first = page.byteCounts.slice(0, grid0.count).findIndex((n) => n > 0);
    if (first < 0) throw new ConvertError(`${where}: every ${grid0.kind} is empty (byte count 0)`);
    const frame = inspect(first, readTile(first));
    if (frame.precision !== 8) throw new ConvertError(`${tileLabel(first)}: ${frame.precision}-bit JPEG; the jpeg codec stores 8-bit samples only`);
    if (frame.components.length !== TC) {
      throw new ConvertError(`${tileLabel(first)}: the JPEG frame has ${frame.components.length} component(s) but the page has ${TC} sample(s) per pixel${planes > 1 ? " in each plane" : ""}`);
    }
    const estimated = frame.quality ?? 95;
    let config0;
    try {
      config0 = level0Config(color, frame, estimated);
    } catch (error) {
      throw new ConvertError(`${tileLabel(first)}: its frame cannot be described by a jpeg codec configuration: ${error.message}`, { cause: error });
    }
    const levelQuality = opts.quality ?? estimated;
    const configUp = loader.validateConfig(TC === 1
      ? { quality: levelQuality, encoded_color_space: "grayscale" }
      : { quality: levelQuality, encoded_color_space: "ycbcr", subsampling: SUBSAMPLING["4:2:0"] });

    // the levels
    const chunk0 = [th, tw];
    const mcu = mcuSize(configUp);
    const levelShapes = [[height, width]];
    for (let [h, w] = [height, width]; opts.levels ? levelShapes.length < opts.levels : h > th || w > tw; ) {
      if (h === 1 && w === 1) {
        throw argumentProblem(`levels ${opts.levels} is too many for a ${height}×${width} image (at most ${levelShapes.length}, down to 1×1)`);
      }
      h = Math.ceil(h / 2);
      w = Math.ceil(w / 2);
      levelShapes.push([h, w]);
    }
    const grids = levelShapes.map(([h, w], level) => {
      const chunk = level === 0 ? chunk0 : [Math.min(th, roundUp(h, mcu.height)), Math.min(tw, roundUp(w, mcu.width))];
      const chunks = [Math.ceil(h / chunk[0]), Math.ceil(w / chunk[1])];
      let shard = null;
      if (opts.shard === null ? chunks[0] * chunks[1] > AUTO_SHARD_ABOVE : opts.shard > 0) {
        const side = opts.shard || null;
        if (side !== null && (side % chunk0[0] !== 0 || side % chunk0[1] !== 0)) {
          throw argumentProblem(`shard ${side} is not a multiple of the tile size ${tw} × ${th}`);
        }
        const want = side ? [side, side] : [SHARD_CHUNKS * chunk[0], SHARD_CHUNKS * chunk[1]];
        shard = [Math.min(want[0], roundUp(h, chunk[0])), Math.min(want[1], roundUp(w, chunk[1]))];
        // (a shard a whole multiple of this level's chunk)
        shard = [roundUp(shard[0], chunk[0]), roundUp(shard[1], chunk[1])];
      }
      return { chunk, shard, chunks };
    });

    const pixel = opts.pixelSize !== null ? { x: opts.pixelSize, y: opts.pixelSize, source: "--pixel-size" } : pixelSizeFromDescription(page.description);
    const plan = {
      components: TC, planes, channelAxis: opts.channelAxis,
      pixelSize: pixel ? pixel.x : null,
      unit: opts.unit ?? (pixel && opts.pixelSize === null ? "micrometer" : null),
    };
    if (pixel && Math.abs(pixel.x - pixel.y) > 1e-9 * pixel.x) warn(`the pixels are not square (${pixel.x} × ${pixel.y} µm); the scale uses ${pixel.x} for both axes`);
    const name = options.name ?? path.basename(file).replace(/\.[^.]+$/, "");

    ({ temp } = prepareOutput(output, options, file));
    const target = path.resolve(output);
    let bytesWritten = 0;
    const write = (f, bytes) => {
      fs.writeFileSync(f, bytes);
      bytesWritten += bytes.length;
    };
    fs.mkdirSync(temp);
    pool = opts.workers > 0 ? new CodecPool({ size: opts.workers }) : null;
    const chunksTotal = grids.reduce((n, g) => n + g.chunks[0] * g.chunks[1], 0);
    let chunksDone = 0;
    const progress = (event) => options.onProgress?.({ levels: levelShapes.length, chunksTotal, chunksDone, ...event });
    const levelStats = levelShapes.map(() => ({ chunks: 0, bytes: 0 }));
    const keyPlan = { components: TC, planes, channelAxis: opts.channelAxis };
    const stores = grids.map((grid, level) => {
      const dir = path.join(temp, String(level));
      fs.mkdirSync(dir);
      return track(new ChunkStore(dir, grid, (cy, cx, c) => chunkKey(keyPlan, cy, cx, c), (n) => { bytesWritten += n; }));
    });
    const shapeOf = (chunk) => (TC === 3 ? [chunk[0], chunk[1], 3] : [chunk[0], chunk[1]]);
    const encodeOne = (level, samples) => {
      const shape = shapeOf(grids[level].chunk);
      return pool
        ? pool.encode(configUp, samples, shape, opts.encodeOptions, { readWhenSent: true })
        : Promise.resolve(loader.encode(configUp, samples, shape, opts.encodeOptions));
    };
    // several planes: a grayscale chunk per plane, from the interleaved block
    const encodeLevel = planes === 1 ? encodeOne
      : (level, samples) => Promise.all(Array.from({ length: planes }, (_, c) => encodeOne(level, planeOf(samples, planes, c))));
    const chunkDone = (level, n) => {
      levelStats[level].chunks++;
      levelStats[level].bytes += n;
      chunksDone++;
      progress({ phase: "chunk", level, levelChunksDone: levelStats[level].chunks, levelChunksTotal: grids[level].chunks[0] * grids[level].chunks[1] });
    };

    // level 0's tiles: each read, inspected, decoded (its samples feed level 1) and stored
    // as it is or re-encoded
    progress({ phase: "level", level: 0, shape: levelShapes[0] });
    const shape0 = shapeOf(chunk0);
    let copied = 0;
    const reencoded = [];
    const decodeTile = (stream) => (pool ? pool.decode(config0, stream, shape0) : loader.decodeAsync(config0, stream, shape0));
    /** Starts tile i: → Promise<{ samples, bytes, copied, why }> (samples and bytes null: a sparse tile). */
    const startOne = (i) => {
      if (page.byteCounts[i] === 0) return Promise.resolve({ samples: null, bytes: null }); // a sparse tile: not stored (fill value 0)
      const stream = readTile(i);
      const info = inspect(i, stream);
      const copyable = info.sof === 0xc0 && info.precision === 8 && info.width === tw && info.height === th && sameFrame(info, frame);
      return (async () => {
        if (copyable) {
          let samples;
          try {
            samples = await decodeTile(stream);
          } catch (error) {
            throw new ConvertError(`${tileLabel(i)}: cannot decode: ${error.message}`, { cause: error });
          }
          return { samples, bytes: stream, copied: true };
        }
        if (info.precision !== 8) throw new ConvertError(`${tileLabel(i)}: ${info.precision}-bit JPEG; the jpeg codec stores 8-bit samples only`);
        if (info.components.length !== TC) throw new ConvertError(`${tileLabel(i)}: ${info.components.length} component(s) where the page has ${TC}`);
        // decoded at its own size, then cut (or padded) to the tile's
        const own = TC === 3 ? [info.height, info.width, 3] : [info.height, info.width];
        let decoded;
        try {
          decoded = pool ? await pool.decode(config0, stream, own) : await loader.decodeAsync(config0, stream, own);
        } catch (error) {
          throw new ConvertError(`${tileLabel(i)}: cannot decode (${info.process}): ${error.message}`, { cause: error });
        }
        const samples = cutTile(decoded, info.height, info.width, TC, 0, th, tw);
        const bytes = pool
          ? await pool.encode(config0, samples, shape0, opts.encodeOptions)
          : loader.encode(config0, samples, shape0, opts.encodeOptions);
        return { samples, bytes, copied: false, why: info.process !== "baseline" ? info.process : info.width !== tw || info.height !== th ? `${info.width} × ${info.height}` : "another sampling" };
      })();
    };
    /**
     * Starts tile (ty, tx) of every plane: → Promise<{ samples, bytes, copied, why }>, the
     * planes' samples interleaved (zeros for a sparse one) and their streams, flags and
     * reasons as arrays (null samples and bytes: sparse in every plane).
     */
    const startTile = (ty, tx) => {
      const at = ty * grid0.columns + tx;
      if (planes === 1) return startOne(at);
      const jobs = Array.from({ length: planes }, (_, p) => {
        try {
          return startOne(p * planeTiles + at);
        } catch (error) {
          return Promise.reject(error);
        }
      });
      return Promise.all(jobs).then((results) => {
        if (results.every((r) => r.bytes === null)) return { samples: null, bytes: null };
        const samples = new Uint8Array(th * tw * planes);
        results.forEach((r, p) => {
          if (r.samples) for (let k = 0, o = p; k < r.samples.length; k++, o += planes) samples[o] = r.samples[k];
        });
        return { samples, bytes: results.map((r) => r.bytes), copied: results.map((r) => r.copied), why: results.map((r) => r.why) };
      });
    };
    /** A started tile's chunk into level 0's store (the store keeps a shard's chunks in row-major order whatever order they come in). */
    const storeTile = (ty, tx, { bytes, copied: wasCopied, why }) => {
      if (bytes && planes > 1) {
        stores[0].store(ty, tx, bytes);
        levelStats[0].chunks++;
        levelStats[0].bytes += streamLength(bytes);
        bytes.forEach((b, c) => {
          if (!b) return;
          if (wasCopied[c]) copied++;
          else reencoded.push({ chunk: [c, ty, tx], why: why[c] });
        });
      } else if (bytes) {
        stores[0].store(ty, tx, bytes);
        levelStats[0].chunks++;
        levelStats[0].bytes += bytes.length;
        if (wasCopied) copied++;
        else reencoded.push({ chunk: [ty, tx], why });
      } else {
        stores[0].skip(ty, tx, planes);
      }
      chunksDone++;
      progress({ phase: "chunk", level: 0, levelChunksDone: levelStats[0].chunks, levelChunksTotal: grid0.rows * grid0.columns });
    };

    if (th % 2 === 0 && tw % 2 === 0) {
      // depth-first: memory independent of the image's size
      await walkQuadtree({
        shapes: levelShapes, tile: chunk0, channels: C, grids,
        startTile,
        useTile: (ty, tx, result) => {
          storeTile(ty, tx, result);
          return result.samples;
        },
        encodeChunk: encodeLevel,
        storeChunk: (level, cy, cx, bytes) => {
          stores[level].store(cy, cx, bytes);
          chunkDone(level, streamLength(bytes));
        },
      });
    } else {
      // tiles or strips of an odd size (a 2×2 area may straddle two of them): a row of
      // tiles at a time into a full-width band, the levels above streamed by rows
      let below = null;
      for (let level = levelShapes.length - 1; level >= 1; level--) {
        below = new LevelWriter({
          height: levelShapes[level][0], width: levelShapes[level][1], channels: C, grid: grids[level], store: stores[level], next: below,
          encodeChunk: (samples) => encodeLevel(level, samples),
          onChunk: (n) => chunkDone(level, n),
        });
      }
      const level0 = new LevelWriter({ height, width, channels: C, grid: grids[0], store: stores[0], next: below, writeChunks: false });
      const band = new Uint8Array(th * width * C);
      for (let ty = 0; ty < grid0.rows; ty++) {
        const jobs = [];
        const rowsHere = Math.min(th, height - ty * th);
        // a tile's decoded samples into the band, its stream into the store
        const place = async (tx, job) => {
          const result = await job;
          const x0 = tx * tw;
          const w = Math.min(tw, width - x0);
          for (let y = 0; y < rowsHere; y++) {
            if (result.samples) band.set(result.samples.subarray(y * tw * C, (y * tw + w) * C), (y * width + x0) * C);
            else band.fill(0, (y * width + x0) * C, (y * width + x0 + w) * C);
          }
          storeTile(ty, tx, result);
        };
        for (let tx = 0; tx < grid0.columns; tx++) {
          // at most IN_FLIGHT tiles read and being decoded at once
          if (jobs.length >= IN_FLIGHT) await place(...jobs.shift());
          const job = startTile(ty, tx);
          job.catch(() => {});
          jobs.push([tx, job]);
        }
        while (jobs.length) await place(...jobs.shift());
        stores[0].endChunkRow(ty);
        await level0.push(band, rowsHere);
      }
      await level0.finish();
    }
    reencoded.sort((a, b) => a.chunk.reduce((d, v, k) => d || v - b.chunk[k], 0));

    // metadata last: level 0's attributes say which chunks are the TIFF's tiles
    write(path.join(temp, "zarr.json"), JSON.stringify(groupMetadata(plan, levelShapes, name), null, 2));
    const summaryLevels = [];
    let rawBytes = 0;
    let encodedBytes = 0;
    for (let level = 0; level < levelShapes.length; level++) {
      const meta = levelArrayMetadata({ ...plan, config: level === 0 ? config0 : configUp }, levelShapes[level], grids[level]);
      if (level === 0) {
        meta.attributes.zarr_jpeg = {
          source: path.basename(file),
          copied_from_tiff_tiles: copied,
          reencoded_chunks: reencoded.map((r) => r.chunk),
          quality_estimated: frame.quality !== null,
        };
      }
      write(path.join(temp, String(level), "zarr.json"), JSON.stringify(meta, null, 2));
      const raw = levelShapes[level][0] * levelShapes[level][1] * C;
      rawBytes += raw;
      encodedBytes += levelStats[level].bytes;
      summaryLevels.push({
        path: String(level),
        shape: meta.shape,
        chunkShape: meta.codecs[0].name === "sharding_indexed" ? meta.codecs[0].configuration.chunk_shape : meta.chunk_grid.configuration.chunk_shape,
        shardShape: grids[level].shard ? meta.chunk_grid.configuration.chunk_shape : null,
        chunks: levelStats[level].chunks,
        rawBytes: raw,
        encodedBytes: levelStats[level].bytes,
        ratio: raw / levelStats[level].bytes,
      });
    }
    for (const r of reencoded.slice(0, 3)) warn(`${where}: tile at chunk (${r.chunk.join(", ")}) re-encoded (${r.why})`);
    if (reencoded.length > 3) warn(`${where}: ${reencoded.length} tiles re-encoded in all`);
    commitOutput(target, temp);
    temp = null;
    return {
      output: target,
      name,
      inputShape: planes > 1 ? [planes, height, width] : TC === 3 ? [height, width, 3] : [height, width],
      source: { format: tiff.bigTiff ? "BigTIFF" : "TIFF", page: describePage(page), pixelSize: pixel },
      config: config0,
      levelConfig: configUp,
      qualityEstimated: frame.quality !== null,
      encodeOptions: opts.encodeOptions,
      channelAxis: TC === 3 ? opts.channelAxis : null,
      levels: summaryLevels,
      tiles: { copied, reencoded: reencoded.length, empty: page.byteCounts.slice(0, grid0.count).filter((n) => n === 0).length },
      chunks: chunksDone,
      bytesWritten,
      encodedBytes,
      rawBytes,
      ratio: rawBytes / encodedBytes,
      level0Ratio: summaryLevels[0].ratio,
      psnr: reencoded.length === 0 ? Infinity : NaN,
      seconds: (performance.now() - started) / 1000,
      workers: pool?.mode === "workers" ? opts.workers : 0,
      warnings,
    };
  } catch (error) {
    for (const store of tracked) store.abort();
    if (temp) {
      try {
        fs.rmSync(temp, { recursive: true, force: true });
      } catch {
        // (the error that stopped the conversion is the one to report)
      }
    }
    if (error instanceof TiffInputError) throw new ConvertError(error.message, { cause: error });
    throw fileSystemError(error, output);
  } finally {
    tiff.close();
    await pool?.close();
  }
}


// ------------------------------------------------------------------ tiles that are not JPEG

/** The lossless compressions whose tiles or strips are decoded (by geotiff's decoders) and encoded as JPEG. */
export const DECODED_COMPRESSIONS = Object.freeze({ 1: "none", 5: "LZW", 8: "Deflate", 32946: "Deflate", 32773: "PackBits" });

function checkBits(page, where) {
  const bits = page.bitsPerSample;
  if (page.sampleFormat !== 1 || bits.some((b) => b !== 8)) {
    const dtype = page.sampleFormat === 3 ? `float${bits[0]}` : page.sampleFormat === 2 ? `int${bits[0]}` : `uint${bits[0]}`;
    throw new ConvertError(`${where}: the samples are ${dtype}; the jpeg codec stores uint8 (8-bit) samples only`);
  }
}

/**
 * Level 0 from tiles or strips that are not JPEG (none, LZW, Deflate, PackBits): each row of
 * them decoded, then encoded like any image (the options' quality, colour, chunk), streamed
 * through the same pyramid as PNG input.
 */
async function convertDecodedTiff(tiff, page, file, output, options, started, warnings = []) {
  const where = `${file}: ${page.label}`;
  let rescale = parseRescale(options.rescale);
  const sixteen = page.sampleFormat === 1 && page.bitsPerSample.every((b) => b === 16);
  if (sixteen && !rescale) {
    throw new ConvertError(`${where}: the samples are uint16; the jpeg codec stores uint8 (8-bit) samples only: ` +
      "pass --rescale auto (map the image's own min–max to 0–255) or --rescale MIN:MAX");
  }
  if (!sixteen) {
    checkBits(page, where);
    if (rescale) throw argumentProblem(`rescale applies to 16-bit input; ${where} is 8-bit`);
  }
  const bytesPer = sixteen ? 2 : 1;
  const j2k = page.compression in J2K_COMPRESSIONS;
  if (!(page.compression in DECODED_COMPRESSIONS) && !j2k) {
    throw new ConvertError(`${where}: ${COMPRESSION[page.compression] ?? `compression ${page.compression}`} is not supported; ` +
      `this converter reads JPEG (its tiles copied) and ${[...new Set(Object.values(DECODED_COMPRESSIONS))].join(", ")}, ${Object.values(J2K_COMPRESSIONS).join(", ")} TIFF pages`);
  }
  const spp = page.samplesPerPixel;
  const photometric = page.photometric ?? (spp === 3 ? 2 : 1);
  // several channels that are not one RGB image: a c axis of grayscale chunks
  const planesOut = spp > 1 && !(spp === 3 && photometric === 2);
  const ok = (spp === 1 && (photometric === 0 || photometric === 1)) || (spp === 3 && photometric === 2) ||
    (planesOut && photometric === 1 && spp <= 64);
  if (!ok) {
    throw new ConvertError(`${where}: Photometric ${PHOTOMETRIC[photometric] ?? photometric} with ${spp} sample(s) per pixel is not supported ` +
      "(1 sample min-is-black/min-is-white, 3 samples RGB, or several min-is-black channels)");
  }
  if (page.tileWidth * page.tileHeight * bytesPer > MAX_TILE_PIXELS) {
    throw new ConvertError(`${where}: ${page.tiled ? "tiles" : "strips"} of ${page.tileWidth} × ${page.tileHeight} pixels are larger than this converter accepts (2^26 pixels)`);
  }
  let grid;
  try {
    grid = tileGrid(page, file);
  } catch (error) {
    throw new ConvertError(error.message, { cause: error });
  }
  const { width, height, tileWidth: tw, tileHeight: th } = page;
  const planes = grid.planes;
  const perPlane = planes > 1 ? 1 : spp;
  const { getDecoder } = await import("geotiff");
  const decoders = new Map(); // block height → decoder (the last strip is shorter)
  const decoderFor = async (h) => {
    if (!decoders.has(h)) {
      if (j2k) {
        decoders.set(h, await j2kDecoder({ tileWidth: tw, tileHeight: h, samplesPerPixel: perPlane, bits: page.bitsPerSample[0], littleEndian: tiff.littleEndian }));
        return decoders.get(h);
      }
      decoders.set(h, await getDecoder(page.compression, {
        // (16-bit: the predictor is undone below, after the samples are in this machine's
        // byte order; geotiff 3.0.5 undoes it on the file's bytes as if they were)
        tileWidth: tw, tileHeight: h, predictor: sixteen ? 1 : page.predictor, bitsPerSample: page.bitsPerSample.slice(0, perPlane),
        planarConfiguration: page.planar, samplesPerPixel: perPlane,
      }));
    }
    return decoders.get(h);
  };
  // a tile's samples: Uint8Array, or (16-bit) Uint16Array in this machine's byte order
  const decodeBlock = async (i, label, bytes, blockH, rowsHere) => {
    let buffer;
    try {
      buffer = await (await decoderFor(blockH)).decode(bytes.buffer);
    } catch (error) {
      throw new ConvertError(`${label}: cannot decode its ${DECODED_COMPRESSIONS[page.compression] ?? J2K_COMPRESSIONS[page.compression]} data: ${error?.message ?? error}`, { cause: error });
    }
    const need = tw * rowsHere * perPlane * bytesPer;
    if (buffer.byteLength < need) {
      throw new ConvertError(`${label}: decodes to ${buffer.byteLength} bytes; ${need} needed (corrupt or truncated)`);
    }
    if (!sixteen) return new Uint8Array(buffer);
    const view = new DataView(buffer);
    const out = new Uint16Array(buffer.byteLength >> 1);
    for (let k = 0; k < out.length; k++) out[k] = view.getUint16(2 * k, tiff.littleEndian);
    if (page.predictor === 2) {
      // horizontal differencing (TIFF 6.0 §14), per row and sample
      for (let y = 0; y < blockH; y++) {
        const row = y * tw * perPlane;
        for (let k = row + perPlane, end = row + tw * perPlane; k < end && k < out.length; k++) out[k] = (out[k] + out[k - perPlane]) & 0xffff;
      }
    } else if (page.predictor !== 1) {
      throw new ConvertError(`${label}: predictor ${page.predictor} is not supported for 16-bit samples`);
    }
    return out;
  };
  if (rescale === "auto") {
    // a first pass over every tile for the image's own range
    let min = 65535;
    let max = 0;
    for (let ty = 0; ty < grid.rows; ty++) {
      const rowsHere = Math.min(th, height - ty * th);
      for (let tx = 0; tx < grid.columns; tx++) {
        const w = Math.min(tw, width - tx * tw);
        for (let p = 0; p < planes; p++) {
          const i = p * grid.rows * grid.columns + ty * grid.columns + tx;
          if (page.byteCounts[i] === 0) continue;
          const label = `${where} ${grid.kind} ${i}`;
          let bytes;
          try {
            bytes = tiff.readBytes(page.offsets[i], page.byteCounts[i], label);
          } catch (error) {
            throw new ConvertError(error.message, { cause: error });
          }
          const block = await decodeBlock(i, label, bytes, page.tiled ? th : rowsHere, rowsHere);
          for (let y = 0; y < rowsHere; y++) {
            for (let k = y * tw * perPlane, end = k + w * perPlane; k < end; k++) {
              const v = block[k];
              if (v < min) min = v;
              if (v > max) max = v;
            }
          }
        }
      }
    }
    rescale = { min, max: Math.max(max, min + 1) };
  }
  const map = rescale ? rescaleMap(rescale) : null;
  const pixel = pixelSizeFromDescription(page.description);
  const sizeOptions = options.pixelSize == null && pixel ? { pixelSize: pixel.x, unit: options.unit ?? "micrometer" } : {};
  return convertRows({
    file, height, width, channels: spp, planes: planesOut, warnings,
    summary: { source: { format: tiff.bigTiff ? "BigTIFF" : "TIFF", page: describePage(page), pixelSize: pixel }, ...(rescale ? { rescale } : {}) },
    rescale: rescale ? { dataType: "uint16", ...rescale } : null,
    readRows: async (onRows, { toGray }) => {
      const C = toGray ? 1 : spp;
      const general = planesOut; // any number of channels, copied as they are
      const band = new Uint8Array(th * width * C);
      for (let ty = 0; ty < grid.rows; ty++) {
        const rowsHere = Math.min(th, height - ty * th);
        const blockH = page.tiled ? th : rowsHere;
        for (let tx = 0; tx < grid.columns; tx++) {
          const w = Math.min(tw, width - tx * tw);
          const blocks = [];
          for (let p = 0; p < planes; p++) {
            const i = p * grid.rows * grid.columns + ty * grid.columns + tx;
            const label = `${where} ${grid.kind} ${i} (row ${ty}, column ${tx}${planes > 1 ? `, plane ${p}` : ""})`;
            if (page.byteCounts[i] === 0) {
              blocks.push(null);
              continue;
            }
            let bytes;
            try {
              bytes = tiff.readBytes(page.offsets[i], page.byteCounts[i], label);
            } catch (error) {
              throw new ConvertError(error.message, { cause: error });
            }
            blocks.push(await decodeBlock(i, label, bytes, blockH, rowsHere));
          }
          if (general) {
            for (let y = 0; y < rowsHere; y++) {
              let o = (y * width + tx * tw) * C;
              for (let x = 0; x < w; x++) {
                for (let c = 0; c < C; c++) {
                  const blk = planes > 1 ? blocks[c] : blocks[0];
                  const v = blk ? (planes > 1 ? blk[y * tw + x] : blk[(y * tw + x) * spp + c]) : 0;
                  band[o++] = map ? map(v) : v;
                }
              }
            }
            continue;
          }
          for (let y = 0; y < rowsHere; y++) {
            let o = (y * width + tx * tw) * C;
            for (let x = 0; x < w; x++) {
              let r;
              let g;
              let b;
              if (planes > 1) {
                const at = y * tw + x;
                [r, g, b] = blocks.map((blk) => (blk ? blk[at] : 0));
              } else {
                const at = (y * tw + x) * spp;
                const blk = blocks[0];
                r = blk ? blk[at] : 0;
                g = spp === 3 && blk ? blk[at + 1] : r;
                b = spp === 3 && blk ? blk[at + 2] : r;
              }
              if (map) {
                r = map(r);
                g = map(g);
                b = map(b);
              }
              if (spp === 1) band[o++] = photometric === 0 ? 255 - r : r;
              else if (C === 1) band[o++] = Math.min(255, Math.round(0.299 * r + 0.587 * g + 0.114 * b));
              else {
                band[o++] = r;
                band[o++] = g;
                band[o++] = b;
              }
            }
          }
        }
        await onRows(band, rowsHere);
      }
      return [];
    },
  }, output, { ...sizeOptions, ...options }, started);
}
