import type { JpegCodecConfiguration, NormalizedJpegCodecConfiguration } from "../index.js";
import type { CodecChunk, CodecChunkInput, CodecChunkMetadata } from "../layout.js";

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
  /**
   * The chunk; a Promise of it when a codec pool decodes (register() with `workers`) or when
   * the stream needs the full decoder and it is not loaded yet (zarrita awaits either).
   */
  decode(bytes: Uint8Array): CodecChunk<Uint8Array> | Promise<CodecChunk<Uint8Array>>;
}
