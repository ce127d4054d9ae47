// A stand-in for js/worker.js (Node only) that starts, then exits at its first chunk, so the
// pool has to finish that worker's chunks, and those still waiting for it, itself.
import { parentPort } from "node:worker_threads";

let started = false;
parentPort.on("message", () => {
  if (!started) {
    started = true;
    parentPort.postMessage({ ready: true });
    return;
  }
  process.exit(1);
});
