import type { CodecChunk, CodecChunkInput, CodecChunkMetadata } from "../layout.js";

/** One entry of the reshape codec's `shape`: a size, the input dimensions it merges, or -1 (inferred, at most once). */
export type ReshapeDimension = number | readonly number[];

/** The `configuration` member of a Zarr v3 `reshape` codec object (zarr-extensions codecs/reshape). */
export interface ReshapeCodecConfiguration {
  shape: readonly ReshapeDimension[];
}

/** Output shape of reshaping `inputShape`; throws an Error ("reshape: …") naming the broken rule. */
export function reshapeShape(configuration: ReshapeCodecConfiguration, inputShape: readonly number[]): number[];

/** The `reshape` array → array codec for zarrita; views (no copy) when the data is C-contiguous. */
export class ReshapeCodec {
  readonly kind: "array_to_array";
  /** The output shape B. */
  readonly shape: number[];
  constructor(configuration: ReshapeCodecConfiguration, meta: CodecChunkMetadata);
  static fromConfig(configuration: ReshapeCodecConfiguration, meta: CodecChunkMetadata): ReshapeCodec;
  getEncodedMeta<M extends CodecChunkMetadata>(meta: M): M;
  encode<T extends ArrayLike<unknown>>(chunk: CodecChunkInput<T>): CodecChunk<T>;
  decode<T extends ArrayLike<unknown>>(chunk: CodecChunkInput<T>): CodecChunk<T>;
}
