// The Zarr v3 `reshape` codec (zarr-extensions codecs/reshape), an array → array codec
// that zarrita lacks.

import { codecError } from "../errors.js";
import { describe, quote, readProblem } from "../options.js";
import {
  chunkLengthProblem, chunkMetaProblem, codecPosition, contiguousData, contiguousStrides, layoutAt, product, show, stridesFor,
} from "../layout.js";

/** The error every reshape rule violation throws (kind InvalidConfiguration unless given). */
const reshapeError = (message, kind = "InvalidConfiguration") => codecError("reshape", kind, message);

/**
 * The reshape configuration's `shape`, copied (entries and their input dimensions read
 * once), or an Error: the configuration must be an object whose only member is `shape`
 * (the spec defines no other, and the jpeg codec refuses unknown members alike); a getter
 * or Proxy that throws is reported, not passed on.
 */
function readShapeMember(configuration) {
  if (configuration === null || typeof configuration !== "object" || Array.isArray(configuration)) {
    throw reshapeError(`the configuration must be an object with a shape member, got ${Array.isArray(configuration) ? "an array" : describe(configuration)}`);
  }
  let keys, spec;
  try {
    keys = Object.keys(configuration);
    spec = configuration.shape;
    if (Array.isArray(spec)) spec = Array.from(spec, (entry) => (Array.isArray(entry) ? Array.from(entry) : entry));
  } catch (error) {
    throw reshapeError(readProblem("the configuration", error));
  }
  const unknown = keys.find((key) => key !== "shape");
  if (unknown !== undefined) {
    throw reshapeError(`unknown configuration member ${quote(unknown)} (the reshape codec's configuration has only "shape")`);
  }
  return spec;
}

function checkChunkLength(chunk, shape) {
  const problem = chunkLengthProblem(chunk.data, shape);
  if (problem) throw reshapeError(problem, "InvalidData");
}

/**
 * Applies the reshape rules to an input shape `inputShape` (A) and returns the output
 * shape (B), or throws an Error naming the rule that fails.
 */
export function reshapeShape(configuration, inputShape) {
  const spec = readShapeMember(configuration);
  if (!Array.isArray(spec) || spec.length === 0) {
    throw reshapeError(`configuration.shape must be a non-empty array, got ${show(spec)}`);
  }
  const rankA = inputShape.length;
  const sizes = new Array(spec.length);
  let auto = -1;
  let lastInputDim = -1;
  spec.forEach((entry, i) => {
    if (entry === -1) {
      if (auto >= 0) throw reshapeError(`shape has -1 at positions ${auto} and ${i}; -1 must occur at most once`);
      auto = i;
    } else if (Number.isInteger(entry) && entry > 0) {
      sizes[i] = entry;
    } else if (Array.isArray(entry)) {
      for (const d of entry) {
        if (!Number.isInteger(d) || d < 0 || d >= rankA) {
          throw reshapeError(
            `shape[${i}] = ${show(entry)}: input dimension ${show(d)} is not an integer in 0..${rankA - 1} (the input has rank ${rankA})`,
          );
        }
        if (d <= lastInputDim) {
          throw reshapeError(
            `shape ${show(spec)}: the flattened input_dims must be in increasing order (${d} follows ${lastInputDim}); reshape never transposes, use a transpose codec for that`,
          );
        }
        lastInputDim = d;
      }
      sizes[i] = product(entry.map((d) => inputShape[d]));
    } else {
      throw reshapeError(
        `shape[${i}] = ${show(entry)} must be a positive integer, an array of input dimensions, or -1`,
      );
    }
  });
  const total = product(inputShape);
  if (auto >= 0) {
    const known = product(sizes.filter((_, i) => i !== auto));
    if (known === 0 || total % known !== 0) {
      throw reshapeError(
        `shape ${show(spec)} over input shape ${show(inputShape)}: no size for -1 makes prod(output) == prod(input) = ${total}`,
      );
    }
    sizes[auto] = total / known;
  }
  if (product(sizes) !== total) {
    throw reshapeError(
      `shape ${show(spec)} over input shape ${show(inputShape)} gives ${show(sizes)}: prod(output) = ${product(sizes)} != prod(input) = ${total}`,
    );
  }
  spec.forEach((entry, i) => {
    if (!Array.isArray(entry) || entry.length === 0) return;
    const first = entry[0];
    const last = entry[entry.length - 1];
    const before = product(sizes.slice(0, i));
    const after = product(sizes.slice(i + 1));
    if (before !== product(inputShape.slice(0, first)) || after !== product(inputShape.slice(last + 1))) {
      throw reshapeError(
        `shape[${i}] = ${show(entry)} over input shape ${show(inputShape)}: the output dimensions before it ` +
          `(product ${before}) must cover exactly input dimensions 0..${first - 1} (product ${product(inputShape.slice(0, first))}) and those after it ` +
          `(product ${after}) exactly input dimensions ${last + 1}.. (product ${product(inputShape.slice(last + 1))})`,
      );
    }
  });
  return sizes;
}

/** The `reshape` array → array codec for zarrita. Encode and decode return views when the data is C-contiguous. */
export class ReshapeCodec {
  kind = "array_to_array";
  #input; // logical input layout (A), in zarrita's axes
  #zarritaShape;
  #output;

  constructor(configuration, meta) {
    const problem = chunkMetaProblem(meta);
    if (problem) throw reshapeError(problem[1], problem[0]);
    const position = codecPosition(meta, configuration, "reshape");
    this.#zarritaShape = meta.shape;
    this.#input = layoutAt(meta, position);
    this.#output = reshapeShape(configuration, this.#input.shape);
  }

  static fromConfig(configuration, meta) {
    return new ReshapeCodec(configuration, meta);
  }

  /** The output shape B. */
  get shape() {
    return this.#output.slice();
  }

  /** zarrita threads this through the chain, so later codecs see the reshaped chunk shape. */
  getEncodedMeta(meta) {
    return { ...meta, shape: this.#output.slice() };
  }

  encode(chunk) {
    checkChunkLength(chunk, this.#input.shape);
    return {
      data: contiguousData(chunk, this.#input),
      shape: this.#output.slice(),
      stride: contiguousStrides(this.#output),
    };
  }

  decode(chunk) {
    checkChunkLength(chunk, this.#output);
    const identity = { shape: this.#output, axes: this.#output.map((_, i) => i) };
    return {
      data: contiguousData(chunk, identity),
      shape: this.#zarritaShape.slice(),
      stride: stridesFor(this.#input),
    };
  }
}
