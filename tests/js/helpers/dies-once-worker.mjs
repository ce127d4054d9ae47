// A stand-in for js/worker.js (Node only): the first worker started with this script in a
// test (the one that creates the directory named by ZARR_JPEG_TEST_DIES_ONCE) is
// dying-worker.mjs, which exits at its first chunk; every later one is the real worker. So
// the pool's replacement for the dead worker is a healthy one.
import fs from "node:fs";

let first = false;
try {
  fs.mkdirSync(process.env.ZARR_JPEG_TEST_DIES_ONCE);
  first = true;
} catch {
  // not the first: the real worker
}

await import(first ? "./dying-worker.mjs" : "../../../dist/worker.js");
