// A codec worker for the pool in pool.js: a module Web Worker in browsers, a worker_threads
// Worker in Node. The messages are protocol.js's: the pool sends the full decoder when it
// has seen a chunk that needs it, and the encoder before the first encode job.
import { init, initDecoder, initFullDecoder, decode, encode } from "./loader.js";
import { ENCODE, ENCODER, ENCODER_UNAVAILABLE, FULL_DECODER, NODE_WORKER_THREADS } from "./protocol.js";

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
  if (FULL_DECODER in message) {
    // If it fails to load, jobs answer "NeedsFullDecoder" again and the pool decodes them itself.
    fullStarted ??= initFullDecoder({ module: message[FULL_DECODER] ?? undefined, simd: message.simd }).catch(() => {});
    return;
  }
  if (ENCODER in message) {
    encoderStarted ??= init({ module: message[ENCODER] ?? undefined, simd: message.simd }).then(
      () => true,
      () => false,
    );
    return;
  }
  await started;
  const { id, kind, config, bytes, shape, options } = message;
  // Every answer hands the input's buffer back too, for the pool's next copy.
  const answer = (fields, transfer = []) => port.post({ id, ...fields, spare: bytes.buffer }, [...transfer, bytes.buffer]);
  if (kind === ENCODE) {
    if (!(await encoderStarted)) {
      answer({ error: { message: "the encoder did not load in this worker", kind: ENCODER_UNAVAILABLE } });
      return;
    }
  } else if (fullStarted) await fullStarted;
  try {
    const data = kind === ENCODE ? encode(config, bytes, shape, options) : decode(config, bytes, shape);
    answer({ data }, [data.buffer]);
  } catch (error) {
    answer({ error: { message: String(error?.message ?? error), kind: error?.kind } });
  }
});
