// The example configurations of the jpeg codec spec ("Examples" section).
export const SPEC_EXAMPLES = [
  { quality: 90, encoded_color_space: "ycbcr", subsampling: [[2, 2], [1, 1], [1, 1]] },
  { quality: 90, encoded_color_space: "grayscale" },
  { quality: 95, encoded_color_space: "ycbcr", subsampling: [[1, 1], [1, 1], [1, 1]] },
  { quality: 90, encoded_color_space: "rgb" },
  { quality: 90, encoded_color_space: "ycbcr", decoded_color_space: "ycbcr", subsampling: [[2, 2], [1, 1], [1, 1]] },
];

/** Interleaved RGB → YCbCr (JFIF, T.871), for feeding the ycbcr passthrough example real YCbCr. */
export function rgbToYcbcr(rgb) {
  const out = new Uint8Array(rgb.length);
  const clamp = (v) => Math.min(255, Math.max(0, Math.round(v)));
  for (let i = 0; i < rgb.length; i += 3) {
    const [r, g, b] = [rgb[i], rgb[i + 1], rgb[i + 2]];
    out[i] = clamp(0.299 * r + 0.587 * g + 0.114 * b);
    out[i + 1] = clamp(128 - 0.168736 * r - 0.331264 * g + 0.5 * b);
    out[i + 2] = clamp(128 + 0.5 * r - 0.418688 * g - 0.081312 * b);
  }
  return out;
}
