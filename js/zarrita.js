// The jpeg codec in zarrita.js's shape, and register() that adds it (with `reshape` and a
// decode-only codec for Zarr v2 data written by imagecodecs) to a zarrita registry.
import { init, initDecoder, initFullDecoder, needsFullDecoder, encode, decode, validateConfig, base64ToBytes, completeTileStream } from "./loader.js";
import { describe, encodeOptionsProblem, quote, readProblem } from "./options.js";
import { ReshapeCodec, chunkLengthProblem, chunkMetaProblem, codecPosition, contiguousData, layoutAt, show, stridesFor } from "./reshape.js";
import { CodecPool } from "./pool.js";
import { concat } from "./bytes.js";

function codecError(kind, message) {
  const error = new Error(`jpeg: ${message}`);
  error.kind = kind;
  return error;
}

// What fromConfig needs of zarrita's chunk metadata: an object with the chunk's shape, of uint8.
function checkMeta(meta, prefix = "") {
  const problem = chunkMetaProblem(meta);
  if (problem) throw codecError(problem[0], prefix + problem[1]);
  let dataType;
  try {
    dataType = meta.dataType ?? meta.data_type;
  } catch (error) {
    throw codecError("InvalidConfiguration", prefix + readProblem("the chunk metadata", error));
  }
  if (dataType !== "uint8" && dataType !== "|u1") {
    throw codecError(
      "InvalidConfiguration",
      `${prefix}data type ${typeof dataType === "string" ? JSON.stringify(dataType) : describe(dataType)} is not supported; the jpeg codec supports only uint8`,
    );
  }
}

/**
 * Decodes in the pool, or here: synchronously, except for a stream that needs the full
 * decoder before it is loaded, which loads it and resolves (zarrita awaits either).
 */
function decodeWith(pool, config, bytes, shape) {
  if (pool) return pool.decode(config, bytes, shape);
  try {
    return decode(config, bytes, shape);
  } catch (error) {
    if (!needsFullDecoder(error)) throw error;
    return initFullDecoder().then(() => decode(config, bytes, shape));
  }
}

/**
 * Builds a JpegCodec class bound to a codec pool (or none: decoding and encoding on the
 * calling thread). With a pool, `decode` returns a Promise (zarrita awaits it), and `encode`
 * encodes in a worker. `encodeOptions` go to encode().
 */
export function makeJpegCodec(pool = null, encodeOptions = undefined) {
  return class JpegCodec {
    kind = "array_to_bytes";
    /** The normalised configuration. */
    configuration;
    #layout;
    #zarritaShape;

    constructor(configuration, meta) {
      checkMeta(meta);
      this.configuration = validateConfig(configuration);
      this.#zarritaShape = meta.shape.slice();
      this.#layout = layoutAt(meta, codecPosition(meta, configuration, "jpeg"));
    }

    static fromConfig(configuration, meta) {
      return new JpegCodec(configuration, meta);
    }

    /** The (H, W[, C]) shape the JPEG image has, after the array → array codecs before this one. */
    get imageShape() {
      return this.#layout.shape.slice();
    }

    /**
     * Resolves to the JPEG stream; loads the encoder on first use (zarrita awaits this).
     * With a pool, the chunk's data is read when a worker takes it: leave it unchanged until
     * the promise settles (zarrita does).
     */
    async encode(chunk) {
      if (!(chunk.data instanceof Uint8Array)) {
        // (worded as encode() words it: "got a Float32Array")
        throw codecError("InvalidData", `invalid chunk data: chunk data must be a Uint8Array, got ${describe(chunk.data)}`);
      }
      const problem = chunkLengthProblem(chunk.data, this.#layout.shape);
      if (problem) throw codecError("InvalidData", problem);
      const samples = contiguousData(chunk, this.#layout);
      // zarrita leaves a chunk's array alone once it has asked for its encoding, so the pool
      // copies it when a worker takes it, not while it waits (a write asks for every chunk
      // at once: copies taken at the call would double the write's memory).
      if (pool) return pool.encode(this.configuration, samples, this.#layout.shape, encodeOptions, { readWhenSent: true });
      await init();
      return encode(this.configuration, samples, this.#layout.shape, encodeOptions);
    }

    decode(bytes) {
      const result = decodeWith(pool, this.configuration, bytes, this.#layout.shape);
      const wrap = (data) => ({ data, shape: this.#zarritaShape.slice(), stride: stridesFor(this.#layout) });
      return result instanceof Promise ? result.then(wrap) : wrap(result);
    }
  };
}

/** The jpeg codec, decoding on the calling thread. Call `await init()` (or `initDecoder()`) before `fromConfig`. */
export const JpegCodec = makeJpegCodec();

// --- imagecodecs' `Jpeg` codec (id/name "imagecodecs_jpeg") ----------------------------
//
// Written by tifffile's references to TIFF pages (Zarr v2 compressor), by numcodecs (Zarr
// v2), by imagecodecs' own Zarr v3 codec (an array → bytes codec) and by virtual-tiff (a
// bytes → bytes codec after `bytes`). Decoding follows imagecodecs' jpeg8_decode, i.e.
// libjpeg's: `colorspace_jpeg` states the stream's colour space, overriding its markers
// (tifffile sets it to RGB for Aperio-style tiles, whose markers would say YCbCr);
// `colorspace_data` the output's, which defaults to `colorspace_jpeg` and, when neither is
// given, to RGB or grayscale by component count, the stream's markers deciding the rest.

const EOI = [0xff, 0xd9];

function base64Bytes(value, field) {
  if (value == null) return null;
  if (typeof value !== "string") {
    throw codecError("InvalidConfiguration", `imagecodecs_jpeg: ${field} must be a base64 string`);
  }
  try {
    return base64ToBytes(value);
  } catch (error) {
    // atob's DOMException ("Invalid character") would not say which field
    throw codecError("InvalidConfiguration", `imagecodecs_jpeg: ${field} is not valid base64 (${error?.message ?? error})`);
  }
}

/**
 * The members of an imagecodecs_jpeg configuration that decoding reads, each read once (a
 * getter or Proxy that throws is reported, not passed on). Other members (level,
 * subsampling, optimize, smoothing, predictor, squeeze) only affect encoding and are ignored.
 */
function readImagecodecsConfiguration(configuration) {
  if (configuration === null || typeof configuration !== "object" || Array.isArray(configuration)) {
    throw codecError("InvalidConfiguration", `imagecodecs_jpeg: the configuration must be an object, got ${Array.isArray(configuration) ? "an array" : describe(configuration)}`);
  }
  try {
    const { lossless, bitspersample, colorspace_jpeg, colorspace_data, outcolorspace, tables, header, fancyupsampling } = configuration;
    return { lossless, bitspersample, colorspace_jpeg, colorspace_data, outcolorspace, tables, header, fancyupsampling };
  } catch (error) {
    throw codecError("InvalidConfiguration", `imagecodecs_jpeg: ${readProblem("the configuration", error)}`);
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
    throw codecError("InvalidConfiguration", `imagecodecs_jpeg: ${field} must be a colour space name or libjpeg J_COLOR_SPACE number, got ${describe(value)}`);
  }
  const key = typeof value === "string" ? value.toUpperCase() : value;
  if (COLOR_SPACES.has(key)) return COLOR_SPACES.get(key);
  // `(field === "colorspace_jpeg" && key === 6)`: JCS_EXT_RGB is an output layout, not a stream's colour space
  const what = FOUR_COMPONENT.has(key)
    ? "CMYK, YCCK and four-component outputs cannot be decoded to the 1 or 3 components of a chunk"
    : "it is not a colour space this decoder can honour (grayscale, RGB or YCbCr), and decoding by the stream's markers instead could return wrong colours";
  throw codecError("InvalidConfiguration", `imagecodecs_jpeg: ${field} ${JSON.stringify(value)} is not supported: ${what}`);
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
      checkMeta(meta, "imagecodecs_jpeg: ");
      const fields = readImagecodecsConfiguration(configuration);
      if (fields.lossless) {
        throw codecError("InvalidConfiguration", "imagecodecs_jpeg: lossless JPEG is not supported (baseline and progressive only)");
      }
      if (fields.bitspersample != null && fields.bitspersample !== 8) {
        throw codecError("InvalidConfiguration", `imagecodecs_jpeg: bitspersample ${describe(fields.bitspersample)} is not supported (8 only)`);
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
        throw codecError("InvalidShape", `imagecodecs_jpeg: a chunk of shape ${show(meta.shape)} is not one JPEG image of 1 or 3 components`);
      }
      this.#jpegColorSpace = colorSpaceName(fields.colorspace_jpeg, "colorspace_jpeg");
      const data = colorSpaceName(fields.colorspace_data ?? fields.outcolorspace, fields.colorspace_data != null ? "colorspace_data" : "outcolorspace");
      const decoded = data ?? this.#jpegColorSpace ?? (color ? "rgb" : "grayscale");
      if ((decoded === "grayscale") === color) {
        throw codecError(
          "InvalidConfiguration",
          `imagecodecs_jpeg: the output colour space ${decoded} has ${color ? "1 component" : "3 components"} but the chunk shape ${show(meta.shape)} holds ${color ? 3 : 1}`,
        );
      }
      if (decoded === "ycbcr" && this.#jpegColorSpace && this.#jpegColorSpace !== "ycbcr") {
        throw codecError(
          "InvalidConfiguration",
          `imagecodecs_jpeg: colorspace_jpeg ${this.#jpegColorSpace === "rgb" ? "RGB" : "grayscale"} cannot be decoded to YCbCr (libjpeg, and so imagecodecs, converts only YCbCr streams to YCbCr)`,
        );
      }
      if (fields.fancyupsampling === false) {
        throw codecError("InvalidConfiguration", "imagecodecs_jpeg: fancyupsampling false (box-filtered chroma upsampling) is not supported; this decoder upsamples chroma as libjpeg does by default");
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
      throw codecError("UnsupportedStream", "imagecodecs_jpeg is decode-only here; write with the Zarr v3 jpeg codec");
    }

    decode(bytes) {
      let stream = bytes;
      if (this.#header) stream = concat([this.#header, stream, EOI]);
      // The page's tables spliced in and the stated colour space made explicit in the
      // stream's markers, so that the workers of a pool decode it by the same rule.
      if (this.#tables || this.#jpegColorSpace) {
        try {
          stream = completeTileStream(stream, this.#tables, this.#jpegColorSpace);
        } catch (error) {
          if (error?.kind) error.message = error.message.replace(/^jpeg: /, "jpeg: imagecodecs_jpeg: ");
          throw error;
        }
      }
      const result = decodeWith(pool, this.#config, stream, this.#imageShape);
      if (this.kind === "bytes_to_bytes") return result;
      const wrap = (data) => ({ data, shape: this.#zarritaShape.slice(), stride: this.#strides.slice() });
      return result instanceof Promise ? result.then(wrap) : wrap(result);
    }
  };
}

// --- register --------------------------------------------------------------------------

const REGISTER_OPTIONS = ["workers", "workerUrl", "encodeOptions"];
/** More workers than any machine has cores is a mistake (1e9 would try to start them all). */
const MAX_WORKERS = 256;

// A typo (`{ worker: 4 }`) would otherwise leave decoding on the main thread unnoticed.
// Returns the options' own members (read once: inherited ones, like unknown ones, are not
// options, and a getter is not asked twice).
function checkRegisterArguments(registry, options) {
  // has(), not only set(): zarrita's module itself has a set() (zarr.set), the registry is a Map
  if (typeof registry?.set !== "function" || typeof registry.has !== "function") {
    throw new TypeError(`jpeg: register() takes zarrita's codec registry (zarr.registry), got ${describe(registry)}`);
  }
  if (options === null || typeof options !== "object") {
    throw new TypeError(`jpeg: register()'s options must be an object, got ${describe(options)}`);
  }
  const own = {};
  for (const name of Object.keys(options)) {
    if (!REGISTER_OPTIONS.includes(name)) {
      throw new TypeError(`jpeg: unknown register() option ${quote(name)} (known: ${REGISTER_OPTIONS.join(", ")})`);
    }
    own[name] = options[name];
  }
  const { workers, workerUrl } = own;
  if (workers !== undefined && !(Number.isInteger(workers) && workers >= 0 && workers <= MAX_WORKERS)) {
    throw new RangeError(`jpeg: register()'s workers must be a whole number from 0 to ${MAX_WORKERS}, got ${describe(workers)}`);
  }
  if (workerUrl !== undefined && !((typeof workerUrl === "string" && workerUrl !== "") || workerUrl instanceof URL)) {
    throw new TypeError(
      `jpeg: register()'s workerUrl must be the worker script's URL, a non-empty string or a URL, got ${workerUrl === "" ? "an empty string" : describe(workerUrl)}`,
    );
  }
  const problem = encodeOptionsProblem(own.encodeOptions);
  if (problem) throw new TypeError(`jpeg: register()'s encodeOptions: ${problem}`);
  return own;
}

/**
 * Adds "jpeg", "reshape", "numcodecs.imagecodecs_jpeg" and "imagecodecs_jpeg" to a zarrita
 * registry (`zarr.registry`). The decode-only WebAssembly module loads on first use, the
 * full decoder when a chunk first needs it (e.g. a progressive stream), the encoder when
 * something is first written. With
 * `{ workers: n }` (n ≥ 1) the jpeg codec's chunks decode and encode in a pool of n Web
 * Workers / worker_threads, falling back to the calling thread where workers are unavailable. `encodeOptions` are
 * passed to encode() for every chunk the jpeg codec writes (e.g. `{ restartIntervals: false }`,
 * `{ trellis: true }`).
 * Returns a handle whose `close()` terminates the pool's workers. Options are the object's
 * own members. Throws (naming it) for something other than a registry, an unknown option,
 * a worker count outside 0–256, a `workerUrl` that is not a string or URL, or
 * `encodeOptions` that encode() would refuse (in its words: a typo is reported here, not by
 * the first chunk written).
 */
export function register(registry, options = {}) {
  const own = checkRegisterArguments(registry, options);
  const workers = own.workers ?? 0;
  const pool = workers > 0 ? new CodecPool({ size: workers, workerUrl: own.workerUrl }) : null;
  const Jpeg = pool || own.encodeOptions !== undefined ? makeJpegCodec(pool, own.encodeOptions) : JpegCodec;
  const Imagecodecs = makeImagecodecsJpegCodec(pool);
  // Viewers mostly read: the decoder loads with the codec, the encoder on first encode.
  const loaded = (Codec) => async () => {
    await initDecoder();
    return Codec;
  };
  registry.set("jpeg", loaded(Jpeg));
  registry.set("reshape", async () => ReshapeCodec);
  registry.set("numcodecs.imagecodecs_jpeg", loaded(Imagecodecs));
  registry.set("imagecodecs_jpeg", loaded(Imagecodecs));
  return {
    pool,
    async close() {
      await pool?.close();
    },
  };
}

export { ReshapeCodec };
