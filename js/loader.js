// Loads the codec's WebAssembly modules (inlined as base64 of their gzip form, so no
// bundler or server configuration is needed) and wraps their exports. There are three:
// the whole codec (`init()`), a smaller decode-only module (`initDecoder()`) that
// viewers load first — `register()` and the worker pool use it and load the encoder only
// when something is first encoded — and the full decoder (`initFullDecoder()`), which
// decodes the streams the other two leave to it (they throw an Error of kind
// "NeedsFullDecoder", e.g. for a progressive stream); decode()/decodeInto() retry there
// when it is loaded, and decodeAsync(), register() and the pool load it on demand.
// If an instance ever traps (a Rust panic or an
// out-of-memory abort), the call throws an Error and that instance is replaced by a fresh
// one, so later calls work. Each module comes with wasm SIMD (simd128) and as a scalar
// fallback; the SIMD one is used wherever the engine validates SIMD code (every current
// browser and Node 16.4+), and the fallback is a separate chunk only engines without it
// fetch.
import { argumentError, packageError } from "./errors.js";
import initCodecGlue, * as codecGlue from "./wasm/zarr_jpeg.js";
import initDecoderGlue, * as decoderGlue from "./wasm/zarr_jpeg_decoder.js";

/**
 * One WebAssembly module: its glue (or, for a module most pages never load, a function
 * that imports it), where its bytes come from, and its state.
 */
function moduleRecord(name, initGlue, glue, payloads, importGlue = undefined) {
  return { name, initGlue, glue, importGlue, payloads, compiled: undefined, simd: undefined, loading: undefined, ready: false };
}

// Literal import() calls, one per file, so bundlers see and split each of them.
const codec = moduleRecord("codec", initCodecGlue, codecGlue, {
  simd: () => import("./wasm/zarr_jpeg_bg.wasm.js"),
  scalar: () => import("./wasm/zarr_jpeg_scalar_bg.wasm.js"),
});
const decoder = moduleRecord("decoder", initDecoderGlue, decoderGlue, {
  simd: () => import("./wasm/zarr_jpeg_decoder_bg.wasm.js"),
  scalar: () => import("./wasm/zarr_jpeg_decoder_scalar_bg.wasm.js"),
});
// The full decoder's glue too is a chunk of its own: readers of baseline data never fetch it.
const fullDecoder = moduleRecord("full decoder", undefined, undefined, {
  simd: () => import("./wasm/zarr_jpeg_full_decoder_bg.wasm.js"),
  scalar: () => import("./wasm/zarr_jpeg_full_decoder_scalar_bg.wasm.js"),
}, () => import("./wasm/zarr_jpeg_full_decoder.js"));

// The converter (the Rust core's pipeline, for the CLI and `zarr-jpeg/convert`): its own
// chunk, SIMD only (Node has run wasm SIMD since 16.4); no viewer loads it.
const converter = moduleRecord("converter", undefined, undefined, {
  simd: () => import("./wasm/zarr_jpeg_converter_bg.wasm.js"),
  scalar: () => Promise.reject(packageError("EnvironmentUnsupported", "the converter needs WebAssembly SIMD (Node 16.4+ or a current browser)")),
}, () => import("./wasm/zarr_jpeg_converter.js"));

/** The `kind` of the Error the reader and writer modules throw for a stream only the full decoder decodes. */
const NEEDS_FULL_DECODER = "NeedsFullDecoder";
const FULL_DECODER_HINT =
  "; `await initFullDecoder()` before decode()/decodeInto(), or use decodeAsync(); register() and the worker pool load it by themselves";

// i32.const 0; i8x16.splat; i8x16.popcnt: validates only where wasm SIMD is supported
// (the probe of the wasm-feature-detect package).
const SIMD_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0, 65, 0, 253, 15, 253, 98, 11,
]);

/** True if this engine runs WebAssembly SIMD (simd128), so the SIMD modules are used. */
export function simdSupported() {
  return WebAssembly.validate(SIMD_PROBE);
}

function load(record, { module, simd } = {}) {
  if (simd !== undefined && typeof simd !== "boolean") {
    // a rejection, as every other failure to load: the functions return a Promise
    return Promise.reject(
      argumentError(`init option \`simd\` must be true, false or undefined (automatic), not ${String(simd)}`),
    );
  }
  record.loading ??= (async () => {
    if (module instanceof WebAssembly.Module) {
      // A module handed over (the pool's workers): `simd` says which variant it is, if known.
      record.simd = simd;
      record.compiled = module;
    } else {
      const supported = simdSupported();
      const useSimd = simd ?? supported;
      if (useSimd && !supported) {
        throw packageError("EnvironmentUnsupported", "`simd: true` was asked for, but this engine does not support WebAssembly SIMD");
      }
      const payload = await (useSimd ? record.payloads.simd : record.payloads.scalar)();
      record.compiled = await WebAssembly.compile(await inflate(payload.default));
      record.simd = useSimd;
    }
    if (!record.glue) {
      record.glue = await record.importGlue();
      record.initGlue = record.glue.default;
    }
    await record.initGlue({ module_or_path: record.compiled });
    record.ready = true;
  })().catch((error) => {
    record.loading = undefined;
    // A module that instantiated but failed to start (e.g. a handed-over module that is
    // not this one) stays in the glue, which would return it to every later init as if
    // ready: forget it, so the next call loads afresh.
    record.glue?.__resetInstance?.();
    record.compiled = undefined;
    record.simd = undefined;
    if (error?.kind) throw error;
    throw packageError("LoadFailed", `the WebAssembly module could not be loaded: ${error?.message ?? error}`, { cause: error });
  });
  return record.loading;
}

/**
 * Loads the whole codec (encode, decode, validateConfig). Idempotent: later calls return
 * the same promise (the first call's options decide). `module`: an already compiled module
 * to instantiate instead. `simd`: false forces the scalar module, true requires SIMD;
 * by default SIMD is used where the engine supports it.
 */
export function init(options) {
  const { module, simd } = options ?? {};
  return load(codec, { module, simd });
}

/**
 * Loads only the decoder (decode, validateConfig): a smaller download for viewers.
 * Idempotent. `module`: an already compiled decoder module (what the pool hands workers);
 * `simd` as for init().
 */
export function initDecoder(options) {
  const { module, simd } = options ?? {};
  return load(decoder, { module, simd });
}

/**
 * Loads the full decoder (decode, validateConfig with all of zune-jpeg: progressive
 * streams too), which decode()/decodeInto() then use for the streams the other modules
 * leave to it. Idempotent. `module`: an already compiled full-decoder module (what the
 * pool hands workers); `simd` as for init(), by default the variant of the module
 * already loaded.
 */
export function initFullDecoder(options) {
  const { module, simd } = options ?? {};
  return load(fullDecoder, { module, simd: simd ?? (module ? undefined : loadedSimd()) });
}

/** Loads the converter module (the Rust core's converter). Idempotent. */
export function initConverter() {
  return load(converter, {});
}

/**
 * Runs the Rust core's converter (after `await initConverter()`): `input` { size,
 * read(offset, length) → Uint8Array }, `store` { write, append, close, clear }, `events` {
 * warning?, progress? }, `encoders` (optional) { workers, encode(config, options, jobs) }
 * (js/convert-encoders.js); → { summary, text }. Refusals throw an Error with `kind`; an
 * exception a callback throws is thrown again as it was.
 */
export function convertWithCore(input, file, output, options, store, events, encoders) {
  return call(converterModule(), "convert", input, file, output, options, store, events, encoders);
}

/**
 * Runs the Rust core's precomputed export (after `await initConverter()`): `folder` { open(path)
 * → input | null } the Zarr store, `store` { write, … }; → { summary, text }.
 */
export function exportPrecomputedWithCore(folder, name, output, options, store, events) {
  return call(converterModule(), "exportPrecomputed", folder, name, output, options, store, events);
}

/** As convertWithCore(), for samples in memory: `data` a Uint8Array of `shape`. */
export function convertSamplesWithCore(data, shape, output, options, store, events, encoders) {
  return call(converterModule(), "convertSamples", data, shape, output, options, store, events, encoders);
}

/** The converter's module, or an Error saying how to load it. */
function converterModule() {
  if (!converter.ready) throw packageError("NotInitialized", "the converter is not loaded; call `await initConverter()` first");
  return converter;
}

/** The SIMD-ness of the codec or decoder already loaded, so the full decoder matches it. */
function loadedSimd() {
  const loaded = codec.ready ? codec : decoder.ready ? decoder : undefined;
  return loaded?.simd;
}

/**
 * Whether the loaded module uses wasm SIMD: the whole codec's if loaded, else the
 * decoder's, else the full decoder's; undefined before loading (or for a handed-over module of unknown variant).
 */
export function usesSimd() {
  return codec.ready ? codec.simd : decoder.ready ? decoder.simd : fullDecoder.ready ? fullDecoder.simd : undefined;
}

/** Whether the compiled decoder module (compiledDecoderModule()) is the SIMD variant. */
export function decoderUsesSimd() {
  return decoder.simd;
}

/** Whether the compiled whole-codec module (compiledWasmModule()) is the SIMD variant. */
export function codecUsesSimd() {
  return codec.simd;
}

/** Whether the compiled full-decoder module (compiledFullDecoderModule()) is the SIMD variant. */
export function fullDecoderUsesSimd() {
  return fullDecoder.simd;
}

/** True once `initFullDecoder()` has finished (decode() then handles every stream the codec reads). */
export function isFullDecoderReady() {
  return fullDecoder.ready;
}

/** The compiled full-decoder module once `initFullDecoder()` has finished (structured-cloneable). */
export function compiledFullDecoderModule() {
  return fullDecoder.compiled;
}

/** True once `init()` has finished (encode is available). */
export function isReady() {
  return codec.ready;
}

/** The compiled whole-codec module once `init()` has finished (structured-cloneable). */
export function compiledWasmModule() {
  return codec.compiled;
}

/** The compiled decoder module once `initDecoder()` has finished (structured-cloneable). */
export function compiledDecoderModule() {
  return decoder.compiled;
}

export { QUANT_TABLES } from "./options.js";

/** Validates a jpeg codec configuration; returns its normalised form or throws an Error. */
export function validateConfig(config) {
  return call(anyLoaded(), "validateConfig", config);
}

/**
 * Encodes a chunk's C-order uint8 samples (`shape` (H, W), (H, W, 1) or (H, W, 3)) as a JPEG
 * stream. `options.restartIntervals` (default true): restart intervals of 64 rows in chunks
 * taller than that, which this package decodes faster and other decoders about as fast.
 * `options.trellis` (default false): rate–distortion-optimised quantisation, fewer bytes at
 * equal PSNR for a slower encode (docs/api.md "Trellis quantisation"). `options.quantTable`
 * (default "annex-k"): the base quantisation tables, one of QUANT_TABLES.
 */
export function encode(config, data, shape, options) {
  return call(encoder(), "encode", config, data, shape, options);
}

/** The whole codec's module, or an Error saying how to load it. */
function encoder() {
  if (!codec.ready) {
    throw packageError(
      "NotInitialized",
      "the encoder is not loaded; call `await init()` first" +
        (decoder.ready ? " (initDecoder() loads the decoder only)" : ""),
    );
  }
  return codec;
}

/**
 * encode() into `out`, a Uint8Array the caller reuses (no new array per chunk); returns the
 * stream's length, so the stream is `out.subarray(0, length)`. `out` is written only if the
 * whole stream fits; otherwise an Error of kind "InvalidData" says how many bytes it needs.
 */
export function encodeInto(config, data, shape, out, options) {
  return call(encoder(), "encodeInto", config, data, shape, out, options);
}

/**
 * A TIFF tile's complete JPEG stream: the page's JPEGTables (tag 347) spliced in after the
 * tile's SOI, and, when `colorSpace` ("grayscale" | "rgb" | "ycbcr") is given, colour
 * markers that make the spec's decoding rules give it; entropy-coded data unchanged. For
 * readers of TIFF data in place (the imagecodecs_jpeg codec) and the converter.
 */
export function completeTileStream(tile, tables, colorSpace) {
  return call(anyLoaded(), "completeTileStream", tile, tables ?? null, colorSpace ?? null);
}

/**
 * Decodes a JPEG stream to the chunk's C-order uint8 samples. A stream only the full
 * decoder decodes (e.g. progressive) goes there if `initFullDecoder()` has finished; else
 * the Error has kind "NeedsFullDecoder" (decodeAsync() loads it instead).
 */
export function decode(config, bytes, shape) {
  return decodeWith("decode", config, bytes, shape);
}

/**
 * Decodes a JPEG stream into `out`, a Uint8Array of exactly the chunk's byte length (for
 * callers that reuse buffers); `out` is written only when decoding succeeds. Streams
 * that need the full decoder as for decode().
 */
export function decodeInto(config, bytes, shape, out) {
  return decodeWith("decodeInto", config, bytes, shape, out);
}

/**
 * decode(), loading the full decoder first when the stream needs it (what register()
 * does); loads the decoder itself if nothing is loaded yet. Resolves to the samples.
 */
export async function decodeAsync(config, bytes, shape) {
  if (!codec.ready && !decoder.ready && !fullDecoder.ready) await initDecoder();
  try {
    return decode(config, bytes, shape);
  } catch (error) {
    if (error?.kind !== NEEDS_FULL_DECODER) throw error;
  }
  await initFullDecoder();
  return decode(config, bytes, shape);
}

/** Whether `error` says the stream needs the full decoder (and it is not loaded yet). */
export function needsFullDecoder(error) {
  return error?.kind === NEEDS_FULL_DECODER;
}

function decodeWith(name, ...args) {
  const record = decodingModule();
  if (record === fullDecoder) return call(fullDecoder, name, ...args);
  try {
    return call(record, name, ...args);
  } catch (error) {
    if (error?.kind !== NEEDS_FULL_DECODER) throw error;
    if (fullDecoder.ready) return call(fullDecoder, name, ...args);
    // The core's message names the reason; how to load the full decoder is ours to say.
    error.message += FULL_DECODER_HINT;
    throw error;
  }
}

/**
 * The module that decodes: the decode-only one when loaded (its IDCT is faster, with the same
 * samples), else the whole codec, else the full decoder.
 */
function decodingModule() {
  return decoder.ready ? decoder : anyLoaded();
}

/** The whole codec if loaded, else the decoder, else the full decoder. */
function anyLoaded() {
  if (codec.ready) return codec;
  if (decoder.ready) return decoder;
  if (fullDecoder.ready) return fullDecoder;
  throw packageError("NotInitialized", "the WebAssembly module is not loaded; call `await init()` first");
}

function call(record, name, ...args) {
  return guarded(record, () => record.glue[name](...args));
}

/** Runs `run` (a call into `record`'s instance), replacing the instance if it trapped. */
function guarded(record, run) {
  try {
    return run();
  } catch (error) {
    // A trap, or a JS stack overflow unwinding through wasm frames (which skips the
    // epilogues that restore wasm's own stack pointer): either way the instance is suspect.
    if (error instanceof WebAssembly.RuntimeError || error instanceof RangeError) {
      record.glue.__resetInstance();
      record.glue.initSync({ module: record.compiled });
      record.generation = (record.generation ?? 0) + 1;
      throw packageError(
        "InstanceTrapped",
        `the WebAssembly instance trapped (${error.name}: ${error.message}) and was replaced by a fresh one; ` +
          "this call failed, later calls will work",
        { cause: error },
      );
    }
    throw error;
  }
}

/** base64 → gzip → wasm bytes. */
async function inflate(base64) {
  if (typeof DecompressionStream !== "function") {
    throw packageError(
      "EnvironmentUnsupported",
      "this JavaScript runtime has no DecompressionStream, needed to unpack the inlined " +
        "WebAssembly module (current browsers and Node 18+ have it)",
    );
  }
  const inflated = new Blob([base64ToBytes(base64)]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Uint8Array(await new Response(inflated).arrayBuffer());
}

/** Base64 text → bytes (the inlined modules; imagecodecs' JPEG tables in zarrita.js). */
export function base64ToBytes(base64) {
  const binary = atob(base64);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
