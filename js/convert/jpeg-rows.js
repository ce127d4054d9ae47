// A single-file JPEG → JPEG OME-Zarr, streamed: a baseline (or extended sequential) JPEG is
// decoded a band of rows at a time by the core's row decoder (the whole codec's JpegRows,
// src/decode/rows.rs), pulled here as the streaming pyramid (./stream-convert.js →
// ./pyramid.js) takes them, so memory holds the compressed stream (once, in WebAssembly
// memory, where it is destuffed in place) and a chunk row per level, never the image.
//
// Why pulled: the decoder works synchronously, the pyramid asynchronously (it awaits the
// pool's encodes). A callback that pushed every band from inside the decoder could only
// queue them; `nextRows()` decodes the next band only when the pyramid has taken the last.
//
// What the row decoder leaves to a whole-image decode (progressive JPEGs, which need every
// coefficient until the last scan; components in separate scans) is decoded whole, as
// before, by decodeAsync() (the full decoder), if that fits: its memory (the image and the decoder's buffers, which the core states before
// decoding) must fit WebAssembly's (4 GiB in all, the image 2 GiB in one piece); a larger
// one is refused by name before anything is allocated for it. A stream whose entropy-coded
// data the row decoder stops at part-way (corrupt data, which the full decoder may read
// otherwise) is converted again from the start, decoded whole, under the same limit.
// Either way the colour rules and samples are decodeJpeg()'s (js/image-input.js), so the
// store is the one convert() writes from the whole decoded image.
import fs from "node:fs";
import { readFile } from "node:fs/promises";
import * as loader from "../loader.js";
import { ImageInputError, findJpegFrame, checkJpegFrame, jpegInputConfig } from "../image-input.js";
import { ConvertError } from "./core.js";
import { convertRows } from "./stream-convert.js";

/** Bytes read from the file at a time into WebAssembly memory. */
const PIECE = 4 << 20;
/** Rows handed to the pyramid at a time from a whole decoded image. */
const WHOLE_BAND_ROWS = 64;
/** WebAssembly's memory (wasm32): 4 GiB in all, and at most 2 GiB in one allocation. */
const WASM_MEMORY = 4 * 2 ** 30;
const ONE_PIECE = 2 ** 31 - 1;

/** The row decoder stopped part-way: convert again, decoding the stream whole. */
class Stopped extends Error {}

function describeBytes(n) {
  return n >= 2 ** 30 ? `${(n / 2 ** 30).toFixed(1)} GiB` : `${(n / 2 ** 20).toFixed(1)} MiB`;
}

/** Converts the JPEG `file` (convert()'s options), streamed where the core can. */
export async function convertJpegStream(file, output, options, started = performance.now()) {
  // a warning is reported once, should the conversion start again decoding whole
  const reported = new Set();
  const onWarning = options.onWarning;
  options = {
    ...options,
    onWarning: (w) => {
      if (reported.has(w)) return;
      reported.add(w);
      onWarning?.(w);
    },
  };
  let fd;
  let size;
  try {
    fd = fs.openSync(file, "r");
    size = fs.fstatSync(fd).size;
    const frame = findJpegFrame((at, n) => {
      const out = new Uint8Array(n);
      return out.subarray(0, fs.readSync(fd, out, 0, n, at));
    });
    checkJpegFrame(frame, file);
    if (size >= WASM_MEMORY) {
      throw new ImageInputError(`${file} is ${describeBytes(size)}; the compressed file is held in WebAssembly memory, which holds 4 GiB`);
    }
    const { config, shape } = jpegInputConfig(frame);
    const source = { file, height: frame.height, width: frame.width, channels: frame.components };
    let rows;
    let whole;
    try {
      rows = loader.jpegRows(size); // (a file WebAssembly's memory cannot hold is refused here)
      const buffer = new Uint8Array(Math.min(PIECE, size)); // (one, reused: not a file's worth of garbage)
      for (let at = 0; at < size; at += PIECE) {
        const piece = buffer.subarray(0, Math.min(PIECE, size - at));
        for (let got = 0; got < piece.length; ) {
          const n = fs.readSync(fd, piece, got, piece.length - got, at + got);
          if (n === 0) throw new ImageInputError(`${file}: the file got shorter while it was read (${at + got} of ${size} bytes)`);
          got += n;
        }
        rows.append(piece);
      }
      fs.closeSync(fd);
      fd = undefined;
      whole = rows.start(config, shape);
    } catch (error) {
      rows?.free();
      throw decodeError(error, file);
    }
    if (whole === null) {
      try {
        return await convertRows({ ...source, readRows: (onRows) => readBands(rows, file, source, onRows) }, output, options, started);
      } catch (error) {
        if (!(error instanceof Stopped)) throw error;
        // (a sequential stream: the full decoder needs the image and a few rows of MCUs,
        // and refuses by name, before decoding, what it cannot hold)
        whole = { reason: error.message, bytes: shape.reduce((a, b) => a * b, 1) };
      } finally {
        rows.free();
      }
    } else {
      rows.free();
    }
    checkWholeFits(whole, file, frame, shape, size);
    return await convertRows(
      { ...source, readRows: (onRows) => readWhole(file, config, shape, source, onRows), summary: { streamed: false } },
      output, options, started,
    );
  } catch (error) {
    if (error instanceof ImageInputError) throw new ConvertError(error.message, { cause: error });
    throw error;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** A codec error of the decode as decodeJpeg() words it; others as they are. */
function decodeError(error, file) {
  if (error instanceof ImageInputError || error instanceof ConvertError) return error;
  if (typeof error?.kind === "string" && !error?.code) {
    return new ImageInputError(`${file}: cannot decode JPEG: ${error?.message ?? error}`, { cause: error });
  }
  return error;
}

/** The rows from the row decoder, band by band, each taken by the pyramid before the next is decoded. */
async function readBands(rows, file, { width, channels }, onRows) {
  const rowBytes = width * channels;
  for (;;) {
    let band;
    try {
      band = rows.nextRows();
    } catch (error) {
      if (error?.kind === "NeedsFullDecoder") {
        throw new Stopped(error.message.replace(/^jpeg: /, ""));
      }
      throw decodeError(error, file);
    }
    if (band === undefined) break;
    const n = band.length / rowBytes;
    await onRows(band, n);
  }
  return [];
}

/** Refuses, by name and before anything is allocated for it, a whole decode that cannot fit. */
function checkWholeFits(whole, file, frame, shape, size) {
  const samples = shape.reduce((a, b) => a * b, 1);
  if (samples <= ONE_PIECE && whole.bytes + size <= WASM_MEMORY) return;
  const what = /progressive/.test(whole.reason) ? "is a progressive JPEG, which is decoded whole" : `is decoded whole (${whole.reason})`;
  throw new ConvertError(
    `${file} ${what}: its ${frame.height} × ${frame.width} (height × width) image needs ${describeBytes(whole.bytes)} of ` +
      `WebAssembly memory beside the ${describeBytes(size)} file, more than the 4 GiB there is (the image at most 2 GiB). ` +
      "Baseline JPEGs are converted a band of rows at a time: make it one first, e.g. losslessly with libjpeg's " +
      `jpegtran (jpegtran -copy all ${file} > baseline.jpg)`,
  );
}

/** The rows of the whole decoded image (decodeAsync(), as decodeJpeg()), a band at a time. */
async function readWhole(file, config, shape, { width, channels, height }, onRows) {
  let bytes;
  try {
    bytes = await readFile(file);
  } catch (error) {
    throw new ImageInputError(`cannot read ${file}: ${error?.message}`, { cause: error });
  }
  let data;
  try {
    data = await loader.decodeAsync(config, new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), shape);
  } catch (error) {
    throw new ImageInputError(`${file}: cannot decode JPEG: ${error?.message ?? error}`, { cause: error });
  }
  bytes = null;
  const rowBytes = width * channels;
  for (let y = 0; y < height; y += WHOLE_BAND_ROWS) {
    const n = Math.min(WHOLE_BAND_ROWS, height - y);
    await onRows(data.subarray(y * rowBytes, (y + n) * rowBytes), n);
  }
  return [];
}
