// Benchmark inputs: the two sample images, tiled to 2048² and cropped to chunk sizes.
// Tiling repeats the image from the top-left corner (numpy.tile semantics) and crops to
// the target; crops are taken from the centre of the original image.
import fs from "node:fs";
import { PNG } from "pngjs";

/** Loads a PNG as { width, height, channels, data } with 3 (RGB) or 1 (gray) channels. */
export function loadPng(file, channels) {
  const png = PNG.sync.read(fs.readFileSync(file));
  const { width, height } = png;
  const data = new Uint8Array(width * height * channels);
  for (let i = 0, n = width * height; i < n; i++) {
    for (let c = 0; c < channels; c++) data[i * channels + c] = png.data[i * 4 + c];
  }
  return { width, height, channels, data };
}

export function tile(img, size) {
  const { width, height, channels, data } = img;
  const out = new Uint8Array(size * size * channels);
  for (let y = 0; y < size; y++) {
    const sy = y % height;
    for (let x = 0; x < size; x++) {
      const s = (sy * width + (x % width)) * channels;
      const d = (y * size + x) * channels;
      for (let c = 0; c < channels; c++) out[d + c] = data[s + c];
    }
  }
  return { width: size, height: size, channels, data: out };
}

export function centreCrop(img, size) {
  const { width, height, channels, data } = img;
  if (size > width || size > height) return tile(img, size);
  const x0 = (width - size) >> 1;
  const y0 = (height - size) >> 1;
  const out = new Uint8Array(size * size * channels);
  for (let y = 0; y < size; y++) {
    const s = ((y0 + y) * width + x0) * channels;
    out.set(data.subarray(s, s + size * channels), y * size * channels);
  }
  return { width: size, height: size, channels, data: out };
}

/** Netpbm (PPM for RGB, PGM for gray): tjbench's input format. */
export function toNetpbm(img) {
  const header = Buffer.from(`${img.channels === 3 ? "P6" : "P5"}\n${img.width} ${img.height}\n255\n`);
  return Buffer.concat([header, Buffer.from(img.data.buffer, img.data.byteOffset, img.data.byteLength)]);
}

/**
 * The RGB samples of the zarrita read benchmarks (bench/zarrita-blocking.mjs,
 * bench/zarrita-floor.mjs): ihc.png tiled over an n×n array, each 512² tile shifted so
 * that neighbouring chunks differ. C order, 3 samples per pixel.
 */
export function ihcMosaic(n) {
  const png = PNG.sync.read(fs.readFileSync(new URL("../../samples/ihc.png", import.meta.url)));
  const data = new Uint8Array(n * n * 3);
  for (let y = 0; y < n; y++) {
    for (let x = 0; x < n; x++) {
      const i = (y * n + x) * 3;
      const j = (((y + (x >> 9) * 37) % png.height) * png.width + ((x + (y >> 9) * 53) % png.width)) * 4;
      data[i] = png.data[j];
      data[i + 1] = png.data[j + 1];
      data[i + 2] = png.data[j + 2];
    }
  }
  return data;
}
