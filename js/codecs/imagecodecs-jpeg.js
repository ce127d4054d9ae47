// imagecodecs' `Jpeg` codec (id/name "imagecodecs_jpeg"), decode-only. Written by
// tifffile's references to TIFF pages (Zarr v2 compressor), by numcodecs (Zarr v2), by
// imagecodecs' own Zarr v3 codec (an array → bytes codec) and by virtual-tiff (a bytes →
// bytes codec after `bytes`). Decoding follows imagecodecs' jpeg8_decode, i.e.
// libjpeg's: `colorspace_jpeg` states the stream's colour space, overriding its markers
// (tifffile sets it to RGB for Aperio-style tiles, whose markers would say YCbCr);
// `colorspace_data` the output's, which defaults to `colorspace_jpeg` and, when neither is
// given, to RGB or grayscale by component count, the stream's markers deciding the rest.
import { base64ToBytes, completeTileStream, validateConfig } from "../loader.js";
import { describe, readProblem } from "../options.js";
import { codecPosition, layoutAt, show, stridesFor } from "../layout.js";
import { concat } from "../bytes.js";
import { codecError } from "../errors.js";
import { checkMeta, decodeWith } from "./jpeg.js";

const CODEC = "imagecodecs_jpeg";

const EOI = [0xff, 0xd9];

/** The core's error for this codec's chunk, under this codec's name (docs/api.md, "Errors"). */
function ownError(error) {
  if (error?.kind && typeof error.message === "string") error.message = error.message.replace(/^jpeg: /, `${CODEC}: `);
  return error;
}

function base64Bytes(value, field) {
  if (value == null) return null;
  if (typeof value !== "string") {
    throw codecError(CODEC, "InvalidConfiguration", `${field} must be a base64 string`);
  }
  try {
    return base64ToBytes(value);
  } catch (error) {
    // atob's DOMException ("Invalid character") would not say which field
    throw codecError(CODEC, "InvalidConfiguration", `${field} is not valid base64 (${error?.message ?? error})`);
  }
}

/**
 * The members of an imagecodecs_jpeg configuration that decoding reads, each read once (a
 * getter or Proxy that throws is reported, not passed on). Other members (level,
 * subsampling, optimize, smoothing, predictor, squeeze) only affect encoding and are ignored.
 */
function readImagecodecsConfiguration(configuration) {
  if (configuration === null || typeof configuration !== "object" || Array.isArray(configuration)) {
    throw codecError(CODEC, "InvalidConfiguration", `the configuration must be an object, got ${Array.isArray(configuration) ? "an array" : describe(configuration)}`);
  }
  try {
    const { lossless, bitspersample, colorspace_jpeg, colorspace_data, outcolorspace, tables, header, fancyupsampling } = configuration;
    return { lossless, bitspersample, colorspace_jpeg, colorspace_data, outcolorspace, tables, header, fancyupsampling };
  } catch (error) {
    throw codecError(CODEC, "InvalidConfiguration", readProblem("the configuration", error));
  }
}

// imagecodecs' colour-space names (matched in upper case, as it does) and libjpeg's
// J_COLOR_SPACE numbers → the jpeg codec's names. JCS_EXT_RGB (6) is RGB as an output.
const COLOR_SPACES = new Map([
  ["UNKNOWN", null], [0, null],
  ["GRAY", "grayscale"], ["GRAYSCALE", "grayscale"], ["MINISBLACK", "grayscale"], ["MINISWHITE", "grayscale"], [1, "grayscale"],
  ["RGB", "rgb"], [2, "rgb"], [6, "rgb"],
  ["YCBCR", "ycbcr"], [3, "ycbcr"],
]);
const FOUR_COMPONENT = new Set(["CMYK", "SEPARATED", "YCCK", "RGBA", 4, 5, ...Array.from({ length: 10 }, (_, i) => i + 7)]);

/** A colour-space field → "grayscale" | "rgb" | "ycbcr" | null (unset), or an Error naming it. */
function colorSpaceName(value, field) {
  if (value == null) return null;
  if (typeof value !== "string" && !Number.isInteger(value)) {
    throw codecError(CODEC, "InvalidConfiguration", `${field} must be a colour space name or libjpeg J_COLOR_SPACE number, got ${describe(value)}`);
  }
  const key = typeof value === "string" ? value.toUpperCase() : value;
  if (COLOR_SPACES.has(key)) return COLOR_SPACES.get(key);
  // `(field === "colorspace_jpeg" && key === 6)`: JCS_EXT_RGB is an output layout, not a stream's colour space
  const what = FOUR_COMPONENT.has(key)
    ? "CMYK, YCCK and four-component outputs cannot be decoded to the 1 or 3 components of a chunk"
    : "it is not a colour space this decoder can honour (grayscale, RGB or YCbCr), and decoding by the stream's markers instead could return wrong colours";
  throw codecError(CODEC, "InvalidConfiguration", `${field} ${JSON.stringify(value)} is not supported: ${what}`);
}

/** imagecodecs squeezes a chunk to (H, W) or (H, W, C) for its stream. */
function squeezed(shape) {
  const out = shape.filter((d) => d !== 1);
  while (out.length < 2) out.unshift(1);
  return out;
}

// Codecs zarrita or writers put before imagecodecs_jpeg that leave it an array → bytes
// codec; after anything else (`bytes`, ChunkyCodec, …) it is a bytes → bytes one.
const ARRAY_TO_ARRAY = new Set(["transpose", "reshape"]);

/**
 * Decode-only codec for data compressed with imagecodecs' `Jpeg` (`{"id":
 * "imagecodecs_jpeg", level, colorspace_data, colorspace_jpeg, subsampling, tables,
 * header, lossless, bitspersample, fancyupsampling, …}`): an array → bytes codec where it
 * comes first in the codec list (imagecodecs' Zarr v3 codec), else bytes → bytes (Zarr v2
 * compressors, virtual-tiff). A configuration that cannot be honoured exactly (CMYK/YCCK,
 * a colour space whose component count the chunk does not have, box-filtered chroma) is
 * refused by name rather than decoded to other values.
 */
export function makeImagecodecsJpegCodec(pool = null) {
  return class ImagecodecsJpegCodec {
    kind;
    #config;
    #imageShape;
    #zarritaShape;
    #strides;
    #tables;
    #header;
    #jpegColorSpace;

    constructor(configuration = {}, meta) {
      checkMeta(meta, CODEC);
      const fields = readImagecodecsConfiguration(configuration);
      if (fields.lossless) {
        throw codecError(CODEC, "InvalidConfiguration", "lossless JPEG is not supported (baseline and progressive only)");
      }
      if (fields.bitspersample != null && fields.bitspersample !== 8) {
        throw codecError(CODEC, "InvalidConfiguration", `bitspersample ${describe(fields.bitspersample)} is not supported (8 only)`);
      }
      const position = codecPosition(meta, configuration, "imagecodecs_jpeg");
      const before = (meta.codecs ?? []).slice(0, position);
      this.kind = before.every((c) => ARRAY_TO_ARRAY.has(c?.name)) && meta.codecs ? "array_to_bytes" : "bytes_to_bytes";
      let layout = null;
      if (this.kind === "array_to_bytes") {
        layout = layoutAt(meta, position);
        this.#zarritaShape = meta.shape.slice();
        this.#strides = stridesFor(layout);
      }
      const shape = squeezed(layout ? layout.shape : meta.shape);
      const color = shape.length === 3 && shape[2] === 3;
      if (shape.length > 3 || (shape.length === 3 && !color)) {
        throw codecError(CODEC, "InvalidShape", `a chunk of shape ${show(meta.shape)} is not one JPEG image of 1 or 3 components`);
      }
      this.#jpegColorSpace = colorSpaceName(fields.colorspace_jpeg, "colorspace_jpeg");
      const data = colorSpaceName(fields.colorspace_data ?? fields.outcolorspace, fields.colorspace_data != null ? "colorspace_data" : "outcolorspace");
      const decoded = data ?? this.#jpegColorSpace ?? (color ? "rgb" : "grayscale");
      if ((decoded === "grayscale") === color) {
        throw codecError(CODEC, "InvalidConfiguration",
          `the output colour space ${decoded} has ${color ? "1 component" : "3 components"} but the chunk shape ${show(meta.shape)} holds ${color ? 3 : 1}`,
        );
      }
      if (decoded === "ycbcr" && this.#jpegColorSpace && this.#jpegColorSpace !== "ycbcr") {
        throw codecError(CODEC, "InvalidConfiguration",
          `colorspace_jpeg ${this.#jpegColorSpace === "rgb" ? "RGB" : "grayscale"} cannot be decoded to YCbCr (libjpeg, and so imagecodecs, converts only YCbCr streams to YCbCr)`,
        );
      }
      if (fields.fancyupsampling === false) {
        throw codecError(CODEC, "InvalidConfiguration", "fancyupsampling false (box-filtered chroma upsampling) is not supported; this decoder upsamples chroma as libjpeg does by default");
      }
      this.#config = validateConfig(
        color
          ? { quality: 95, encoded_color_space: "ycbcr", decoded_color_space: decoded, subsampling: [[1, 1], [1, 1], [1, 1]] }
          : { quality: 95, encoded_color_space: "grayscale" },
      );
      this.#imageShape = shape;
      this.#tables = base64Bytes(fields.tables, "tables");
      this.#header = base64Bytes(fields.header, "header");
    }

    static fromConfig(configuration, meta) {
      return new ImagecodecsJpegCodec(configuration, meta);
    }

    encode() {
      throw codecError(CODEC, "UnsupportedStream", "decode-only here; write with the Zarr v3 jpeg codec");
    }

    decode(bytes) {
      let stream = bytes;
      if (this.#header) stream = concat([this.#header, stream, EOI]);
      // The page's tables spliced in and the stated colour space made explicit in the
      // stream's markers, so that the workers of a pool decode it by the same rule.
      let result;
      try {
        if (this.#tables || this.#jpegColorSpace) stream = completeTileStream(stream, this.#tables, this.#jpegColorSpace);
        result = decodeWith(pool, this.#config, stream, this.#imageShape);
      } catch (error) {
        throw ownError(error);
      }
      const wrap = this.kind === "bytes_to_bytes" ? (data) => data : (data) => ({ data, shape: this.#zarritaShape.slice(), stride: this.#strides.slice() });
      return result instanceof Promise ? result.then(wrap, (error) => Promise.reject(ownError(error))) : wrap(result);
    }
  };
}
