// A stand-in for js/worker.js (Node only) that decodes nothing: it answers every chunk with an
// error whose message is the most chunks it has held at once, so a test can see how many the
// pool sends before hearing back.
import { parentPort } from "node:worker_threads";

let started = false;
let held = 0;
let most = 0;
parentPort.on("message", (message) => {
  if (!started) {
    started = true;
    parentPort.postMessage({ ready: true });
    return;
  }
  held++;
  most = Math.max(most, held);
  setTimeout(() => {
    held--;
    parentPort.postMessage({ id: message.id, error: { message: String(most), kind: "Probe" } });
  }, 1);
});
