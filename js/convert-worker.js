// An encoding worker of the converter's (convert-encoders.js): encodes the chunk images (and
// decodes the TIFF tiles) the converter's calling thread sends on `workerData.port`, which that thread reads while it
// waits on `workerData.signal` (see there). Node only.
import { workerData, parentPort } from "node:worker_threads";
import { init } from "./loader.js";
import { runJob } from "./convert-job.js";

const { port, signal } = workerData;
const answered = () => {
  Atomics.add(signal, 0, 1);
  Atomics.notify(signal, 0);
};
// However this thread ends, the waiting thread learns of it (it cannot see the exit event).
process.on("exit", () => {
  Atomics.store(signal, 1, 1);
  answered();
});

try {
  await init();
  parentPort.postMessage({ ready: true });
} catch (error) {
  parentPort.postMessage({ ready: false, message: String(error?.message ?? error) });
}

// the jobs' messages: convert-job.js
port.on("message", (job) => {
  port.postMessage(...runJob(job));
  answered();
});
