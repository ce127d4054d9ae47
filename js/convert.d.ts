// `import { convert } from "zarr-jpeg/convert"` (Node only: it reads and writes files).
import type { EncodeOptions, JpegColorSpace, NormalizedJpegCodecConfiguration, QuantTable, SamplingFactors } from "./index.js";

/** What a ConvertError is about: an option or argument, the input, or the output. */
export type ConvertErrorKind = "InvalidArgument" | "InvalidInput" | "OutputUnavailable";

/**
 * A conversion the converter refuses; its message begins "zarr-jpeg convert: ", and `cause`
 * is set when it wraps another Error (a codec's, a file system's).
 */
export class ConvertError extends Error {
  constructor(message: string, options?: { kind?: ConvertErrorKind; cause?: unknown });
  readonly name: "ConvertError";
  readonly kind: ConvertErrorKind;
}

/** The chroma subsampling schemes by J:a:b name, as the jpeg codec's `subsampling`. */
export type SubsamplingName = "4:4:4" | "4:2:2" | "4:4:0" | "4:2:0";
export const SUBSAMPLING: Readonly<Record<SubsamplingName, readonly SamplingFactors[]>>;

export const DEFAULTS: Readonly<{ quality: 95; chunk: 256; subsampling: "4:2:0"; channelAxis: "first" }>;

/** Raw samples to convert instead of an image file: shape (H, W), (H, W, 1), (H, W, 3) or (H, W, 4) (alpha dropped). */
export interface ImageArray {
  data: Uint8Array;
  shape: readonly number[];
}

/** What convert() reports while it works: one "level" event as each level starts, one "chunk" event per chunk written. */
export type ConvertProgress =
  | { phase: "level"; level: number; shape: number[]; levels: number; chunksTotal: number; chunksDone: number }
  | {
      phase: "chunk";
      level: number;
      levelChunksDone: number;
      levelChunksTotal: number;
      levels: number;
      chunksTotal: number;
      chunksDone: number;
    };

export interface ConvertOptions {
  /** JPEG quality 1–100 (default 95). */
  quality?: number;
  /** Default: "ycbcr" for colour input, "grayscale" for grayscale input ("grayscale" on colour input converts to luma). */
  color?: JpegColorSpace;
  /** For color "ycbcr" only: a J:a:b name or the codec's `subsampling` (default "4:2:0"). */
  subsampling?: SubsamplingName | readonly SamplingFactors[] | null;
  /** Chunk side in pixels (default 256). */
  chunk?: number;
  /** A z-stack's z planes per chunk (default 1): each chunk's JPEG is its planes one above the other (reshape + jpeg). */
  chunkDepth?: number;
  /** A z-stack's levels halve z too, 2 × 2 × 2 averaging (default false: y and x only). */
  downsampleZ?: boolean;
  /** Store chunks inside shards of this side (sharding_indexed), a multiple of `chunk` (TIFF input: 0 for none; default there: levels of more than 1,024 chunks in shards of 16 × 16 chunks). */
  shard?: number | null;
  /** Number of pyramid levels (default: halve until one chunk holds the image). */
  levels?: number | null;
  /** "first": (c, y, x), OME-Zarr 0.5's order, with a transpose codec (default); "last": (y, x, c). */
  channelAxis?: "first" | "last";
  /** Multiscale name (default: the input file's name, or "image"). */
  name?: string;
  /** Physical pixel size for the scale transforms (default 1). */
  pixelSize?: number | null;
  /** Unit of the space axes, e.g. "micrometer". */
  unit?: string | null;
  /** encode()'s options. */
  restartIntervals?: boolean;
  trellis?: boolean;
  quantTable?: QuantTable;
  /**
   * Encode (and decode level 0 for the PSNR) in this many worker_threads, 0 to 256 (default
   * 0: on the calling thread; the CLI's default is a worker per core but one, 1 to 8). The store
   * written is the same either way. A TIFF's JPEG tiles are decoded in the same workers.
   */
  workers?: number;
  /** 16-bit TIFF input only: "auto" (the image's own min–max) or "MIN:MAX", mapped linearly to 0–255; without it 16-bit input is refused. */
  rescale?: "auto" | string | { min: number; max: number } | null;
  /**
   * A TIFF of JPEG tiles: each level 1+ is re-encoded at the lowest quality, from the tiles'
   * own up, at which a sample of it is at least this many dB (PSNR) from its exact 2×2
   * averages (default 30; 0: the tiles' quality for all). Refused with `quality`, which sets
   * them instead, and for other input.
   */
  levelPsnr?: number;
  /** Replace `output` if it is a Zarr store or an empty directory that does not hold the input. */
  overwrite?: boolean;
  onProgress?: (event: ConvertProgress) => void;
  onWarning?: (message: string) => void;
}

/** One level of the written pyramid. */
export interface ConvertLevelSummary {
  path: string;
  shape: number[];
  chunkShape: number[];
  shardShape: number[] | null;
  chunks: number;
  rawBytes: number;
  encodedBytes: number;
  ratio: number;
}

/** What convert() wrote. */
export interface ConvertSummary {
  /** The store's absolute path. */
  output: string;
  name: string;
  inputShape: number[];
  config: NormalizedJpegCodecConfiguration;
  encodeOptions: Required<EncodeOptions>;
  /** null for grayscale images. */
  channelAxis: "first" | "last" | null;
  levels: ConvertLevelSummary[];
  chunks: number;
  bytesWritten: number;
  encodedBytes: number;
  rawBytes: number;
  ratio: number;
  level0Ratio: number;
  /** PSNR of level 0 against the input, dB (Infinity when identical). */
  psnr: number;
  seconds: number;
  /** Worker threads that encoded the chunks: `workers`, or 0 where they could not start (then this thread did). */
  workers: number;
  warnings: string[];
  /** TIFF input: what was read (its first page). */
  source?: { format: "TIFF" | "BigTIFF"; page: string; pixelSize: { x: number; y: number; source: string } | null };
  /** TIFF input: level-0 tiles copied unchanged, decoded and re-encoded (another frame: progressive, other sampling or size), and empty (not stored). */
  tiles?: { copied: number; reencoded: number; empty: number };
  /** TIFF input: `config.quality` is the IJG quality nearest the tiles' quantisation tables (an estimate). */
  qualityEstimated?: boolean;
  /** TIFF input: the configuration of levels 1+ (level 0's is `config`), at level 1's quality. */
  levelConfig?: NormalizedJpegCodecConfiguration;
  /** TIFF input: the quality of each level 1+. */
  levelQualities?: number[];
  /** TIFF input: the PSNR target the qualities were chosen for (null: `quality`, or the tiles', for all). */
  levelPsnr?: number | null;
  /** 16-bit input: the window mapped to 0–255. */
  rescale?: { min: number; max: number };
  /** The input was read a band of rows at a time (PNG, baseline and extended sequential JPEG, TIFF pages that are not JPEG); false for a JPEG decoded whole (progressive). */
  streamed?: boolean;
}

/**
 * Converts an image (a PNG/JPEG/TIFF file path, or raw samples) into a JPEG-compressed
 * OME-Zarr 0.5 image at `output` (a directory that must not exist unless `overwrite`),
 * written under a temporary name and renamed at the end, by the Rust core's converter (the
 * same pipeline as the Python package's `zarr_jpeg.convert`). A TIFF (BigTIFF, OME-TIFF,
 * SVS) whose first page has 8-bit JPEG tiles keeps them: each level-0 chunk is its tile's
 * JPEG data made a complete stream (not re-encoded); `color`, `subsampling` and `chunk` do
 * not apply to it, `quality` sets levels 1+ only, and `shard` 0 turns the default sharding
 * of large levels (more than 1,024 chunks: shards of 16 × 16 chunks) off. Rejects with a
 * ConvertError for what it refuses.
 */
export function convert(input: string | ImageArray, output: string, options?: ConvertOptions): Promise<ConvertSummary>;

/** What exportPrecomputed() wrote. */
export interface PrecomputedExportSummary {
  /** The volume's absolute path. */
  output: string;
  format: "neuroglancer precomputed";
  /** One per level: size, chunk size (x, y, z) and resolution (nm). */
  scales: { key: string; size: number[]; chunkSize: number[]; resolution: number[] }[];
  /** Chunks copied from the Zarr store unchanged, re-encoded (clipped at the bounds), and missing. */
  chunks: { copied: number; reencoded: number; missing: number };
  bytesWritten: number;
  seconds: number;
  warnings: string[];
}

/**
 * Writes the JPEG OME-Zarr image or volume in the directory `input` as the neuroglancer
 * precomputed volume `output` ("encoding": "jpeg", unsharded, one scale per level), its
 * chunks copied where the layouts agree and re-encoded at `quality` where precomputed clips
 * them. Rejects with a ConvertError for what it refuses.
 */
export function exportPrecomputed(
  input: string,
  output: string,
  options?: { quality?: number; workers?: number; overwrite?: boolean; onProgress?: (event: object) => void; onWarning?: (message: string) => void },
): Promise<PrecomputedExportSummary>;

/** A few lines for people: what was written, how small, how faithful (the CLI's summary). Throws a TypeError for a summary that did not come from convert() (its text is not kept through JSON). */
export function formatSummary(summary: ConvertSummary): string;
