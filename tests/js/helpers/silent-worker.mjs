// A stand-in for js/worker.js (Node only) that starts and then never answers a chunk, so the
// chunks sent to it are still pending when the pool closes.
import { parentPort } from "node:worker_threads";

let started = false;
parentPort.on("message", () => {
  if (!started) {
    started = true;
    parentPort.postMessage({ ready: true });
  }
});
