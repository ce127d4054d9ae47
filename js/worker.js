// A decode worker for the pool in pool.js: a module Web Worker in browsers, a
// worker_threads Worker in Node. First receives {module} (the compiled decoder wasm) and answers
// {ready}; then receives {id, config, bytes, shape}, answers {id, data} (data's buffer
// transferred) or {id, error: {message, kind}}.
import { initDecoder, decode } from "./loader.js";

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
  await started;
  const { id, config, bytes, shape } = message;
  try {
    const data = decode(config, bytes, shape);
    port.post({ id, data }, [data.buffer]);
  } catch (error) {
    port.post({ id, error: { message: String(error?.message ?? error), kind: error?.kind } });
  }
});
