// A pool of codec workers (Web Workers in browsers, worker_threads in Node) that decode and
// encode chunks. What a worker is sent (JPEG bytes, or samples to encode) is a transferred
// copy (the store's buffer may be shared, e.g. a cached shard; the caller's samples stay
// the caller's); what it answers (samples, or a stream) comes back transferred. Where
// workers cannot start (no Worker, a blocked or missing worker script), chunks are decoded
// and encoded on the calling thread.
// Workers start with the decoder module; when a chunk needs the full decoder (the worker
// answers with an Error of kind "NeedsFullDecoder"), the pool loads it here once, hands the
// compiled module to that worker and sends the chunk again. The encoder too is loaded here
// once, on the first encode, and handed to each worker before its first encode.
import {
  init,
  initDecoder,
  initFullDecoder,
  decodeAsync,
  encode,
  compiledDecoderModule,
  decoderUsesSimd,
  compiledFullDecoderModule,
  fullDecoderUsesSimd,
  compiledWasmModule,
  codecUsesSimd,
  needsFullDecoder,
  validateConfig,
} from "./loader.js";
import { errorFromParts, packageError } from "./errors.js";
import { encodeOptionsProblem } from "./options.js";
import { DECODE, ENCODE, ENCODER, ENCODER_UNAVAILABLE, FULL_DECODER, NODE_WORKER_THREADS } from "./protocol.js";

// Chunks sent to a worker before it answers; the rest wait here. Enough to keep a worker busy
// through the calling thread's pauses; few enough that Node, which handles every message
// already queued on a port in one go, does not block this thread through a whole read.
const MAX_IN_FLIGHT_PER_WORKER = 16;
// Workers started in place of ones that died, per worker of the pool: a worker killed from
// outside (memory pressure, a crash) is replaced, one that dies whatever it is sent is not
// restarted for ever.
const REPLACEMENTS_PER_WORKER = 2;
/** The most workers register() and the converter start: more than any machine has cores is a mistake (1e9 would try to start them all). */
export const MAX_WORKERS = 256;
const isNode = typeof process !== "undefined" && typeof process.versions?.node === "string";

async function spawn(url) {
  if (isNode) {
    const { Worker } = await import(NODE_WORKER_THREADS);
    const worker = newNodeWorker(Worker, url ?? new URL("./worker.js", import.meta.url), workerExecArgv(process.execArgv));
    return {
      on: (type, fn) => worker.on(type, fn),
      post: (message, transfer) => worker.postMessage(message, transfer),
      ref: () => worker.ref(),
      unref: () => worker.unref(),
      terminate: () => worker.terminate(),
    };
  }
  if (typeof Worker !== "function") throw packageError("EnvironmentUnsupported", "this environment has no Worker");
  // The literal `new Worker(new URL("./worker.js", import.meta.url), …)` form is what Vite and
  // webpack recognise to emit the worker with the bundle.
  const worker = url
    ? new Worker(url, { type: "module" })
    : new Worker(new URL("./worker.js", import.meta.url), { type: "module" });
  return {
    on(type, fn) {
      if (type === "message") worker.addEventListener("message", (event) => fn(event.data));
      else if (type === "error") {
        worker.addEventListener("error", (event) => fn(packageError("LoadFailed", `the worker failed to load: ${event.message || "no reason given"}`)));
        worker.addEventListener("messageerror", () => fn(packageError("LoadFailed", "a worker's message could not be deserialised")));
      }
    },
    post: (message, transfer) => worker.postMessage(message, transfer),
    ref() {},
    unref() {},
    terminate: () => worker.terminate(),
  };
}

/**
 * A worker_threads Worker running `url` with this process's flags (less those a worker
 * refuses), `options` (workerData, transferList) passed on.
 */
export function startNodeWorker(Worker, url, options = {}) {
  return newNodeWorker(Worker, url, workerExecArgv(process.execArgv), options);
}

// Node refuses a worker V8 and process-wide flags (e.g. --max-old-space-size, --expose-gc),
// which apply to its threads anyway, with an error that names them: start it without them.
function newNodeWorker(Worker, url, execArgv, options = {}) {
  try {
    return new Worker(url, { ...options, execArgv });
  } catch (error) {
    if (error?.code !== "ERR_WORKER_INVALID_EXEC_ARGV") throw error;
    const refused = new Set(String(error.message).split(": ").slice(1).join(": ").split(", "));
    return new Worker(url, { ...options, execArgv: execArgv.filter((arg) => !refused.has(arg)) });
  }
}

// Workers inherit Node's flags, but not those only valid for a main script given as a
// string (`node --input-type=module -e …`), which make the worker fail to start.
function workerExecArgv(argv) {
  const out = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (["-e", "--eval", "-p", "--print", "--input-type"].includes(arg)) {
      i++;
      continue;
    }
    if (/^--(eval|print|input-type)=/.test(arg)) continue;
    out.push(arg);
  }
  return out;
}

// The worker script's URL as a message names it (without `new URL("./worker.js",
// import.meta.url)`, which bundlers would take for another reference to the worker).
function workerScriptName(url) {
  return url ? String(url) : String(import.meta.url).replace(/[^/]*$/, "worker.js");
}

// The buffers workers hand back (a job's input, once used), kept for the next copies up to
// this many bytes in all: each would otherwise be a new allocation whose pages are faulted
// in on first write, which for the samples of an encode took a fifth of a write's time on
// the calling thread.
const MAX_SPARE_BYTES = 16 << 20;
// …and at most this many (each copy searches them): enough for every chunk in flight.
const MAX_SPARES = 64;

// Hands a worker a module compiled here, under `key`; where it cannot be cloned, sends null
// and the worker compiles its own, of the same variant.
function postModule(worker, key, module, simd) {
  try {
    worker.post({ [key]: module, simd });
  } catch {
    worker.post({ [key]: null, simd });
  }
}


export class CodecPool {
  #size;
  #url;
  #workers = null; // Promise<Array<slot>>
  #jobs = new Map();
  #waiting = []; // [id, job]: for a worker with fewer than MAX_IN_FLIGHT_PER_WORKER chunks
  #nextId = 1;
  #fullDecoder = null; // Promise: the full decoder loaded on this thread
  #replacementsLeft;
  #startFailure = null; // why the first worker that did not start did not
  #warned = false;
  #spares = []; // ArrayBuffers workers handed back
  #spareBytes = 0;
  /** "workers" once at least one worker answered, "main-thread" after falling back. */
  mode = "pending";
  /**
   * Counters: workers handed the full decoder, chunks decoded on the calling thread (no
   * workers, a dead worker's jobs, or a chunk a worker could not decode even with the full
   * decoder), chunks encoded on the calling thread (no workers, a dead worker's jobs, or
   * arguments encode() refuses), and workers started in place of ones that died.
   */
  stats = { fullDecoderWorkers: 0, decodedHere: 0, encodedHere: 0, workersReplaced: 0 };

  constructor({ size = 1, workerUrl } = {}) {
    this.#size = Math.max(1, Math.floor(size));
    this.#url = workerUrl; // undefined: ./worker.js next to this module
    this.#replacementsLeft = REPLACEMENTS_PER_WORKER * this.#size;
  }

  /**
   * Decodes in a worker; resolves to the C-order samples. Rejects with the Error decode()
   * throws for the same arguments.
   */
  async decode(config, bytes, shape) {
    // The bytes as they are at this call: the rest of it may wait for the workers to start.
    const snapshot = this.#snapshot(bytes);
    // (a worker that died stays in the list until #retire takes it out)
    const workers = (await this.#start()).filter((w) => w.alive);
    if (workers.length === 0) return this.#decodeHere(config, snapshot ?? bytes, shape);
    // What a worker would be sent differently from what decode() reads here, or could not
    // be sent at all, is decoded here instead, which throws decode()'s Error for it:
    // bytes other than a Uint8Array (copying would convert a plain array or a
    // Float32Array, or make `n` zero bytes of a number `n`), empty ones (a detached view
    // cannot be copied), and a shape that is not an array. The configuration goes in its
    // normalised form, a plain object (a getter, a Proxy or a function member cannot be
    // cloned); an invalid one throws validateConfig()'s Error, decode()'s own.
    if (!(bytes instanceof Uint8Array) || bytes.length === 0 || !Array.isArray(shape)) {
      return decodeAsync(config, bytes, shape);
    }
    const normalised = validateConfig(config);
    return this.#submit(workers, { kind: DECODE, args: [normalised, bytes, shape], retried: false, copy: snapshot });
  }

  /**
   * Encodes in a worker (`encode()`'s arguments); resolves to the JPEG stream. Rejects with
   * the Error encode() throws for the same arguments. `data` is copied, never detached: by
   * default at this call, so the caller may change it at once; with `readWhenSent`, when a
   * worker takes the chunk (the caller leaves it unchanged until the promise settles), so
   * that no copy waits in memory for a worker: a zarrita write asks for every chunk at once.
   */
  async encode(config, data, shape, options = undefined, { readWhenSent = false } = {}) {
    const snapshot = readWhenSent ? null : this.#snapshot(data);
    // The encoder is compiled here once, for this thread's fallback and to hand to workers.
    await init();
    const workers = (await this.#start()).filter((w) => w.alive);
    if (workers.length === 0) return this.#encodeHere(config, snapshot ?? data, shape, options);
    // As for decode(): what encode() would refuse or read differently from a copy (samples
    // other than a non-empty Uint8Array, a shape that is not an array, options it refuses)
    // is encoded here, which throws encode()'s Error for it. Options go as a plain copy of
    // their members (a Proxy or a getter cannot be sent as it is).
    if (!(data instanceof Uint8Array) || data.length === 0 || !Array.isArray(shape) || encodeOptionsProblem(options)) {
      return this.#encodeHere(config, data, shape, options);
    }
    const normalised = validateConfig(config);
    const sentOptions = options == null ? undefined : { ...options };
    return this.#submit(workers, { kind: ENCODE, args: [normalised, data, shape, sentOptions], copy: snapshot });
  }

  // To the least busy worker, or to wait for one.
  #submit(workers, job) {
    const slot = workers.reduce((best, w) => (w.inflight < best.inflight ? w : best));
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      Object.assign(job, { resolve, reject, slot });
      if (slot.inflight < MAX_IN_FLIGHT_PER_WORKER) this.#post(id, job);
      else this.#waiting.push([id, job]); // with its snapshot, or read when sent
    });
  }

  // A copy of the bytes or samples as they are at the call, when they can be copied (what
  // cannot is refused or done here from the argument itself).
  #snapshot(input) {
    return input instanceof Uint8Array && input.length > 0 ? this.#copyOf(input) : null;
  }

  // A copy of `bytes` to transfer, in a spare buffer of about its size if there is one. Not
  // slice(): a Node Buffer's is a view of the caller's memory, which the transfer would detach.
  #copyOf(bytes) {
    const n = bytes.length;
    const i = this.#spares.findIndex((b) => b.byteLength >= n && b.byteLength <= 2 * n);
    if (i < 0) return new Uint8Array(bytes);
    const [spare] = this.#spares.splice(i, 1);
    this.#spareBytes -= spare.byteLength;
    const copy = new Uint8Array(spare, 0, n);
    copy.set(bytes);
    return copy;
  }

  #keepSpare(buffer) {
    if (!(buffer instanceof ArrayBuffer) || buffer.byteLength === 0) return;
    if (this.#spares.length >= MAX_SPARES || this.#spareBytes + buffer.byteLength > MAX_SPARE_BYTES) return;
    this.#spares.push(buffer);
    this.#spareBytes += buffer.byteLength;
  }

  // A worker answered: send it the next waiting chunk.
  #sendWaiting(slot) {
    if (this.#waiting.length === 0 || !slot.alive) return;
    const [id, job] = this.#waiting.shift();
    job.slot = slot;
    this.#post(id, job);
  }

  #decodeHere(config, bytes, shape) {
    this.stats.decodedHere++;
    return decodeAsync(config, bytes, shape);
  }

  async #encodeHere(config, data, shape, options) {
    this.stats.encodedHere++;
    await init();
    return encode(config, data, shape, options);
  }

  // A job on this thread: decoded or encoded here, from the copy taken while it waited if
  // it has one.
  #here(job) {
    const [config, bytes, shape, options] = job.args;
    const input = job.copy ?? bytes;
    return job.kind === ENCODE ? this.#encodeHere(config, input, shape, options) : this.#decodeHere(config, input, shape);
  }

  #post(id, job) {
    const [config, bytes, shape, options] = job.args;
    const slot = job.slot;
    try {
      if (job.kind === ENCODE && !slot.encoder) {
        // before its first encode
        postModule(slot.worker, ENCODER, compiledWasmModule(), codecUsesSimd());
        slot.encoder = true;
      }
      const copy = job.copy ?? this.#copyOf(bytes);
      const message = { id, kind: job.kind, config, bytes: copy, shape: Array.from(shape) };
      if (job.kind === ENCODE) message.options = options;
      job.sentLength = copy.length; // (0 once the buffer is transferred)
      slot.worker.post(message, [copy.buffer]);
      job.copy = null; // transferred
    } catch {
      // Not sendable (a shape whose getter throws or that holds a symbol, options holding a
      // function, bytes detached since they waited): done here, which throws decode()'s or
      // encode()'s Error for it. Nothing was recorded for the worker, so it is not left
      // waiting for an answer.
      job.resolve(this.#here(job));
      return;
    }
    this.#jobs.set(id, job);
    if (job.slot.inflight++ === 0) job.slot.worker.ref();
  }

  // The worker's module left this chunk to the full decoder: load it here (once), hand it
  // to the worker (once per worker) and send the chunk again; a second refusal, or a
  // worker that died meanwhile, decodes it on this thread.
  async #retryWithFullDecoder(id, job) {
    job.retried = true;
    const slot = job.slot;
    try {
      this.#fullDecoder ??= initFullDecoder().catch((error) => {
        this.#fullDecoder = null;
        throw error;
      });
      await this.#fullDecoder;
      if (!slot.alive) return job.resolve(this.#here(job));
      if (!slot.fullDecoder) {
        slot.fullDecoder = true;
        this.stats.fullDecoderWorkers++;
        postModule(slot.worker, FULL_DECODER, compiledFullDecoderModule(), fullDecoderUsesSimd());
      }
      this.#post(id, job);
    } catch (error) {
      job.reject(error);
    }
  }

  #start() {
    this.#workers ??= (async () => {
      // Compile the decoder once here (the fallback needs it anyway) and hand the module
      // to every worker.
      await initDecoder();
      this.#startFailure = null;
      const started = await Promise.all(Array.from({ length: this.#size }, () => this.#startOne()));
      const workers = started.filter(Boolean);
      this.mode = workers.length > 0 ? "workers" : "main-thread";
      if (workers.length === 0) this.#warnFallback();
      return workers;
    })();
    return this.#workers;
  }

  // Once per pool: decoding and encoding on the calling thread instead of in workers is what
  // a bundler that does not emit the worker script (esbuild) leads to, and would go unseen.
  #warnFallback() {
    if (this.#warned) return;
    this.#warned = true;
    console.warn(
      `jpeg: the pool's workers could not start from ${workerScriptName(this.#url)} ` +
        `(${this.#startFailure ?? "unknown reason"}); decoding and encoding on the calling thread instead. ` +
        "A bundler that does not emit the worker script (e.g. esbuild) needs register()'s workerUrl: " +
        'see the zarr-jpeg README, "Workers and bundlers".',
    );
  }

  #failedToStart(reason) {
    this.#startFailure ??= String(reason?.message ?? reason);
  }

  async #startOne() {
    let worker;
    try {
      worker = await spawn(this.#url);
    } catch (error) {
      this.#failedToStart(error);
      return null;
    }
    const slot = { worker, inflight: 0, alive: true };
    let answered = false; // the worker said whether it is ready
    return new Promise((resolve) => {
      worker.on("message", (message) => {
        if ("ready" in message) {
          answered = true;
          // Held open while starting (someone awaits it); idle afterwards. (Node also re-refs
          // a worker when a "message" listener is added, so this must come after that.)
          worker.unref();
          if (!message.ready) {
            this.#failedToStart(`the worker could not load the decoder: ${message.error?.message}`);
            slot.alive = false;
            worker.terminate();
          }
          return resolve(message.ready ? slot : null);
        }
        const job = this.#jobs.get(message.id);
        // The chunk left to the full decoder, or to this thread (the encoder did not load there).
        const needsFull = Boolean(message.error && job?.kind === DECODE && needsFullDecoder(message.error));
        const noEncoder = message.error?.kind === ENCODER_UNAVAILABLE;
        if (message.spare) {
          // Such a chunk is done again from its input as sent, which the worker hands back;
          // other inputs become spares.
          if (job && (needsFull || noEncoder)) job.copy = new Uint8Array(message.spare, 0, job.sentLength);
          else this.#keepSpare(message.spare);
        }
        if (!job) return;
        this.#jobs.delete(message.id);
        slot.inflight--;
        this.#sendWaiting(slot);
        if (slot.inflight === 0) worker.unref();
        if (needsFull) {
          if (!job.retried) this.#retryWithFullDecoder(message.id, job);
          else job.resolve(this.#here(job));
        } else if (noEncoder) job.resolve(this.#here(job));
        else if (message.error) job.reject(errorFromParts(message.error));
        else job.resolve(message.data);
      });
      const fail = (error) => {
        if (!slot.alive) return;
        if (!answered) this.#failedToStart(error instanceof Error ? error : `the worker exited with code ${error}`);
        slot.alive = false;
        resolve(null);
        this.#retire(slot);
      };
      worker.on("error", fail);
      worker.on("exit", fail);
      postModule(worker, "module", compiledDecoderModule(), decoderUsesSimd());
    });
  }

  // A worker died: take it out of the pool, finish its jobs on the calling thread and start
  // another in its place (within the pool's budget of replacements).
  async #retire(slot) {
    const pool = this.#workers;
    const workers = await pool;
    const i = workers?.indexOf(slot) ?? -1;
    if (i >= 0) workers.splice(i, 1);
    slot.worker.terminate();
    await initDecoder();
    this.#finishSentTo(new Set([slot]));
    // No worker is left to send the waiting chunks to.
    if (workers?.length === 0) {
      for (const [, job] of this.#waiting.splice(0)) this.#finishHere(job);
    }
    // (a worker that died before it was ready was never in the list: not replaced)
    if (i < 0 || this.#workers !== pool || this.#replacementsLeft <= 0) return;
    this.#replacementsLeft--;
    const fresh = await this.#startOne();
    if (!fresh) return;
    if (this.#workers !== pool || !fresh.alive) {
      // closed while it started (close() did not see it), or already dead
      fresh.alive = false;
      fresh.worker.terminate();
      return;
    }
    workers.push(fresh);
    this.stats.workersReplaced++;
    while (this.#waiting.length > 0 && fresh.inflight < MAX_IN_FLIGHT_PER_WORKER) this.#sendWaiting(fresh);
  }

  // The chunks sent to these workers, which will not answer them, finish on this thread.
  #finishSentTo(slots) {
    for (const [id, job] of this.#jobs) {
      if (!slots.has(job.slot)) continue;
      this.#jobs.delete(id);
      this.#finishHere(job);
    }
  }

  // A chunk no worker will answer: done on this thread.
  #finishHere(job) {
    job.resolve(this.#here(job));
  }

  /**
   * Terminates the workers; later calls start a fresh pool. Chunks they had not answered,
   * and those waiting for them, are decoded or encoded on this thread, so no read or write
   * is left pending.
   */
  async close() {
    const workers = this.#workers ? await this.#workers : [];
    this.#workers = null;
    this.#spares = [];
    this.#spareBytes = 0;
    this.mode = "pending";
    for (const slot of workers) {
      slot.alive = false;
      // Node does not keep the event loop alive for a worker being terminated once it was
      // unref()'d (idle, or between jobs): a process whose last work is this close() could
      // end before the worker's exit, its await unsettled (exit code 13, seen after a
      // conversion stopped by a bad tile). A timer holds it open meanwhile.
      const hold = setInterval(() => {}, 2 ** 30);
      try {
        await slot.worker.terminate();
      } finally {
        clearInterval(hold);
      }
    }
    // (a decode() during the awaits above went to a fresh pool: only the closed workers' jobs)
    const closed = new Set(workers);
    this.#finishSentTo(closed);
    const waiting = this.#waiting;
    this.#waiting = waiting.filter(([, job]) => !closed.has(job.slot));
    for (const [, job] of waiting) if (closed.has(job.slot)) this.#finishHere(job);
  }
}
