// README's quick-start examples and docs/api.md's TypeScript examples, as written there, type-checked under --strict: a
// configuration written `as const` or with `satisfies JpegCodecConfiguration`, readonly
// shapes and option objects; a widened configuration is refused.
import { encode, encodeInto, decode, decodeInto, decodeAsync, validateConfig, register, JpegCodec, ReshapeCodec } from "../../dist/index.js";
import type { JpegCodecConfiguration, EncodeOptions, RegisterOptions } from "../../dist/index.js";
import { reshapeShape } from "../../dist/reshape.js";

declare const rgbBytes: Uint8Array;
declare const streamBuffer: Uint8Array;
declare const tileBuffer: Uint8Array;
declare const registry: Map<string, () => Promise<unknown>>;

export async function readmeAsConst(): Promise<void> {
  const config = { quality: 90, encoded_color_space: "ycbcr", subsampling: [[2, 2], [1, 1], [1, 1]] } as const;
  validateConfig(config);
  const jpeg = encode(config, rgbBytes, [512, 512, 3]);
  const n: number = encodeInto(config, rgbBytes, [512, 512, 3], streamBuffer);
  encode(config, rgbBytes, [512, 512, 3], { restartIntervals: false });
  encode(config, rgbBytes, [512, 512, 3], { trellis: true });
  encode(config, rgbBytes, [512, 512, 3], { quantTable: "flat", trellis: true });
  const back: Uint8Array = decode(config, jpeg, [512, 512, 3]);
  decodeInto(config, jpeg, [512, 512, 3], tileBuffer);
  const other: Uint8Array = await decodeAsync(config, jpeg, [512, 512, 3]);
  void n, back, other;
}

export function readmeSatisfies(): void {
  const config = { quality: 90, encoded_color_space: "ycbcr", subsampling: [[2, 2], [1, 1], [1, 1]] } satisfies JpegCodecConfiguration;
  const jpeg = encode(config, rgbBytes, [512, 512, 3]);
  decode(config, jpeg, [512, 512, 3]);
  const gray = { quality: 95, encoded_color_space: "grayscale" } satisfies JpegCodecConfiguration;
  encode(gray, rgbBytes, [512, 512]);
}

export function readonlyEverywhere(): void {
  const config = { quality: 90, encoded_color_space: "ycbcr", subsampling: [[2, 2], [1, 1], [1, 1]] } as const satisfies JpegCodecConfiguration;
  const shape = [256, 256, 3] as const;
  const options = { restartIntervals: false, trellis: true, quantTable: "flat" } as const satisfies EncodeOptions;
  encode(config, rgbBytes, shape, options);
  encodeInto(config, rgbBytes, shape, streamBuffer, options);
  const registerOptions = { workers: 2, workerUrl: "./worker.js", encodeOptions: options } as const satisfies RegisterOptions;
  void register(registry, registerOptions);
  const meta = { dataType: "uint8", shape: [4, 64, 64, 3], codecs: [{ name: "reshape", configuration: { shape: [[0, 1], [2], [3]] } }] } as const;
  const reshape = ReshapeCodec.fromConfig({ shape: [[0, 1], [2], [3]] } as const, meta);
  const chunk = { data: new Uint8Array(4 * 64 * 64 * 3), shape: [4, 64, 64, 3], stride: [12288, 192, 3, 1] } as const;
  reshape.encode(chunk);
  const sizes: number[] = reshapeShape({ shape: [-1, 3] } as const, shape);
  const codec = JpegCodec.fromConfig(config, { dataType: "uint8", shape } as const);
  void codec.encode({ data: rgbBytes, shape, stride: [768, 3, 1] } as const);
  void sizes;
}

export function widenedIsRefused(): void {
  const config = { quality: 90, encoded_color_space: "ycbcr", subsampling: [[2, 2], [1, 1], [1, 1]] };
  // @ts-expect-error: encoded_color_space widened to string (write the configuration `as const`)
  encode(config, rgbBytes, [512, 512, 3]);
  // @ts-expect-error: not a colour space
  encode({ quality: 90, encoded_color_space: "YCbCr" } as const, rgbBytes, [512, 512, 3]);
}
