// register(): the package's codecs into a zarrita registry, with an optional codec pool.
import { argumentError } from "./errors.js";
import { initDecoder } from "./loader.js";
import { describe, encodeOptionsProblem, quote } from "./options.js";
import { CodecPool, MAX_WORKERS } from "./pool.js";
import { JpegCodec, makeJpegCodec } from "./codecs/jpeg.js";
import { makeImagecodecsJpegCodec } from "./codecs/imagecodecs-jpeg.js";
import { ReshapeCodec } from "./codecs/reshape.js";

const REGISTER_OPTIONS = ["workers", "workerUrl", "encodeOptions"];

// A typo (`{ worker: 4 }`) would otherwise leave decoding on the main thread unnoticed.
// Returns the options' own members (read once: inherited ones, like unknown ones, are not
// options, and a getter is not asked twice).
function checkRegisterArguments(registry, options) {
  // has(), not only set(): zarrita's module itself has a set() (zarr.set), the registry is a Map
  if (typeof registry?.set !== "function" || typeof registry.has !== "function") {
    throw argumentError(`register() takes zarrita's codec registry (zarr.registry), got ${describe(registry)}`);
  }
  if (options === null || typeof options !== "object") {
    throw argumentError(`register()'s options must be an object, got ${describe(options)}`);
  }
  const own = {};
  for (const name of Object.keys(options)) {
    if (!REGISTER_OPTIONS.includes(name)) {
      throw argumentError(`unknown register() option ${quote(name)} (known: ${REGISTER_OPTIONS.join(", ")})`);
    }
    own[name] = options[name];
  }
  const { workers, workerUrl } = own;
  if (workers !== undefined && !(Number.isInteger(workers) && workers >= 0 && workers <= MAX_WORKERS)) {
    throw argumentError(`register()'s workers must be a whole number from 0 to ${MAX_WORKERS}, got ${describe(workers)}`, RangeError);
  }
  if (workerUrl !== undefined && !((typeof workerUrl === "string" && workerUrl !== "") || workerUrl instanceof URL)) {
    throw argumentError(`register()'s workerUrl must be the worker script's URL, a non-empty string or a URL, got ${workerUrl === "" ? "an empty string" : describe(workerUrl)}`,
    );
  }
  const problem = encodeOptionsProblem(own.encodeOptions);
  if (problem) throw argumentError(`register()'s encodeOptions: ${problem}`);
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
