// The converter's worker threads (Node): the Rust core calls `encode(config, options, jobs)`
// synchronously with a batch of chunk images (the converter module runs on the calling
// thread and cannot await), so this thread hands the jobs to its workers through
// MessagePorts it never starts, blocks in Atomics.wait on a shared counter the workers bump
// after each answer, and takes the answers with receiveMessageOnPort. Results come back in
// the jobs' order: the store is the same whatever the worker count.
import { MessageChannel, Worker, receiveMessageOnPort } from "node:worker_threads";
import { once } from "node:events";
import { startNodeWorker } from "./pool.js";
import { packageError } from "./errors.js";

// Jobs a worker holds at once: one being encoded and one waiting, so it never idles
// while this thread notices an answer.
const JOBS_PER_WORKER = 2;

/**
 * Starts `count` encoding workers; → `{ workers, encode(config, options, jobs), close() }`,
 * or null where none could start (the converter then encodes on the calling thread).
 */
export async function startEncoders(count) {
  if (!Number.isInteger(count) || count < 1) return null;
  // [0]: answers given (the counter waited on); [1]: 1 once a worker has exited
  const signal = new Int32Array(new SharedArrayBuffer(8));
  const workers = [];
  try {
    for (let i = 0; i < count; i++) {
      const { port1, port2 } = new MessageChannel();
      const worker = startNodeWorker(Worker, new URL("./convert-worker.js", import.meta.url), {
        workerData: { port: port2, signal },
        transferList: [port2],
      });
      workers.push({ worker, port: port1 });
    }
    await Promise.all(
      workers.map(async ({ worker }) => {
        const [message] = await Promise.race([once(worker, "message"), once(worker, "error").then(([e]) => Promise.reject(e))]);
        if (!message.ready) throw packageError("LoadFailed", message.message, { command: "convert" });
      }),
    );
  } catch {
    for (const { worker } of workers) await worker.terminate();
    return null;
  }
  for (const { worker } of workers) worker.unref();
  return {
    workers: count,
    encode: (config, options, jobs) => encodeBatch(workers, signal, config, options, jobs),
    async close() {
      await Promise.all(workers.map(({ worker, port }) => (port.close(), worker.terminate())));
    },
  };
}

function encodeBatch(workers, signal, config, options, jobs) {
  const results = new Array(jobs.length);
  let next = 0;
  let done = 0;
  const send = (w) => {
    const job = jobs[next];
    workers[w].port.postMessage({ id: next++, config, options, samples: job.samples, shape: job.shape, decode: job.decode }, [job.samples.buffer]);
    workers[w].held++;
  };
  for (const w of workers.keys()) {
    workers[w].held = 0;
    while (workers[w].held < JOBS_PER_WORKER && next < jobs.length) send(w);
  }
  while (done < jobs.length) {
    const seen = Atomics.load(signal, 0);
    let got = false;
    for (const [w, worker] of workers.entries()) {
      for (let message; (message = receiveMessageOnPort(worker.port)); ) {
        const answer = message.message;
        results[answer.id] = answer.error === undefined ? { stream: answer.stream, decoded: answer.decoded } : { error: answer.error };
        done++;
        worker.held--;
        got = true;
        if (next < jobs.length) send(w);
      }
    }
    if (got) continue;
    if (Atomics.load(signal, 1) === 1) throw packageError("LoadFailed", "an encoding worker stopped", { command: "convert" });
    Atomics.wait(signal, 0, seen);
  }
  return results;
}
