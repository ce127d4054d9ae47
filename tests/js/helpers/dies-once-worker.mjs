// A stand-in for js/worker.js (Node only): the first worker started with this script in a
// test (the one that creates the directory named by ZARR_JPEG_TEST_DIES_ONCE) starts, then
// exits at its first chunk; every later one is the real worker. So the pool's replacement
// for the dead worker is a healthy one.
import fs from "node:fs";
import { parentPort } from "node:worker_threads";

let first = false;
try {
  fs.mkdirSync(process.env.ZARR_JPEG_TEST_DIES_ONCE);
  first = true;
} catch {
  // not the first: the real worker
}

if (first) {
  let started = false;
  parentPort.on("message", () => {
    if (!started) {
      started = true;
      parentPort.postMessage({ ready: true });
      return;
    }
    process.exit(1);
  });
} else {
  await import("../../../dist/worker.js");
}
