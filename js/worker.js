// A decode worker for the pool in pool.js: a module Web Worker in browsers, a
// worker_threads Worker in Node. Receives {id, config, bytes, shape}, answers
// {id, data} (data's buffer transferred) or {id, error: {message, kind}}.
import { init, decode } from "./loader.js";

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
try {
  await init();
  port.post({ ready: true });
} catch (error) {
  port.post({ ready: false, error: { message: String(error?.message ?? error) } });
}

port.listen(({ id, config, bytes, shape }) => {
  try {
    const data = decode(config, bytes, shape);
    port.post({ id, data }, [data.buffer]);
  } catch (error) {
    port.post({ id, error: { message: String(error?.message ?? error), kind: error?.kind } });
  }
});
