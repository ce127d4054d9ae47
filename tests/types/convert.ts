// The converter's declarations (js/convert.d.ts): `import { convert } from "zarr-jpeg/convert"`.
import { convert, formatSummary, ConvertError, SUBSAMPLING, DEFAULTS } from "../../dist/convert.js";
import type { ConvertOptions, ConvertSummary, ConvertProgress } from "../../dist/convert.js";

export async function convertFile(): Promise<string> {
  const options = { quality: 90, subsampling: "4:2:0", chunk: 256, shard: 1024, trellis: true, quantTable: "flat" } as const satisfies ConvertOptions;
  const summary: ConvertSummary = await convert("image.png", "out.zarr", {
    ...options,
    onProgress: (event: ConvertProgress) => {
      if (event.phase === "chunk") void (event.levelChunksDone / event.levelChunksTotal);
      else void event.shape;
    },
    onWarning: (message: string) => void message,
  });
  const psnr: number = summary.psnr;
  const bytes: number = summary.levels[0].encodedBytes;
  void psnr, bytes;
  return formatSummary(summary);
}

export async function convertArray(): Promise<void> {
  try {
    await convert({ data: new Uint8Array(64 * 64 * 3), shape: [64, 64, 3] as const }, "out.zarr", { color: "rgb", channelAxis: "last", subsampling: SUBSAMPLING["4:4:4"] });
  } catch (error) {
    if (error instanceof ConvertError) void error.message;
  }
  // @ts-expect-error: not a colour space
  await convert("image.png", "out.zarr", { color: "RGB" });
  // @ts-expect-error: unknown option
  await convert("image.png", "out.zarr", { qualty: 90 });
  const summary = await convert({ data: new Uint8Array(16), shape: [4, 4] }, "small.zarr", { chunk: DEFAULTS.chunk, workers: 2 });
  void summary.config.decoded_color_space, summary.workers;
}
