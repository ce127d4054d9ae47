/** The colour spaces of the jpeg codec's configuration. */
export type JpegColorSpace = "grayscale" | "ycbcr" | "rgb";

/** One component's [horizontal, vertical] JPEG sampling factors, each 1–4 (readonly tuples, e.g. `as const`, accepted). */
export type SamplingFactors = readonly [number, number];

/**
 * The `configuration` member of a Zarr v3 `jpeg` codec object. A literal assigned to a
 * variable first widens (`encoded_color_space: string`): write it `as const`, or
 * `satisfies JpegCodecConfiguration`, or annotate the variable.
 */
export interface JpegCodecConfiguration {
  /** Encoder quality, an integer from 1 to 100 (required; 95 is the recommended default). */
  quality: number;
  /** Colour space of the samples inside the JPEG stream (required). */
  encoded_color_space: JpegColorSpace;
  /** Colour space of the chunk data; defaults to grayscale for grayscale, else rgb. */
  decoded_color_space?: JpegColorSpace;
  /** Per-component sampling factors; required for ycbcr, e.g. [[2, 2], [1, 1], [1, 1]] for 4:2:0. */
  subsampling?: readonly SamplingFactors[];
}

/** A configuration after validation: `decoded_color_space` filled in, `subsampling` only for ycbcr. */
export interface NormalizedJpegCodecConfiguration extends JpegCodecConfiguration {
  decoded_color_space: JpegColorSpace;
}

/**
 * What went wrong, on every Error the package throws (docs/api.md, "Errors"). A codec's
 * message begins with its name ("jpeg: ", "imagecodecs_jpeg: ", "reshape: "), the package's
 * own with "zarr-jpeg: ".
 */
export type JpegErrorKind =
  /** An argument or option of a package function (init(), register(), checkDataset()). */
  | "InvalidArgument"
  /** The WebAssembly module the call needs is not loaded: `await init()` first. */
  | "NotInitialized"
  /** The engine lacks what the call needs (WebAssembly SIMD when asked for, DecompressionStream, Worker). */
  | "EnvironmentUnsupported"
  /** A WebAssembly module or a worker script could not be loaded. */
  | "LoadFailed"
  /** The WebAssembly instance trapped and was replaced: this call failed, later calls work. */
  | "InstanceTrapped"
  | "InvalidConfiguration"
  | "InvalidShape"
  | "InvalidData"
  | "UnsupportedStream"
  | "CorruptStream"
  | "StreamMismatch"
  /**
   * The stream needs the full decoder (e.g. a progressive stream) and it is not loaded:
   * `await initFullDecoder()` and retry, or use decodeAsync(); register() does this itself.
   */
  | "NeedsFullDecoder";

/**
 * Loads the WebAssembly module; idempotent. Call (and await) before encode/decode/validateConfig.
 * `module`: an already compiled module to instantiate instead (what the pool hands its workers).
 */
export function init(options?: InitOptions): Promise<void>;
/**
 * Loads only the decoder (decode, validateConfig): a smaller download for viewers; idempotent.
 * `module`: an already compiled decoder module to instantiate instead.
 */
export function initDecoder(options?: InitOptions): Promise<void>;
/**
 * Loads the full decoder (all of zune-jpeg: progressive streams too), which decode() and
 * decodeInto() then use for the streams the other modules leave to it (Errors of kind
 * "NeedsFullDecoder" before). Idempotent. `simd` defaults to the variant already loaded;
 * `module`: an already compiled full-decoder module to instantiate instead.
 */
export function initFullDecoder(options?: InitOptions): Promise<void>;
export interface InitOptions {
  /** An already compiled module to instantiate instead of the inlined one. */
  module?: WebAssembly.Module;
  /**
   * Which variant: false = the scalar module, true = the wasm SIMD one (an Error where the
   * engine lacks SIMD); by default SIMD wherever the engine supports it. With `module`, says
   * which variant that module is. The first init()/initDecoder() call's options decide.
   */
  simd?: boolean;
}
/** Validates a configuration; returns its normalised form or throws an Error naming the problem. */
export function validateConfig(config: unknown): NormalizedJpegCodecConfiguration;
/** How a stream is written beyond its configuration (which the spec fixes). */
export interface EncodeOptions {
  /**
   * Restart intervals of 64 image rows in chunks taller than that (default true): this
   * package decodes two intervals at a time (about 1.07× faster); libjpeg-turbo and
   * Chromium's own decoder (ImageDecoder, createImageBitmap) read them within a few per cent
   * of their speed without them; 0.0–0.7 % more bytes. Turn off for the last few bytes of
   * small chunks, or for a reader whose decoder does not handle restart markers.
   */
  restartIntervals?: boolean;
  /**
   * Rate–distortion-optimised ("trellis") quantisation (default false): per 8×8 block, the
   * quantised AC coefficients that minimise squared error + λ · bits (mozjpeg's trellis with
   * its `-tune-psnr` weighting). Fewer bytes at the same quality, and fewer at equal PSNR
   * (about 3 % on colour microscopy, 8 % on grayscale; docs/api.md "Trellis quantisation"), for an
   * encode 3–4× slower. Changes the samples slightly (slightly lower PSNR per quality
   * setting); any JPEG decoder reads the stream.
   */
  trellis?: boolean;
  /**
   * The base quantisation tables that `quality` scales, as IJG libjpeg scales them (default
   * "annex-k", ITU-T T.81 Annex K, every libjpeg's). The others are mozjpeg's set, in the
   * order of its `-quant-table` 0–8: "flat" quantises every frequency alike, which gives the
   * fewest bytes at equal PSNR on the colour sample (about 11 % fewer; 16 % with trellis);
   * "ms-ssim" (tuned for MS-SSIM) and "peterson" about 10 % fewer with trellis on the
   * grayscale one; "imagemagick"
   * (N. Robidoux's, mozjpeg's default); "psnr-hvs"; "klein", "watson", "ahumada" and
   * "peterson" from the papers mozjpeg names. docs/api.md "Quantisation tables" explains them; bench/README.md has the figures.
   * The same `quality` gives another size and PSNR with each table.
   */
  quantTable?: QuantTable;
}
/** The values of the encode option `quantTable`, in mozjpeg's `-quant-table` order. */
export type QuantTable = "annex-k" | "flat" | "ms-ssim" | "imagemagick" | "psnr-hvs" | "klein" | "watson" | "ahumada" | "peterson";
/** Encodes C-order uint8 samples of shape (H, W), (H, W, 1) or (H, W, 3) as a baseline JPEG stream. */
export function encode(config: JpegCodecConfiguration, data: Uint8Array, shape: readonly number[], options?: EncodeOptions | null): Uint8Array;
/**
 * encode() into `out`, a Uint8Array the caller reuses, so a writer allocates no array per
 * chunk; returns the stream's length (the stream is `out.subarray(0, length)`). `out` is
 * written only if the whole stream fits; otherwise an Error of kind "InvalidData" says how
 * many bytes the stream needs.
 */
export function encodeInto(config: JpegCodecConfiguration, data: Uint8Array, shape: readonly number[], out: Uint8Array, options?: EncodeOptions | null): number;
/**
 * Decodes a JPEG stream to the C-order uint8 samples of `shape`. A stream that needs the
 * full decoder (e.g. progressive) throws an Error of kind "NeedsFullDecoder" unless
 * initFullDecoder() has finished (then it decodes there).
 */
export function decode(config: JpegCodecConfiguration, bytes: Uint8Array, shape: readonly number[]): Uint8Array;
/**
 * Decodes a JPEG stream into `out`, a Uint8Array of exactly the chunk's byte length, so a
 * caller that reuses its buffers allocates none per chunk; `out` is written only on success.
 */
export function decodeInto(config: JpegCodecConfiguration, bytes: Uint8Array, shape: readonly number[], out: Uint8Array): void;
/**
 * decode(), loading the full decoder first when the stream needs it (and the decoder when
 * nothing is loaded yet): what register() does on the main thread.
 */
export function decodeAsync(config: JpegCodecConfiguration, bytes: Uint8Array, shape: readonly number[]): Promise<Uint8Array>;

/** An Error the package throws: its `kind` says what went wrong (JpegErrorKind). */
export interface JpegError extends Error {
  kind: JpegErrorKind;
}

export { register } from "./register.js";
export type { CodecRegistry, RegisterOptions, Registration, CodecPool } from "./register.js";
export { JpegCodec } from "./codecs/jpeg.js";
export { ReshapeCodec } from "./codecs/reshape.js";
export type { ReshapeCodecConfiguration, ReshapeDimension } from "./codecs/reshape.js";
export type { CodecChunk, CodecChunkInput, CodecChunkMetadata } from "./layout.js";
