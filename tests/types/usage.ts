// Type-checks user code against zarrita's own types, with no casts:
//   npx tsc -p tests/types     (after `npm run build`; tests/js/types.test.mjs runs it)
import * as zarr from "zarrita";
import { init, validateConfig, encodeInto, decodeInto } from "../../dist/index.js";
import { QUANT_TABLES } from "../../dist/advanced.js";
import type { EncodeOptions, JpegCodecConfiguration, QuantTable } from "../../dist/index.js";
import { register, JpegCodec, ReshapeCodec } from "../../dist/index.js";
import type { Registration, RegisterOptions } from "../../dist/index.js";
import { reshapeShape } from "../../dist/codecs/reshape.js";

export async function view(url: string): Promise<Uint8Array> {
  const handle: Registration = register(zarr.registry);
  const options: RegisterOptions = { workers: navigator.hardwareConcurrency };
  const pooled = register(zarr.registry, options);
  const { decodedHere, workersReplaced } = pooled.pool?.stats ?? { decodedHere: 0, workersReplaced: 0 };
  void (decodedHere + workersReplaced);
  const arr = await zarr.open(new zarr.FetchStore(url + "/0"), { kind: "array" });
  if (!arr.is("uint8")) throw new Error("not uint8");
  const { data, shape } = await zarr.get(arr, [null, null, null]);
  const first: number = shape[0];
  void first;
  await handle.close();
  return data;
}

export async function write(): Promise<void> {
  register(zarr.registry);
  const configuration: JpegCodecConfiguration = { quality: 95, encoded_color_space: "ycbcr", subsampling: [[2, 2], [1, 1], [1, 1]] };
  const arr = await zarr.create(new Map<string, Uint8Array>(), {
    shape: [512, 512, 3],
    chunkShape: [256, 256, 3],
    dtype: "uint8",
    codecs: [{ name: "jpeg", configuration: { ...configuration } }],
  });
  await zarr.set(arr, null, { data: new Uint8Array(512 * 512 * 3), shape: [512, 512, 3], stride: [1536, 3, 1] });
  await init();
  const normalised = validateConfig(configuration);
  const codec = JpegCodec.fromConfig(normalised, { dataType: "uint8", shape: [256, 256, 3], codecs: [] });
  const bytes: Uint8Array = await codec.encode({ data: new Uint8Array(256 * 256 * 3), shape: [256, 256, 3], stride: [768, 3, 1] });
  // a Promise when a pool decodes or the full decoder must load first (zarrita awaits either)
  const chunk = await codec.decode(bytes);
  const samples: Uint8Array = chunk.data;
  void samples;
  // reused buffers: the stream is streamBuffer.subarray(0, length)
  const streamBuffer = new Uint8Array(256 * 256 * 3);
  const length: number = encodeInto(configuration, chunk.data, [256, 256, 3], streamBuffer);
  // streams for readers that use the browser's own decoder: no restart intervals
  const plain: EncodeOptions = { restartIntervals: false };
  encodeInto(configuration, chunk.data, [256, 256, 3], streamBuffer, plain);
  register(zarr.registry, { encodeOptions: plain });
  // fewer bytes at equal PSNR, slower encode
  const smaller: EncodeOptions = { trellis: true, restartIntervals: true };
  encodeInto(configuration, chunk.data, [256, 256, 3], streamBuffer, smaller);
  // fewest bytes at equal PSNR on colour microscopy: flat tables (and trellis)
  const table: QuantTable = QUANT_TABLES[1];
  encodeInto(configuration, chunk.data, [256, 256, 3], streamBuffer, { quantTable: table, trellis: true });
  // @ts-expect-error: not a table name
  encodeInto(configuration, chunk.data, [256, 256, 3], streamBuffer, { quantTable: "Flat" });
  decodeInto(configuration, streamBuffer.subarray(0, length), [256, 256, 3], chunk.data);
  const reshape = ReshapeCodec.fromConfig({ shape: [[0, 1], [2], [3]] }, { dataType: "uint8", shape: [4, 64, 64, 3] });
  const b: number[] = reshape.shape;
  const c: number[] = reshapeShape({ shape: [-1, 3] }, [4, 4, 3]);
  void b, c;
}
