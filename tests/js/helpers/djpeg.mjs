// libjpeg-turbo's `djpeg -pnm` as the independent reference decode, and a comparison.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";

/** Decodes a file with `djpeg -pnm`: { channels, width, height, samples }. */
export function djpeg(file) {
  const pnm = execFileSync("djpeg", ["-pnm", file], { maxBuffer: 1 << 26 });
  // P5/P6, width, height, maxval, one whitespace byte, then the samples.
  const header = /^(P[56])\s+(\d+)\s+(\d+)\s+(\d+)\s/.exec(pnm.subarray(0, 64).toString("latin1"));
  assert.ok(header && header[4] === "255", `djpeg wrote an unexpected header for ${file}`);
  return { channels: header[1] === "P6" ? 3 : 1, width: Number(header[2]), height: Number(header[3]), samples: pnm.subarray(header[0].length) };
}

// What tests/interop.rs allows natively (max 4 in 4:2:0, where zune-jpeg's chroma
// upsampling rounds differently from libjpeg-turbo's).
export const MAX_DIFF_VS_LIBJPEG = 4;
export const MEAN_DIFF_VS_LIBJPEG = 0.4;

/** Asserts `ours` is within the bounds above of djpeg's decode of `file`. */
export function assertLikeDjpeg(ours, file, label = file) {
  const ref = djpeg(file);
  assert.equal(ours.length, ref.samples.length, `${label}: length`);
  let max = 0;
  let sum = 0;
  for (let i = 0; i < ours.length; i++) {
    const d = Math.abs(ours[i] - ref.samples[i]);
    sum += d;
    if (d > max) max = d;
  }
  const mean = sum / ours.length;
  assert.ok(max <= MAX_DIFF_VS_LIBJPEG, `${label}: max |ours - djpeg| = ${max} > ${MAX_DIFF_VS_LIBJPEG}`);
  assert.ok(mean <= MEAN_DIFF_VS_LIBJPEG, `${label}: mean |ours - djpeg| = ${mean.toFixed(3)} > ${MEAN_DIFF_VS_LIBJPEG}`);
}
