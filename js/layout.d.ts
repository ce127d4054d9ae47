/** What zarrita passes to a codec's fromConfig (`data_type` accepted as an older spelling). */
export interface CodecChunkMetadata {
  dataType?: string;
  data_type?: string;
  shape: readonly number[];
  codecs?: ReadonlyArray<{ name: string; configuration?: unknown }>;
  fillValue?: unknown;
}

/** A chunk as zarrita's codecs pass it: data in memory, its shape and strides (in elements). */
export interface CodecChunk<T extends ArrayLike<unknown> = ArrayLike<unknown>> {
  data: T;
  shape: number[];
  stride: number[];
}

/** A chunk as the codecs' encode()/decode() take it: CodecChunk, readonly shape and strides accepted. */
export interface CodecChunkInput<T extends ArrayLike<unknown> = ArrayLike<unknown>> {
  readonly data: T;
  readonly shape: readonly number[];
  readonly stride: readonly number[];
}
