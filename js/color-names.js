// Shared by the converter's API (SUBSAMPLING) and the demo (which imports it from the
// package): the J:a:b names of the spec's subsampling schemes, and luma as JPEG's Y.

/** J:a:b notation → the jpeg codec's `subsampling` (the four schemes the spec requires). */
export const SUBSAMPLING = Object.freeze({
  "4:4:4": [[1, 1], [1, 1], [1, 1]],
  "4:2:2": [[2, 1], [1, 1], [1, 1]],
  "4:4:0": [[1, 2], [1, 1], [1, 1]],
  "4:2:0": [[2, 2], [1, 1], [1, 1]],
});

/** Interleaved RGB → luma (ITU-R BT.601, JPEG's Y), rounded. */
export function rgbToLuma(rgb) {
  const out = new Uint8Array(rgb.length / 3);
  for (let i = 0; i < out.length; i++) {
    out[i] = Math.min(255, Math.round(0.299 * rgb[3 * i] + 0.587 * rgb[3 * i + 1] + 0.114 * rgb[3 * i + 2]));
  }
  return out;
}
