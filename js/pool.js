// A pool of decode workers (Web Workers in browsers, worker_threads in Node). JPEG bytes go
// to a worker as a transferred copy (the store's buffer may be shared, e.g. a cached
// shard); decoded samples come back transferred. Where workers cannot start (no Worker,
// a blocked or missing worker script), decoding falls back to the calling thread.
// Workers start with the decoder module; when a chunk needs the full decoder (the worker
// answers with an Error of kind "NeedsFullDecoder"), the pool loads it here once, hands the
// compiled module to that worker and sends the chunk again.
import {
  initDecoder,
  initFullDecoder,
  decodeAsync,
  compiledDecoderModule,
  decoderUsesSimd,
  compiledFullDecoderModule,
  fullDecoderUsesSimd,
  needsFullDecoder,
  validateConfig,
} from "./loader.js";

const NODE_WORKER_THREADS = "node:worker_threads"; // a variable, so bundlers for the web leave it alone
// Chunks sent to a worker before it answers; the rest wait here. Enough to keep a worker busy
// through the calling thread's pauses; few enough that Node, which handles every message
// already queued on a port in one go, does not block this thread through a whole read.
const MAX_IN_FLIGHT_PER_WORKER = 16;
// Workers started in place of ones that died, per worker of the pool: a worker killed from
// outside (memory pressure, a crash) is replaced, one that dies whatever it is sent is not
// restarted for ever.
const REPLACEMENTS_PER_WORKER = 2;
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
  if (typeof Worker !== "function") throw new Error("no Worker in this environment");
  // The literal `new Worker(new URL("./worker.js", import.meta.url), …)` form is what Vite and
  // webpack recognise to emit the worker with the bundle.
  const worker = url
    ? new Worker(url, { type: "module" })
    : new Worker(new URL("./worker.js", import.meta.url), { type: "module" });
  return {
    on(type, fn) {
      if (type === "message") worker.addEventListener("message", (event) => fn(event.data));
      else if (type === "error") {
        worker.addEventListener("error", (event) => fn(new Error(event.message || "worker failed to load")));
        worker.addEventListener("messageerror", () => fn(new Error("worker message could not be deserialised")));
      }
    },
    post: (message, transfer) => worker.postMessage(message, transfer),
    ref() {},
    unref() {},
    terminate: () => worker.terminate(),
  };
}

// Node refuses a worker V8 and process-wide flags (e.g. --max-old-space-size, --expose-gc),
// which apply to its threads anyway, with an error that names them: start it without them.
function newNodeWorker(Worker, url, execArgv) {
  try {
    return new Worker(url, { execArgv });
  } catch (error) {
    if (error?.code !== "ERR_WORKER_INVALID_EXEC_ARGV") throw error;
    const refused = new Set(String(error.message).split(": ").slice(1).join(": ").split(", "));
    return new Worker(url, { execArgv: execArgv.filter((arg) => !refused.has(arg)) });
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

// Not slice(): a Node Buffer's is a view of the caller's memory, which the transfer would detach.
function copyOf(bytes) {
  return new Uint8Array(bytes);
}

function rebuildError({ message, kind }) {
  const error = new Error(message);
  if (kind !== undefined) error.kind = kind;
  return error;
}

export class DecodePool {
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
  /** "workers" once at least one worker answered, "main-thread" after falling back. */
  mode = "pending";
  /**
   * Counters: workers handed the full decoder, chunks decoded on the calling thread (no
   * workers, a dead worker's jobs, or a chunk a worker could not decode even with the full
   * decoder), and workers started in place of ones that died.
   */
  stats = { fullDecoderWorkers: 0, decodedHere: 0, workersReplaced: 0 };

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
    // (a worker that died stays in the list until #retire takes it out)
    const workers = (await this.#start()).filter((w) => w.alive);
    if (workers.length === 0) return this.#decodeHere(config, bytes, shape);
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
    const slot = workers.reduce((best, w) => (w.inflight < best.inflight ? w : best));
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      const job = { resolve, reject, slot, args: [normalised, bytes, shape], retried: false };
      if (slot.inflight < MAX_IN_FLIGHT_PER_WORKER) this.#post(id, job);
      else {
        job.copy = copyOf(bytes); // the bytes as they are now, as if sent now
        this.#waiting.push([id, job]);
      }
    });
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

  #post(id, job) {
    const [config, bytes, shape] = job.args;
    let message;
    try {
      const copy = job.copy ?? copyOf(bytes);
      message = { id, config, bytes: copy, shape: Array.from(shape) };
      job.slot.worker.post(message, [copy.buffer]);
      job.copy = null; // transferred
    } catch {
      // Not sendable (a shape whose getter throws or that holds a symbol, bytes detached
      // since they waited): decoded here, which throws decode()'s Error for it. Nothing
      // was recorded for the worker, so it is not left waiting for an answer.
      job.resolve(this.#decodeHere(config, job.copy ?? bytes, shape));
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
      if (!slot.alive) return job.resolve(this.#decodeHere(...job.args));
      if (!slot.fullDecoder) {
        slot.fullDecoder = true;
        this.stats.fullDecoderWorkers++;
        const simd = fullDecoderUsesSimd();
        try {
          slot.worker.post({ fullDecoder: compiledFullDecoderModule(), simd });
        } catch {
          // The module could not be cloned here: the worker compiles its own, of the same variant.
          slot.worker.post({ fullDecoder: null, simd });
        }
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

  // Once per pool: decoding on the calling thread instead of in workers is what a
  // bundler that does not emit the worker script (esbuild) leads to, and would go unseen.
  #warnFallback() {
    if (this.#warned) return;
    this.#warned = true;
    console.warn(
      `jpeg: the decode pool's workers could not start from ${workerScriptName(this.#url)} ` +
        `(${this.#startFailure ?? "unknown reason"}); decoding on the calling thread instead. ` +
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
        if (!job) return;
        this.#jobs.delete(message.id);
        slot.inflight--;
        this.#sendWaiting(slot);
        if (slot.inflight === 0) worker.unref();
        if (message.error && needsFullDecoder(message.error)) {
          if (!job.retried) this.#retryWithFullDecoder(message.id, job);
          else job.resolve(this.#decodeHere(...job.args));
        } else if (message.error) job.reject(rebuildError(message.error));
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
      try {
        worker.post({ module: compiledDecoderModule(), simd: decoderUsesSimd() });
      } catch {
        // The module could not be cloned here: the worker compiles its own, of the same variant.
        worker.post({ simd: decoderUsesSimd() });
      }
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

  // A chunk no worker will answer: decoded on this thread, from the copy taken while it
  // waited if it has one.
  #finishHere(job) {
    const [config, bytes, shape] = job.args;
    job.resolve(this.#decodeHere(config, job.copy ?? bytes, shape));
  }

  /**
   * Terminates the workers; later decodes start a fresh pool. Chunks they had not answered,
   * and those waiting for them, decode on this thread, so no read is left pending.
   */
  async close() {
    const workers = this.#workers ? await this.#workers : [];
    this.#workers = null;
    this.mode = "pending";
    for (const slot of workers) {
      slot.alive = false;
      await slot.worker.terminate();
    }
    // (a decode() during the awaits above went to a fresh pool: only the closed workers' jobs)
    const closed = new Set(workers);
    this.#finishSentTo(closed);
    const waiting = this.#waiting;
    this.#waiting = waiting.filter(([, job]) => !closed.has(job.slot));
    for (const [, job] of waiting) if (closed.has(job.slot)) this.#finishHere(job);
  }
}
