// A stand-in for js/worker.js (Node only): the real worker, except that the encoder module
// the pool hands it is swapped for an empty module, which does not load, so every encode it
// is sent answers "EncoderUnavailable".
import { parentPort } from "node:worker_threads";

const EMPTY_MODULE = new WebAssembly.Module(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]));
const on = parentPort.on.bind(parentPort);
parentPort.on = (type, listener) =>
  on(type, type === "message" ? (message) => listener("encoder" in message ? { ...message, encoder: EMPTY_MODULE } : message) : listener);

await import("../../../dist/worker.js");
