// A decode worker for the pool in pool.js: a module Web Worker in browsers, a
// worker_threads Worker in Node. First receives {module} (the compiled decoder wasm) and answers
// {ready}; then receives {id, config, bytes, shape}, answers {id, data} (data's buffer
// transferred) or {id, error: {message, kind}}; and, when the pool has seen a chunk that
// needs it, {fullDecoder} (the compiled full-decoder wasm, or null: load it here), which
// decodes of later jobs wait for.
import { initDecoder, initFullDecoder, decode } from "./loader.js";

const NODE_WORKER_THREADS = "node:worker_threads"; // a variable, so bundlers for the web leave it alone

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

// The first message carries the pool's compiled WebAssembly module and whether it is the
// SIMD variant (or no module, where it could not be cloned: the worker then compiles its
// own); later ones are decode jobs.
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
  await started;
  if (fullStarted) await fullStarted;
  const { id, config, bytes, shape } = message;
  try {
    const data = decode(config, bytes, shape);
    port.post({ id, data }, [data.buffer]);
  } catch (error) {
    port.post({ id, error: { message: String(error?.message ?? error), kind: error?.kind } });
  }
});
