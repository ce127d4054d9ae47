// Loads the codec's WebAssembly module (inlined as base64 of its gzip form, so no bundler
// or server configuration is needed) and wraps its exports. If the instance ever traps (a Rust
// panic or an out-of-memory abort), the call throws an Error and the instance is
// replaced by a fresh one, so later calls work.
import initWasm, {
  initSync,
  encode as wasmEncode,
  decode as wasmDecode,
  validateConfig as wasmValidateConfig,
  __resetInstance,
} from "./wasm/zarr_jpeg.js";
import wasmBase64 from "./wasm/zarr_jpeg_bg.wasm.js";

let compiledModule;
let loading;
let ready = false;

/**
 * Loads the WebAssembly module. Idempotent: later calls return the same promise.
 * `module`: an already compiled module (e.g. handed to a worker), instead of compiling
 * the inlined bytes again.
 */
export function init({ module } = {}) {
  loading ??= (async () => {
    compiledModule = module instanceof WebAssembly.Module ? module : await WebAssembly.compile(await inlinedWasm());
    await initWasm({ module_or_path: compiledModule });
    ready = true;
  })().catch((error) => {
    loading = undefined;
    throw error;
  });
  return loading;
}

/** The compiled module once `init()` has finished (structured-cloneable to workers). */
export function compiledWasmModule() {
  return compiledModule;
}

/** True once `init()` has finished. */
export function isReady() {
  return ready;
}

/** Validates a jpeg codec configuration; returns its normalised form or throws an Error. */
export function validateConfig(config) {
  return call(wasmValidateConfig, config);
}

/** Encodes a chunk's C-order uint8 samples (`shape` (H, W), (H, W, 1) or (H, W, 3)) as a JPEG stream. */
export function encode(config, data, shape) {
  return call(wasmEncode, config, data, shape);
}

/** Decodes a JPEG stream to the chunk's C-order uint8 samples. */
export function decode(config, bytes, shape) {
  return call(wasmDecode, config, bytes, shape);
}

function call(fn, ...args) {
  if (!ready) {
    throw new Error("zarr-jpeg: the WebAssembly module is not loaded; call `await init()` first");
  }
  try {
    return fn(...args);
  } catch (error) {
    // A trap, or a JS stack overflow unwinding through wasm frames (which skips the
    // epilogues that restore wasm's own stack pointer): either way the instance is suspect.
    if (error instanceof WebAssembly.RuntimeError || error instanceof RangeError) {
      replaceInstance();
      throw new Error(
        `zarr-jpeg: the WebAssembly instance trapped (${error.name}: ${error.message}) and was replaced by a fresh one; ` +
          "this call failed, later calls will work",
        { cause: error },
      );
    }
    throw error;
  }
}

function replaceInstance() {
  __resetInstance();
  initSync({ module: compiledModule });
}

/** The inlined module: base64 → gzip → wasm bytes. */
async function inlinedWasm() {
  if (typeof DecompressionStream !== "function") {
    throw new Error(
      "zarr-jpeg: this JavaScript runtime has no DecompressionStream, needed to unpack the inlined " +
        "WebAssembly module (current browsers and Node 18+ have it)",
    );
  }
  const gzipped = new Blob([base64ToBytes(wasmBase64)]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Uint8Array(await new Response(gzipped).arrayBuffer());
}

function base64ToBytes(base64) {
  const binary = atob(base64);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
