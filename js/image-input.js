// Reads an image file (PNG or JPEG) into interleaved 8-bit samples for the converter:
// `{ data: Uint8Array, height, width, channels: 1 | 3, format, warnings }`, C order
// (y, x, channel). PNG goes through pngjs (an npm package, imported only when needed),
// JPEG through this package's own decoder (baseline, extended sequential and progressive;
// grayscale, YCbCr with any sampling it decodes, and RGB, colour space from the markers).
//
// Accepted: 8-bit (or lower) grayscale, grayscale+alpha, RGB, RGBA and palette images.
// Alpha is dropped with a warning. 16-bit PNGs are refused: the jpeg codec stores uint8.
import { readFile } from "node:fs/promises";

/** An input the converter refuses, with a message meant for the user. */
export class ImageInputError extends Error {
  constructor(message, options) {
    super(message, options);
    this.name = "ImageInputError";
  }
}

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

function startsWith(bytes, prefix) {
  return prefix.every((b, i) => bytes[i] === b);
}

/** The format a file's first bytes announce: "png", "jpeg", "tiff" (TIFF or BigTIFF, either byte order) or null. */
export function sniffFormat(bytes) {
  if (bytes.length >= 8 && startsWith(bytes, PNG_SIGNATURE)) return "png";
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return "jpeg";
  if (bytes.length >= 4) {
    const le = bytes[0] === 0x49 && bytes[1] === 0x49;
    const be = bytes[0] === 0x4d && bytes[1] === 0x4d;
    const magic = le ? bytes[2] | (bytes[3] << 8) : (bytes[2] << 8) | bytes[3];
    if ((le || be) && (magic === 42 || magic === 43)) return "tiff";
  }
  return null;
}

/** Reads and decodes an image file. Throws ImageInputError for anything it cannot convert. */
export async function readImageFile(file) {
  let bytes;
  try {
    bytes = await readFile(file);
  } catch (error) {
    const reason = error?.code === "ENOENT" ? "no such file" : error?.code === "EISDIR" ? "it is a directory" : error?.message;
    throw new ImageInputError(`cannot read ${file}: ${reason}`, { cause: error });
  }
  return decodeImage(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), file);
}

/** Decodes PNG or JPEG bytes (`name` only labels messages). */
export async function decodeImage(bytes, name = "image") {
  const format = sniffFormat(bytes);
  if (format === "tiff") {
    throw new ImageInputError(`${name} is a TIFF: convert() reads TIFF files in place, tile by tile (zarr-jpeg convert ${name} out.zarr)`);
  }
  if (format !== "png" && format !== "jpeg") {
    throw new ImageInputError(`${name} is neither a PNG, a JPEG nor a TIFF file (its first bytes are not a PNG, JPEG or TIFF signature)`);
  }
  const image = await (format === "png" ? decodePng(bytes, name) : decodeJpeg(bytes, name));
  checkSize(image.width, image.height, name);
  return image;
}

// A PNG whose IHDR says 0 pixels wide or high (the PNG spec forbids it), or a JPEG frame of 0.
function checkSize(width, height, name) {
  if (!(width >= 1 && height >= 1)) {
    throw new ImageInputError(`${name}: the image is ${width} × ${height} pixels (width × height); it needs at least 1 × 1`);
  }
}

const PNG_COLOR_TYPES = { 0: "grayscale", 2: "RGB", 3: "palette", 4: "grayscale+alpha", 6: "RGBA" };
/** The largest PNG read whole (interlaced, or 1/2/4-bit): 64 Mi pixels, about 450 MB while read. */
const MAX_WHOLE_PNG_PIXELS = 2 ** 26;

async function decodePng(bytes, name) {
  if (bytes.length < 33) throw new ImageInputError(`${name}: truncated PNG (no IHDR chunk)`);
  // IHDR is always the first chunk: width(4) height(4) bit depth(1) colour type(1) …
  const bitDepth = bytes[24];
  const colorType = bytes[25];
  if (!(colorType in PNG_COLOR_TYPES)) throw new ImageInputError(`${name}: invalid PNG colour type ${colorType}`);
  // Before pngjs: it "decodes" 0-pixel rows from uninitialised memory (random results).
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  checkSize(view.getUint32(16), view.getUint32(20), name);
  if (bitDepth === 16) {
    throw new ImageInputError(
      `${name} is a 16-bit ${PNG_COLOR_TYPES[colorType]} PNG; the jpeg codec stores 8-bit (uint8) samples only. ` +
        "An interlaced 16-bit PNG is not read (a non-interlaced one converts with --rescale): convert it to 8 bits first, " +
          "e.g. with ImageMagick: magick in.png -depth 8 out.png",
    );
  }
  // Read whole (pngjs: RGBA, then our copy): about 7 bytes a pixel. Past this bound the
  // streaming reader's cases (8/16-bit, not interlaced) are the way, so refuse before allocating.
  const pixels = view.getUint32(16) * view.getUint32(20);
  if (pixels > MAX_WHOLE_PNG_PIXELS) {
    throw new ImageInputError(
      `${name}: an interlaced or 1/2/4-bit PNG is read whole, and this one has ${(pixels / 1e6).toFixed(0)} megapixels ` +
        `(more than ${MAX_WHOLE_PNG_PIXELS / 2 ** 20} Mi, about ${Math.ceil((pixels * 7) / 2 ** 30)} GiB to hold): ` +
        "save it as an 8-bit non-interlaced PNG (streamed a band of rows at a time), e.g. with libvips: vips copy in.png out.png[interlace=false]",
    );
  }
  const { PNG } = await import("pngjs");
  let png;
  try {
    png = PNG.sync.read(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  } catch (error) {
    throw new ImageInputError(`${name}: cannot decode PNG: ${error?.message ?? error}`, { cause: error });
  }
  const { width, height, data: rgba } = png;
  const gray = colorType === 0 || colorType === 4;
  const hasAlpha = colorType === 4 || colorType === 6 || (colorType === 3 && hasTransparency(bytes));
  const channels = gray ? 1 : 3;
  const data = new Uint8Array(width * height * channels);
  let opaque = true;
  for (let i = 0, o = 0; i < rgba.length; i += 4) {
    if (rgba[i + 3] !== 255) opaque = false;
    data[o++] = rgba[i];
    if (!gray) {
      data[o++] = rgba[i + 1];
      data[o++] = rgba[i + 2];
    }
  }
  const warnings = [];
  if (hasAlpha) {
    warnings.push(
      `${name} has an alpha channel (${PNG_COLOR_TYPES[colorType]}); JPEG has none, so alpha is dropped` +
        (opaque ? " (every pixel was opaque)" : " — transparent pixels keep their colour values, not a background"),
    );
  }
  return { data, height, width, channels, format: "png", warnings };
}

// A palette PNG is transparent when it carries a tRNS chunk.
function hasTransparency(bytes) {
  for (let at = 8; at + 8 <= bytes.length; ) {
    const length = (bytes[at] << 24) | (bytes[at + 1] << 16) | (bytes[at + 2] << 8) | bytes[at + 3];
    const type = String.fromCharCode(bytes[at + 4], bytes[at + 5], bytes[at + 6], bytes[at + 7]);
    if (type === "tRNS") return true;
    if (type === "IDAT" || type === "IEND" || length < 0) return false;
    at += 12 + length;
  }
  return false;
}

/** The component count and precision from a JPEG's frame header (SOFn), or null. */
export function jpegFrameInfo(bytes) {
  return findJpegFrame((at, n) => bytes.subarray(at, at + n));
}

/**
 * jpegFrameInfo() of a stream read through `read(at, n)` (up to n bytes at offset at; fewer
 * at the end): the segments before the frame header are stepped over, not read.
 */
export function findJpegFrame(read) {
  let at = 2;
  for (;;) {
    const head = read(at, 10);
    if (head.length < 4) return null;
    if (head[0] !== 0xff) return null;
    const marker = head[1];
    if (marker === 0xff) {
      at++;
      continue;
    }
    const length = (head[2] << 8) | head[3];
    const isSof = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
    if (isSof && head.length >= 10) {
      return {
        precision: head[4],
        height: (head[5] << 8) | head[6],
        width: (head[7] << 8) | head[8],
        components: head[9],
      };
    }
    if (marker === 0xda) return null;
    at += 2 + length;
  }
}

/**
 * The checks of a JPEG's frame (jpegFrameInfo()) before it is decoded, whole or in bands:
 * 8-bit, 1 or 3 components, at least 1 × 1. Throws ImageInputError naming `name`.
 */
export function checkJpegFrame(frame, name) {
  if (!frame) throw new ImageInputError(`${name}: cannot find a JPEG frame header (truncated or not a JPEG)`);
  if (frame.precision !== 8) {
    throw new ImageInputError(`${name} is a ${frame.precision}-bit JPEG; the jpeg codec stores 8-bit (uint8) samples only`);
  }
  if (frame.components !== 1 && frame.components !== 3) {
    throw new ImageInputError(`${name} has ${frame.components} colour components (CMYK?); only grayscale and colour JPEGs are supported`);
  }
  checkSize(frame.width, frame.height, name);
}

/**
 * The configuration and shape a JPEG input is decoded with. This package's decoder reads
 * the stored colour space from the markers (an RGB JPEG — Adobe transform 0, or ids R,G,B
 * without JFIF — is not YCbCr-converted), and rejects by name what it cannot honour (YCCK /
 * unknown Adobe transforms, arithmetic coding, …) instead of returning wrongly converted
 * samples. `quality`, `encoded_color_space` and `subsampling` do not affect decoding;
 * decoded_color_space rgb converts whatever the stream stores to RGB.
 */
export function jpegInputConfig({ height, width, components }) {
  return components === 1
    ? { config: { quality: 95, encoded_color_space: "grayscale" }, shape: [height, width] }
    : { config: { quality: 95, encoded_color_space: "rgb" }, shape: [height, width, 3] };
}

async function decodeJpeg(bytes, name) {
  const frame = jpegFrameInfo(bytes);
  checkJpegFrame(frame, name);
  const { height, width, components: channels } = frame;
  const { config, shape } = jpegInputConfig(frame);
  // decodeAsync loads the full decoder for progressive streams.
  const { decodeAsync } = await import("./loader.js");
  let data;
  try {
    data = await decodeAsync(config, bytes, shape);
  } catch (error) {
    throw new ImageInputError(`${name}: cannot decode JPEG: ${error?.message ?? error}`, { cause: error });
  }
  return { data, height, width, channels, format: "jpeg", warnings: [] };
}
