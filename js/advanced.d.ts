import type { QuantTable, JpegCodecConfiguration, EncodeOptions, JpegColorSpace } from "./index.js";
import type { CodecPool as CodecPoolInstance } from "./register.js";
import type { JpegCodec } from "./codecs/jpeg.js";
import type { CodecChunkMetadata, CodecChunk } from "./layout.js";

/** True once initFullDecoder() has finished. */
export function isFullDecoderReady(): boolean;
/** True if this engine supports WebAssembly SIMD (simd128). */
export function simdSupported(): boolean;
/** Whether the loaded module (the whole codec's, else the decoder's, else the full decoder's) is the SIMD variant; undefined before loading. */
export function usesSimd(): boolean | undefined;
/** The compiled whole-codec module once init() has finished (structured-cloneable to workers). */
export function compiledWasmModule(): WebAssembly.Module | undefined;
/** The compiled decoder module once initDecoder() has finished (structured-cloneable to workers). */
export function compiledDecoderModule(): WebAssembly.Module | undefined;
/** The compiled full-decoder module once initFullDecoder() has finished (structured-cloneable to workers). */
export function compiledFullDecoderModule(): WebAssembly.Module | undefined;
/** True once init() has finished. */
export function isReady(): boolean;
/** Every `quantTable` value, in mozjpeg's `-quant-table` order (0–8). */
export const QUANT_TABLES: readonly QuantTable[];

/**
 * The complete JPEG stream of one TIFF tile: `tables` (a page's JPEGTables) spliced in after
 * SOI and, with `colorSpace`, colour markers that make the jpeg codec's rules read it as
 * that colour space; entropy-coded data copied unchanged. Needs a loaded module.
 */
export function completeTileStream(tile: Uint8Array, tables?: Uint8Array | null, colorSpace?: JpegColorSpace | null): Uint8Array;

/** The most workers register(), the pool and the converter take. */
export const MAX_WORKERS: number;

/** The pool behind register()'s `{ workers }`, usable on its own. */
export const CodecPool: {
  new (options?: { size?: number; workerUrl?: string | URL }): CodecPoolInstance;
};
export type CodecPool = CodecPoolInstance;

/** A JpegCodec class whose chunks decode and encode in `pool` (or here: null), with `encodeOptions` for every chunk written. */
export function makeJpegCodec(pool?: CodecPoolInstance | null, encodeOptions?: EncodeOptions): typeof JpegCodec;

/** The decode-only imagecodecs_jpeg codec class, decoding in `pool` (or here: null). */
export function makeImagecodecsJpegCodec(pool?: CodecPoolInstance | null): {
  new (configuration: Record<string, unknown>, meta: CodecChunkMetadata): {
    readonly kind: "array_to_bytes" | "bytes_to_bytes";
    decode(bytes: Uint8Array): Uint8Array | CodecChunk<Uint8Array> | Promise<Uint8Array | CodecChunk<Uint8Array>>;
  };
  fromConfig(configuration: Record<string, unknown>, meta: CodecChunkMetadata): { readonly kind: "array_to_bytes" | "bytes_to_bytes" };
};
