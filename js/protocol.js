// The messages between the pool (pool.js) and its workers (worker.js), named once here.
//
// pool → worker: first {module, simd} (the compiled decoder wasm, or no module where it
// could not be cloned: the worker compiles its own); then jobs {id, kind, config, bytes,
// shape[, options]} with kind DECODE or ENCODE; and, when needed, {[FULL_DECODER]: module,
// simd} or {[ENCODER]: module, simd} (a compiled module, or null: load it there), which
// later decodes, or encodes, wait for.
// worker → pool: {ready: true}, or {ready: false, error: {message}}; then for each job
// {id, data} (the samples or the stream, its buffer transferred) or {id, error: {message,
// kind}}, each with `spare`, the job's input buffer handed back for the pool's next copy.

/** A job's `kind`: decode JPEG bytes to samples. */
export const DECODE = "decode";
/** A job's `kind`: encode samples to a JPEG stream. */
export const ENCODE = "encode";
/** The key of the message that hands a worker the full decoder. */
export const FULL_DECODER = "fullDecoder";
/** The key of the message that hands a worker the whole codec, for encodes. */
export const ENCODER = "encoder";
/** The error `kind` of an encode job when the encoder did not load in the worker: the pool encodes it. */
export const ENCODER_UNAVAILABLE = "EncoderUnavailable";
/** Node's worker module, in a variable so that bundlers for the web leave it alone. */
export const NODE_WORKER_THREADS = "node:worker_threads";
