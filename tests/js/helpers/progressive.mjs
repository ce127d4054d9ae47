// The progressive fixtures (libjpeg-turbo's cjpeg and PIL), which only the full decoder
// decodes, with a configuration and chunk shape each.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const GRAY = { quality: 90, encoded_color_space: "grayscale" };
const YCC420 = { quality: 90, encoded_color_space: "ycbcr", subsampling: [[2, 2], [1, 1], [1, 1]] };

export const PROGRESSIVE = [
  { file: "gray_progressive_q90_cjpeg_61x47.jpg", config: GRAY, shape: [47, 61] },
  { file: "ycc420_progressive_q90_cjpeg_61x47.jpg", config: YCC420, shape: [47, 61, 3] },
  { file: "ycc420_progressive_q90_pil_61x47.jpg", config: YCC420, shape: [47, 61, 3] },
].map((f) => {
  const path = fileURLToPath(new URL(`../../fixtures/${f.file}`, import.meta.url));
  return { ...f, path, bytes: new Uint8Array(readFileSync(path)) };
});

/** A baseline fixture of the same size, which every module decodes. */
export const BASELINE = (() => {
  const path = fileURLToPath(new URL("../../fixtures/ycc420_q90_pil_61x47.jpg", import.meta.url));
  return { file: "ycc420_q90_pil_61x47.jpg", config: YCC420, shape: [47, 61, 3], path, bytes: new Uint8Array(readFileSync(path)) };
})();

/** A Map store holding one single-chunk array per fixture, at /0, /1, … */
export function storeOf(fixtures) {
  const store = new Map();
  store.set("/zarr.json", new TextEncoder().encode(JSON.stringify({ zarr_format: 3, node_type: "group", attributes: {} })));
  fixtures.forEach((f, i) => {
    const meta = {
      zarr_format: 3,
      node_type: "array",
      shape: f.shape,
      data_type: "uint8",
      chunk_grid: { name: "regular", configuration: { chunk_shape: f.shape } },
      chunk_key_encoding: { name: "default", configuration: { separator: "/" } },
      codecs: [{ name: "jpeg", configuration: f.config }],
      fill_value: 0,
    };
    store.set(`/${i}/zarr.json`, new TextEncoder().encode(JSON.stringify(meta)));
    store.set(`/${i}/c/${f.shape.map(() => 0).join("/")}`, f.bytes);
  });
  return store;
}
