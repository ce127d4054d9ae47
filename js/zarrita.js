// The jpeg codec in zarrita.js's shape, and register() that adds it (with `reshape` and a
// decode-only codec for Zarr v2 data written by imagecodecs) to a zarrita registry.
import { init, initDecoder, initFullDecoder, needsFullDecoder, encode, decode, validateConfig, base64ToBytes } from "./loader.js";
import { describe, encodeOptionsProblem, quote, readProblem } from "./options.js";
import { ReshapeCodec, chunkLengthProblem, chunkMetaProblem, codecPosition, contiguousData, layoutAt, stridesFor } from "./reshape.js";
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

// --- Zarr v2: imagecodecs' numcodecs `Jpeg` compressor (id "imagecodecs_jpeg") ---------

const SOI = [0xff, 0xd8];
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
 * subsampling, optimize, …) only affect encoding and are ignored.
 */
function readImagecodecsConfiguration(configuration) {
  if (configuration === null || typeof configuration !== "object" || Array.isArray(configuration)) {
    throw codecError("InvalidConfiguration", `imagecodecs_jpeg: the configuration must be an object, got ${Array.isArray(configuration) ? "an array" : describe(configuration)}`);
  }
  try {
    const { lossless, bitspersample, colorspace_data, outcolorspace, tables, header } = configuration;
    return { lossless, bitspersample, colorspace_data, outcolorspace, tables, header };
  } catch (error) {
    throw codecError("InvalidConfiguration", `imagecodecs_jpeg: ${readProblem("the configuration", error)}`);
  }
}

/** imagecodecs colour-space names/J_COLOR_SPACE numbers → the jpeg codec's names. */
function colorSpaceName(value, field) {
  if (value == null) return null;
  if (typeof value !== "string" && typeof value !== "number") {
    throw codecError("InvalidConfiguration", `imagecodecs_jpeg: ${field} must be a colour space name or number, got ${describe(value)}`);
  }
  const key = String(value).toUpperCase();
  const names = { 1: "grayscale", GRAY: "grayscale", GRAYSCALE: "grayscale", MINISBLACK: "grayscale", L: "grayscale",
    2: "rgb", RGB: "rgb", 3: "ycbcr", YCBCR: "ycbcr", YCC: "ycbcr" };
  if (!(key in names)) {
    throw codecError("InvalidConfiguration", `imagecodecs_jpeg: ${field} ${JSON.stringify(value)} is not supported (grayscale, RGB or YCbCr)`);
  }
  return names[key];
}

/**
 * Decode-only codec for Zarr v2 arrays compressed with imagecodecs' `Jpeg`
 * (`{"id": "imagecodecs_jpeg", level, colorspace_data, colorspace_jpeg, subsampling,
 * tables, header, lossless, bitspersample, …}`). Encoder-only fields (level, subsampling,
 * optimize, smoothing) do not affect decoding and are ignored.
 */
export function makeImagecodecsJpegCodec(pool = null) {
  return class ImagecodecsJpegCodec {
    kind = "bytes_to_bytes";
    #config;
    #shape;
    #tables;
    #header;

    constructor(configuration = {}, meta) {
      checkMeta(meta, "imagecodecs_jpeg: ");
      const fields = readImagecodecsConfiguration(configuration);
      if (fields.lossless) {
        throw codecError("InvalidConfiguration", "imagecodecs_jpeg: lossless JPEG is not supported (baseline and progressive only)");
      }
      if (fields.bitspersample != null && fields.bitspersample !== 8) {
        throw codecError("InvalidConfiguration", `imagecodecs_jpeg: bitspersample ${describe(fields.bitspersample)} is not supported (8 only)`);
      }
      // imagecodecs squeezes the chunk to (H, W) or (H, W, C) when encoding.
      const shape = meta.shape.filter((d) => d !== 1);
      while (shape.length < 2) shape.unshift(1);
      const color = shape.length === 3 && shape[2] === 3;
      const data = colorSpaceName(fields.colorspace_data ?? fields.outcolorspace, "colorspace_data");
      const decoded = color ? (data === "ycbcr" ? "ycbcr" : "rgb") : "grayscale";
      this.#config = validateConfig(
        color
          ? { quality: 95, encoded_color_space: "ycbcr", decoded_color_space: decoded, subsampling: [[1, 1], [1, 1], [1, 1]] }
          : { quality: 95, encoded_color_space: "grayscale" },
      );
      this.#shape = shape;
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
      if (this.#tables && this.#tables.length > 4) {
        // An abbreviated stream: splice the tables-only stream's segments in after SOI.
        stream = concat([SOI, this.#tables.subarray(2, this.#tables.length - 2), stream.subarray(2)]);
      }
      return decodeWith(pool, this.#config, stream, this.#shape);
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
