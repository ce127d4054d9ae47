// The Zarr v3 `jpeg` codec in zarrita.js's shape: an array → bytes codec, decoding and
// encoding on the calling thread or in a codec pool.
import { init, initFullDecoder, needsFullDecoder, encode, decode, validateConfig } from "../loader.js";
import { codecError } from "../errors.js";
import { describe, readProblem } from "../options.js";
import { chunkLengthProblem, chunkMetaProblem, codecPosition, contiguousData, layoutAt, stridesFor } from "../layout.js";

const jpegError = (kind, message) => codecError("jpeg", kind, message);

// What fromConfig needs of zarrita's chunk metadata: an object with the chunk's shape, of uint8.
export function checkMeta(meta, codec = "jpeg") {
  const problem = chunkMetaProblem(meta);
  if (problem) throw codecError(codec, problem[0], problem[1]);
  let dataType;
  try {
    dataType = meta.dataType ?? meta.data_type;
  } catch (error) {
    throw codecError(codec, "InvalidConfiguration", readProblem("the chunk metadata", error));
  }
  if (dataType !== "uint8" && dataType !== "|u1") {
    throw codecError(
      codec,
      "InvalidConfiguration",
      `data type ${typeof dataType === "string" ? JSON.stringify(dataType) : describe(dataType)} is not supported; the ${codec} codec supports only uint8`,
    );
  }
}

/**
 * Decodes in the pool, or here: synchronously, except for a stream that needs the full
 * decoder before it is loaded, which loads it and resolves (zarrita awaits either).
 */
export function decodeWith(pool, config, bytes, shape) {
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
        throw jpegError("InvalidData", `invalid chunk data: chunk data must be a Uint8Array, got ${describe(chunk.data)}`);
      }
      const problem = chunkLengthProblem(chunk.data, this.#layout.shape);
      if (problem) throw jpegError("InvalidData", problem);
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
