// An encoding worker of the converter's (convert-encoders.js): encodes the chunk images (and
// decodes the TIFF tiles) the converter's calling thread sends on `workerData.port`, which that thread reads while it
// waits on `workerData.signal` (see there). Node only.
import { workerData, parentPort } from "node:worker_threads";
import { init, encode, decode } from "./loader.js";

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

// {id, config, options, samples, shape, decode} → {id, stream, decoded?}: an encode (and its
// decode again, for the error); {id, config, stream, shape} → {id, samples}: a tile's decode.
port.on("message", ({ id, config, options, samples, stream: input, shape, decode: again }) => {
  let answer;
  try {
    if (input !== undefined) {
      const out = decode(config, input, shape);
      answer = [{ id, samples: out }, [out.buffer]];
    } else {
      const stream = encode(config, samples, shape, options);
      const decoded = again ? decode(config, stream, shape) : undefined;
      answer = [{ id, stream, decoded }, decoded ? [stream.buffer, decoded.buffer] : [stream.buffer]];
    }
  } catch (error) {
    answer = [{ id, error: String(error?.message ?? error) }, []];
  }
  port.postMessage(...answer);
  answered();
});
