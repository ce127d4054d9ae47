// `zarr-jpeg/convert`: images (PNG, JPEG, TIFF/BigTIFF/OME-TIFF/SVS, or samples in memory)
// into JPEG OME-Zarr, by the Rust core's converter (the converter wasm module; the Python
// package runs the same pipeline natively). The file-system side is ./convert-files.js.
import { convertFile, convertSamples, exportPrecomputed, ConvertError, argumentProblem } from "./convert-files.js";
import { argumentError } from "./errors.js";
import { SUBSAMPLING } from "./color-names.js";

export { ConvertError, SUBSAMPLING, exportPrecomputed };

export const DEFAULTS = Object.freeze({ quality: 95, chunk: 256, subsampling: "4:2:0", channelAxis: "first" });

/**
 * Converts `input` (an image file path, or `{ data: Uint8Array, shape }` samples) into the
 * store directory `output`. → the summary; its lines for people are formatSummary(summary).
 */
export async function convert(input, output, options = {}) {
  if (typeof input === "string") return convertFile(input, output, options);
  if (input !== null && typeof input === "object" && "data" in input) {
    return convertSamples(input.data, input.shape, output, options);
  }
  throw argumentProblem("input must be an image file path or { data: Uint8Array, shape }");
}

/** A few lines for people: what was written, how small, how faithful (the CLI's summary). */
export function formatSummary(summary) {
  if (typeof summary?.text !== "string") {
    throw argumentError("formatSummary: pass the summary convert() returned (its text is not kept through JSON)");
  }
  return summary.text;
}
