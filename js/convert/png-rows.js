// A PNG read a band of rows at a time: chunks by positioned reads, IDAT data through Node's
// streaming zlib inflate (never the whole image in memory, as pngjs holds it), each row
// unfiltered (PNG spec §9: None, Sub, Up, Average, Paeth) against the one before.
//
// Handles 8- and 16-bit non-interlaced PNGs (grayscale, RGB, palette, grayscale+alpha,
// RGBA; 16-bit samples mapped to 8 bits through a rescale window); `streamablePng` says
// whether a file is one. Others (interlaced, 1/2/4-bit) go through the whole-image reader
// (js/image-input.js), which refuses 16-bit ones.
import fs from "node:fs";
import zlib from "node:zlib";
import { ImageInputError } from "../image-input.js";
import { rescaleMap } from "./core.js";

const SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const SAMPLES = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };
const READ = 1 << 20;

/** The IHDR of a PNG file: { width, height, bitDepth, colorType, interlace }, or null if not a PNG. */
export function pngHeader(file) {
  const fd = fs.openSync(file, "r");
  try {
    const head = new Uint8Array(33);
    if (fs.readSync(fd, head, 0, 33, 0) < 33 || !SIGNATURE.every((b, i) => head[i] === b)) return null;
    const view = new DataView(head.buffer);
    return { width: view.getUint32(16), height: view.getUint32(20), bitDepth: head[24], colorType: head[25], interlace: head[28] };
  } finally {
    fs.closeSync(fd);
  }
}

/** The file is a PNG this module streams. */
export function streamablePng(header) {
  const depth = header?.bitDepth === 8 || (header?.bitDepth === 16 && header.colorType !== 3);
  return header !== null && depth && header.interlace === 0 && header.colorType in SAMPLES &&
    header.width >= 1 && header.height >= 1;
}

/**
 * Reads the PNG's rows: calls `await onRows(rows, n)` with up to `batch` rows at a time of
 * `channels` (1 or 3; alpha dropped, palette expanded, grayscale kept) samples per pixel.
 * A 16-bit PNG's samples are mapped to 8 bits through `rescale` ({ min, max }: the window
 * mapped linearly to 0–255, as for 16-bit TIFFs). Resolves to { opaque, hadAlpha } once
 * every row has been delivered.
 */
export async function readPngRows(file, header, { toGray = false, batch = 16, rescale = null }, onRows) {
  const { width, colorType, bitDepth } = header;
  const inSamples = SAMPLES[colorType];
  const channels = toGray || colorType === 0 || colorType === 4 ? 1 : 3;
  const out = new Uint8Array(batch * width * channels);
  let outRows = 0;
  let opaque = true;
  const hasAlpha = inSamples === 2 || inSamples === 4;
  let row8 = null;
  let map = null;
  if (bitDepth === 16) {
    if (!rescale) throw new Error("internal: a 16-bit PNG needs a rescale window");
    row8 = new Uint8Array(width * inSamples);
    map = rescaleMap(rescale);
  }
  const { transparency } = await scanRows(file, header, async (row, y, palette) => {
    let samples = row;
    if (row8) {
      for (let i = 0, k = 0; i < row8.length; i++, k += 2) {
        const v = (row[k] << 8) | row[k + 1];
        const isAlpha = hasAlpha && i % inSamples === inSamples - 1;
        if (isAlpha && v !== 65535) opaque = false;
        row8[i] = isAlpha ? v >> 8 : map(v);
      }
      samples = row8;
    } else if (hasAlpha) {
      for (let i = inSamples - 1; i < samples.length; i += inSamples) if (samples[i] !== 255) opaque = false;
    }
    convertRow(samples, out, outRows * width * channels, width, colorType, channels, palette);
    outRows++;
    if (outRows === batch || y === header.height - 1) {
      await onRows(out, outRows);
      outRows = 0;
    }
  });
  return { opaque, hadAlpha: hasAlpha || (colorType === 3 && transparency), channels };
}

/** The least and greatest colour sample (alpha left out) of a 16-bit PNG: a pass over its rows. */
export async function pngSampleRange(file, header) {
  const inSamples = SAMPLES[header.colorType];
  const colour = inSamples === 2 || inSamples === 4 ? inSamples - 1 : inSamples;
  let min = 65535;
  let max = 0;
  await scanRows(file, header, (row) => {
    for (let i = 0, k = 0; k < row.length; i++, k += 2) {
      if (i % inSamples >= colour) continue;
      const v = (row[k] << 8) | row[k + 1];
      if (v < min) min = v;
      if (v > max) max = v;
    }
  });
  return { min, max };
}

/**
 * The PNG's rows in order, unfiltered: `await onRow(row, y, palette)` with the row's bytes as
 * stored (valid until the call returns). Resolves to { transparency } (a tRNS chunk seen).
 * An error thrown by onRow is passed on as it is.
 */
async function scanRows(file, header, onRow) {
  const { width, height, colorType, bitDepth } = header;
  const inSamples = SAMPLES[colorType];
  const bytesPerSample = bitDepth === 16 ? 2 : 1;
  const stride = width * inSamples * bytesPerSample;
  const fd = fs.openSync(file, "r");
  const size = fs.fstatSync(fd).size;
  const fail = (reason) => new ImageInputError(`${file}: ${reason}`);
  let palette = null;
  let transparency = false;
  try {
    // chunks up to the first IDAT
    let at = 8;
    const readAt = (pos, length) => {
      if (pos + length > size) throw fail(`truncated PNG: a chunk at byte ${pos} runs past the end of the file (${size} bytes)`);
      const out = new Uint8Array(length);
      fs.readSync(fd, out, 0, length, pos);
      return out;
    };
    const chunkHead = (pos) => {
      const h = readAt(pos, 8);
      const length = new DataView(h.buffer).getUint32(0);
      const type = String.fromCharCode(...h.subarray(4, 8));
      if (length > 2 ** 31 - 1 || pos + 12 + length > size) throw fail(`truncated PNG: chunk ${type} at byte ${pos} claims ${length} bytes past the end of the file`);
      return { length, type };
    };
    for (;;) {
      const { length, type } = chunkHead(at);
      if (type === "IDAT") break;
      if (type === "IEND") throw fail("the PNG has no image data (no IDAT chunk)");
      if (type === "PLTE") palette = readAt(at + 8, length);
      if (type === "tRNS") transparency = true;
      at += 12 + length;
    }
    if (colorType === 3 && !palette) throw fail("a palette PNG without a PLTE chunk");
    const inflate = zlib.createInflate();
    let inflateError = null;
    inflate.on("error", (error) => {
      inflateError = error;
    });
    // the producer: IDAT data into the inflater, with back-pressure
    const feeding = (async () => {
      let pos = at;
      for (;;) {
        const { length, type } = chunkHead(pos);
        if (type !== "IDAT") break;
        for (let off = 0; off < length; off += READ) {
          const piece = readAt(pos + 8 + off, Math.min(READ, length - off));
          if (!inflate.write(piece)) {
            await new Promise((resolve) => {
              const done = () => {
                inflate.off("drain", done);
                inflate.off("close", done);
                resolve();
              };
              inflate.on("drain", done);
              inflate.on("close", done);
            });
          }
          if (inflateError) return;
        }
        pos += 12 + length;
      }
      inflate.end();
    })();
    feeding.catch((error) => inflate.destroy(error));
    // the consumer: rows unfiltered as they complete
    let prev = new Uint8Array(stride);
    let cur = new Uint8Array(stride);
    let filter = -1;
    let filled = 0;
    let y = 0;
    let sinkError = null; // an error of onRow: passed on as it is
    const bpp = inSamples * bytesPerSample;
    try {
      for await (const piece of inflate) {
        let i = 0;
        while (i < piece.length && y < height) {
          if (filter < 0) {
            filter = piece[i++];
            if (filter > 4) throw fail(`corrupt PNG: row ${y} has filter type ${filter} (0–4 exist)`);
            continue;
          }
          const take = Math.min(stride - filled, piece.length - i);
          cur.set(piece.subarray(i, i + take), filled);
          filled += take;
          i += take;
          if (filled === stride) {
            unfilter(filter, cur, prev, bpp);
            try {
              await onRow(cur, y, palette);
            } catch (error) {
              sinkError = { error };
              throw error;
            }
            [prev, cur] = [cur, prev];
            filter = -1;
            filled = 0;
            y++;
          }
        }
        if (y === height) break;
      }
    } catch (error) {
      if (error instanceof ImageInputError || sinkError?.error === error) throw error;
      throw fail(`corrupt PNG image data at row ${y} of ${height} (zlib: ${error?.message ?? error})`);
    } finally {
      inflate.destroy();
    }
    await feeding.catch((error) => {
      throw error instanceof ImageInputError ? error : fail(`cannot read the PNG: ${error.message}`);
    });
    if (inflateError && y < height) throw fail(`corrupt PNG data (zlib: ${inflateError.message})`);
    if (y < height) throw fail(`truncated PNG: the image data ends after ${y} of ${height} rows`);
    return { transparency };
  } finally {
    fs.closeSync(fd);
  }
}

function unfilter(filter, cur, prev, bpp) {
  const n = cur.length;
  switch (filter) {
    case 0:
      return;
    case 1:
      for (let i = bpp; i < n; i++) cur[i] = (cur[i] + cur[i - bpp]) & 255;
      return;
    case 2:
      for (let i = 0; i < n; i++) cur[i] = (cur[i] + prev[i]) & 255;
      return;
    case 3:
      for (let i = 0; i < bpp; i++) cur[i] = (cur[i] + (prev[i] >> 1)) & 255;
      for (let i = bpp; i < n; i++) cur[i] = (cur[i] + ((cur[i - bpp] + prev[i]) >> 1)) & 255;
      return;
    case 4:
      for (let i = 0; i < bpp; i++) cur[i] = (cur[i] + prev[i]) & 255;
      for (let i = bpp; i < n; i++) {
        const a = cur[i - bpp];
        const b = prev[i];
        const c = prev[i - bpp];
        const p = a + b - c;
        const pa = Math.abs(p - a);
        const pb = Math.abs(p - b);
        const pc = Math.abs(p - c);
        cur[i] = (cur[i] + (pa <= pb && pa <= pc ? a : pb <= pc ? b : c)) & 255;
      }
      return;
  }
}

/** One unfiltered row → `channels` samples per pixel (alpha dropped, palette expanded, luma for toGray). */
function convertRow(row, out, o, width, colorType, channels, palette) {
  const luma = (r, g, b) => Math.min(255, Math.round(0.299 * r + 0.587 * g + 0.114 * b));
  switch (colorType) {
    case 0:
      out.set(row, o);
      return;
    case 4:
      for (let x = 0; x < width; x++) out[o + x] = row[2 * x];
      return;
    case 2:
    case 6: {
      const s = colorType === 2 ? 3 : 4;
      if (channels === 3 && s === 3) {
        out.set(row, o);
        return;
      }
      for (let x = 0, i = 0; x < width; x++, i += s) {
        if (channels === 3) {
          out[o++] = row[i];
          out[o++] = row[i + 1];
          out[o++] = row[i + 2];
        } else {
          out[o++] = luma(row[i], row[i + 1], row[i + 2]);
        }
      }
      return;
    }
    case 3:
      for (let x = 0; x < width; x++) {
        const p = 3 * row[x];
        // (an index past the palette: black, as libpng's default)
        const r = palette[p] ?? 0;
        const g = palette[p + 1] ?? 0;
        const b = palette[p + 2] ?? 0;
        if (channels === 3) {
          out[o++] = r;
          out[o++] = g;
          out[o++] = b;
        } else {
          out[o++] = luma(r, g, b);
        }
      }
      return;
  }
}
