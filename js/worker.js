// A codec worker for the pool in pool.js: a module Web Worker in browsers, a worker_threads
// Worker in Node. First receives {module} (the compiled decoder wasm) and answers {ready};
// then jobs {id, kind, config, bytes, shape[, options]}: kind "decode" answers {id, data}
// (the samples), kind "encode" {id, data} (the stream), each with its buffer transferred, or
// {id, error: {message, kind}}; with either, `spare`, the job's input buffer handed back for
// the pool's next copy. Also, when the pool has seen a chunk that needs it,
// {fullDecoder} (the compiled full-decoder wasm, or null: load it here), which decodes of
// later jobs wait for; and before the first encode job {encoder} (the compiled whole-codec
// wasm, or null), which encodes wait for.
import { init, initDecoder, initFullDecoder, decode, encode } from "./loader.js";

const NODE_WORKER_THREADS = "node:worker_threads"; // a variable, so bundlers for the web leave it alone
// The error kind of an encode job when the encoder did not load here: the pool encodes it instead.
const ENCODER_UNAVAILABLE = "EncoderUnavailable";

async function connect() {
  if (typeof WorkerGlobalScope !== "undefined" && globalThis instanceof WorkerGlobalScope) {
    return {
      post: (message, transfer) => globalThis.postMessage(message, transfer ?? []),
      listen: (handler) => globalThis.addEventListener("message", (event) => handler(event.data)),
    };
  }
  const { parentPort } = await import(NODE_WORKER_THREADS);
  return {
    post: (message, transfer) => parentPort.postMessage(message, transfer ?? []),
    listen: (handler) => parentPort.on("message", handler),
  };
}

const port = await connect();
let started = null;
let fullStarted = null;
let encoderStarted = null; // Promise<boolean>: whether the encoder loaded

// The first message carries the pool's compiled WebAssembly module and whether it is the
// SIMD variant (or no module, where it could not be cloned: the worker then compiles its
// own); later ones are jobs and modules.
port.listen(async (message) => {
  if (!started) {
    started = initDecoder({ module: message.module, simd: message.simd }).then(
      () => port.post({ ready: true }),
      (error) => port.post({ ready: false, error: { message: String(error?.message ?? error) } }),
    );
    return;
  }
  if ("fullDecoder" in message) {
    // If it fails to load, jobs answer "NeedsFullDecoder" again and the pool decodes them itself.
    fullStarted ??= initFullDecoder({ module: message.fullDecoder ?? undefined, simd: message.simd }).catch(() => {});
    return;
  }
  if ("encoder" in message) {
    encoderStarted ??= init({ module: message.encoder ?? undefined, simd: message.simd }).then(
      () => true,
      () => false,
    );
    return;
  }
  await started;
  const { id, kind, config, bytes, shape, options } = message;
  // Every answer hands the input's buffer back too, for the pool's next copy.
  const answer = (fields, transfer = []) => port.post({ id, ...fields, spare: bytes.buffer }, [...transfer, bytes.buffer]);
  if (kind === "encode") {
    if (!(await encoderStarted)) {
      answer({ error: { message: "the encoder did not load in this worker", kind: ENCODER_UNAVAILABLE } });
      return;
    }
  } else if (fullStarted) await fullStarted;
  try {
    const data = kind === "encode" ? encode(config, bytes, shape, options) : decode(config, bytes, shape);
    answer({ data }, [data.buffer]);
  } catch (error) {
    answer({ error: { message: String(error?.message ?? error), kind: error?.kind } });
  }
});
