import type { EncodeOptions, JpegCodecConfiguration, NormalizedJpegCodecConfiguration } from "./index.js";
import type { CodecChunk, CodecChunkInput, CodecChunkMetadata } from "./reshape.js";
export { ReshapeCodec } from "./reshape.js";

/**
 * Anything with zarrita's registry shape (`zarr.registry`, a
 * `Map<string, () => Promise<CodecEntry>>`), without depending on zarrita's types.
 */
export interface CodecRegistry {
  set(name: string, loader: () => Promise<unknown>): unknown;
}

export interface RegisterOptions {
  /**
   * Decode and encode the jpeg codec's chunks in a pool of this many Web Workers (browsers)
   * or worker_threads (Node), e.g. `navigator.hardwareConcurrency`. 0 or absent: on the
   * calling thread. A whole number from 0 to 256; anything else, like an unknown option,
   * makes register() throw.
   */
  workers?: number;
  /**
   * Where the worker script is, if a bundler did not keep `dist/worker.js` next to the
   * package's modules (esbuild: bundle it yourself, README "Workers and bundlers"). A
   * non-empty string or a URL; anything else makes register() throw. When no worker starts,
   * the pool decodes and encodes on the calling thread and says so once with console.warn.
   */
  workerUrl?: string | URL;
  /**
   * How the jpeg codec writes chunks (`encode()`'s options), e.g. `{ restartIntervals: false }`
   * or `{ trellis: true }`. Checked by register() itself, which throws what encode() would.
   */
  encodeOptions?: EncodeOptions;
}

/** The pool of workers behind `{ workers }`, which decode and encode chunks. */
export interface CodecPool {
  /** "pending" until first use, then "workers", or "main-thread" after falling back. */
  readonly mode: "pending" | "workers" | "main-thread";
  /**
   * Workers handed the full decoder (loaded when a chunk needs it), chunks decoded and
   * chunks encoded on the calling thread, and workers started in place of ones that died
   * (at most two per worker of the pool; the chunks a dead worker held are done on the
   * calling thread).
   */
  readonly stats: {
    readonly fullDecoderWorkers: number;
    readonly decodedHere: number;
    readonly encodedHere: number;
    readonly workersReplaced: number;
  };
  /** decode() in a worker. */
  decode(config: JpegCodecConfiguration, bytes: Uint8Array, shape: readonly number[]): Promise<Uint8Array>;
  /**
   * encode() in a worker; `data` is copied, never detached: at this call, or with
   * `readWhenSent` when a worker takes the chunk (leave `data` unchanged until the promise
   * settles; no copy then waits in memory). Loads the encoder on first use.
   */
  encode(
    config: JpegCodecConfiguration,
    data: Uint8Array,
    shape: readonly number[],
    options?: EncodeOptions,
    how?: { readWhenSent?: boolean },
  ): Promise<Uint8Array>;
  /** Terminates the workers; chunks they had not answered are done on the calling thread. */
  close(): Promise<void>;
}

/** The name `CodecPool` had when the pool only decoded. */
export type DecodePool = CodecPool;

export interface Registration {
  /** The pool, when `workers` > 0. */
  readonly pool: CodecPool | null;
  /**
   * Terminates the pool's workers (idle workers never keep Node running); chunks they had
   * not answered are done on the calling thread, so no read or write is left pending.
   */
  close(): Promise<void>;
}

/**
 * Adds "jpeg", "reshape", "numcodecs.imagecodecs_jpeg" and "imagecodecs_jpeg" (decode-only:
 * tifffile's TIFF references and numcodecs' Zarr v2 compressor, imagecodecs' Zarr v3 array →
 * bytes codec, virtual-tiff's bytes → bytes codec; `colorspace_jpeg` and `colorspace_data`
 * honoured as imagecodecs does) to a zarrita registry. The decode-only WebAssembly module loads on first
 * use, the full decoder when a chunk first needs it (e.g. progressive), the encoder on
 * first write.
 */
export function register(registry: CodecRegistry, options?: RegisterOptions): Registration;

/** The jpeg array → bytes codec in zarrita's shape. Call `await init()` before `fromConfig`. */
export class JpegCodec {
  readonly kind: "array_to_bytes";
  /** The validated, normalised configuration. */
  readonly configuration: NormalizedJpegCodecConfiguration;
  /** The (H, W) or (H, W, C) shape of the JPEG image, after the array → array codecs before it. */
  readonly imageShape: number[];
  constructor(configuration: JpegCodecConfiguration, meta: CodecChunkMetadata);
  /** Validates eagerly: throws for an invalid configuration or a data type other than uint8. */
  static fromConfig(configuration: JpegCodecConfiguration, meta: CodecChunkMetadata): JpegCodec;
  /** Resolves to the JPEG stream; loads the encoder on first use (zarrita awaits it). */
  encode(chunk: CodecChunkInput<Uint8Array>): Promise<Uint8Array>;
  decode(bytes: Uint8Array): CodecChunk<Uint8Array>;
}
