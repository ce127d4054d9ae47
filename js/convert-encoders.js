// The converter's worker threads (Node): the Rust core calls `encode(config, options, jobs)`
// synchronously with a batch of chunk images (the converter module runs on the calling
// thread and cannot await), so this thread hands the jobs to its workers through
// MessagePorts it never starts, blocks in Atomics.wait on a shared counter the workers bump
// after each answer, and takes the answers with receiveMessageOnPort. A batch can also be
// started and finished later (start/finish), so that the core reads on while the workers
// encode. Results come back in the jobs' order: the store is the same whatever the worker count.
import { MessageChannel, Worker, receiveMessageOnPort } from "node:worker_threads";
import { once } from "node:events";
import { startNodeWorker } from "./pool.js";
import { packageError } from "./errors.js";

/**
 * Starts `count` encoding workers; → `{ workers, encode(config, options, jobs),
 * start(config, options, jobs) → id, decode(config, jobs), startDecode(config, jobs) → id,
 * finish(id), close() }`, or null
 * where none could start (the converter then encodes on the calling thread).
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
      workers.push({ worker, port: port1, held: 0 });
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
  const batches = new Batches(workers, signal);
  const encodeMessage = (config, options) => (job, id) =>
    [{ id, config, options, samples: job.samples, shape: job.shape, decode: job.decode }, [job.samples.buffer]];
  const encoded = (answer) => ({ stream: answer.stream, decoded: answer.decoded });
  const decodeMessage = (config) => (job, id) => [{ id, config, stream: job.stream, shape: job.shape }, [job.stream.buffer]];
  const decoded = (answer) => ({ samples: answer.samples });
  return {
    workers: count,
    encode: (config, options, jobs) => batches.finish(batches.start(jobs, encodeMessage(config, options), encoded)),
    start: (config, options, jobs) => batches.start(jobs, encodeMessage(config, options), encoded),
    finish: (id) => batches.finish(id),
    decode: (config, jobs) => batches.finish(batches.start(jobs, decodeMessage(config), decoded)),
    startDecode: (config, jobs) => batches.start(jobs, decodeMessage(config), decoded),
    async close() {
      await Promise.all(workers.map(({ worker, port }) => (port.close(), worker.terminate())));
    },
  };
}

/**
 * Batches of jobs through the workers. start() posts every job at once, each to the worker
 * holding the fewest (chunk jobs are alike in size), and returns; finish() takes answers,
 * of any batch, until its own are all in.
 */
class Batches {
  #workers;
  #signal;
  #batches = new Map();
  #jobs = new Map(); // job id → [batch id, index, worker]
  #nextBatch = 0;
  #nextJob = 0;

  constructor(workers, signal) {
    this.#workers = workers;
    this.#signal = signal;
  }

  /** `message(job, id)` → [message, transfer]; `result(answer)` → what the core gets for it. */
  start(jobs, message, result) {
    const id = this.#nextBatch++;
    this.#batches.set(id, { results: new Array(jobs.length), left: jobs.length, result });
    jobs.forEach((job, index) => {
      const worker = this.#workers.reduce((a, b) => (b.held < a.held ? b : a));
      const jobId = this.#nextJob++;
      this.#jobs.set(jobId, [id, index, worker]);
      worker.port.postMessage(...message(job, jobId));
      worker.held++;
    });
    return id;
  }

  finish(id) {
    const batch = this.#batches.get(id);
    while (batch.left > 0) {
      const seen = Atomics.load(this.#signal, 0);
      if (this.#take()) continue;
      if (Atomics.load(this.#signal, 1) === 1) throw packageError("LoadFailed", "an encoding worker stopped", { command: "convert" });
      Atomics.wait(this.#signal, 0, seen);
    }
    this.#batches.delete(id);
    return batch.results;
  }

  /** Every answer waiting on the ports; whether there was any. */
  #take() {
    let got = false;
    for (const worker of this.#workers) {
      for (let received; (received = receiveMessageOnPort(worker.port)); ) {
        const answer = received.message;
        const [id, index] = this.#jobs.get(answer.id);
        this.#jobs.delete(answer.id);
        worker.held--;
        const batch = this.#batches.get(id);
        batch.results[index] = answer.error === undefined ? batch.result(answer) : { error: answer.error };
        batch.left--;
        got = true;
      }
    }
    return got;
  }
}
