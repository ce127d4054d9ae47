// How a codec sees a chunk: the helpers both the jpeg and the reshape codec use to read
// zarrita's chunk metadata and to see a chunk the way the codec chain presents it.
//
// zarrita's model: a `transpose` codec does not change a chunk's `shape`, only its
// `stride` (the data is in the permuted order in memory). A codec that needs the chunk
// "as the spec sees it" therefore composes the transposes before it with the chunk shape.

import { describe, quote, readProblem } from "./options.js";

/**
 * A value as the codecs' messages show it: JSON's form for numbers, arrays and null, but NaN
 * and ±Infinity by name (JSON.stringify would say null), strings quoted and cut as every
 * message of the package does, anything else by its type (JSON.stringify throws for a
 * BigInt or a cycle).
 */
export function show(value, depth = 0) {
  if (typeof value === "number") return String(value);
  if (typeof value === "bigint") return `${value}n`;
  if (typeof value === "string") return quote(value);
  if (value === null) return "null";
  if (Array.isArray(value) && depth < 4) {
    const items = value.slice(0, 16).map((item) => show(item, depth + 1));
    return `[${items.join(",")}${value.length > 16 ? ",…" : ""}]`;
  }
  return describe(value);
}

/**
 * Why `meta` (what zarrita passes to a codec's fromConfig) cannot be used, as `[kind,
 * message]`, or null: the codecs read the chunk's shape (an array of integers ≥ 0) and the
 * codec list (an array, or absent) from it.
 */
export function chunkMetaProblem(meta) {
  if (meta === null || typeof meta !== "object") {
    return ["InvalidConfiguration", `the chunk metadata must be an object with the chunk's shape, got ${describe(meta)}`];
  }
  try {
    const { shape, codecs } = meta;
    if (!Array.isArray(shape) || !shape.every((d) => Number.isInteger(d) && d >= 0)) {
      return ["InvalidShape", `the chunk metadata's shape must be an array of integers ≥ 0, got ${show(shape)}`];
    }
    if (codecs !== undefined && !Array.isArray(codecs)) {
      return ["InvalidConfiguration", `the chunk metadata's codecs must be an array, got ${describe(codecs)}`];
    }
  } catch (error) {
    return ["InvalidConfiguration", readProblem("the chunk metadata", error)];
  }
  return null;
}

/**
 * Why chunk data cannot be read as a chunk of `shape`, or null: another length than the
 * shape's (contiguousData() would read the first samples of a longer array without a word,
 * and past the end of a shorter one). The reshape and jpeg codecs both check it.
 */
export function chunkLengthProblem(data, shape) {
  const size = product(shape);
  if (data?.length === size) return null;
  return `invalid chunk data: the chunk data holds ${data?.length} samples but the chunk shape [${shape.join(", ")}] needs ${size}`;
}

export const product = (values) => values.reduce((a, b) => a * b, 1);

/** C-order (row-major) strides of `shape`. */
export function contiguousStrides(shape) {
  const stride = new Array(shape.length);
  let step = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    stride[i] = step;
    step *= shape[i];
  }
  return stride;
}

function normaliseOrder(order, rank) {
  if (order === undefined || order === "C") return Array.from({ length: rank }, (_, i) => i);
  if (order === "F") return Array.from({ length: rank }, (_, i) => rank - 1 - i);
  return order;
}

/**
 * The layout a codec at `position` in `meta.codecs` receives: `shape` is the logical
 * (spec) shape, `axes[i]` the axis of zarrita's chunk (whose shape is `meta.shape`) that
 * logical axis `i` comes from. Transposes since the last reshape are composed (a reshape
 * hands over a C-contiguous chunk whose shape zarrita already knows via getEncodedMeta).
 */
export function layoutAt(meta, position) {
  const codecs = meta.codecs ?? [];
  let start = 0;
  for (let i = 0; i < position; i++) if (codecs[i]?.name === "reshape") start = i + 1;
  let axes = meta.shape.map((_, i) => i);
  for (let i = start; i < position; i++) {
    if (codecs[i]?.name !== "transpose") continue;
    const order = normaliseOrder(codecs[i].configuration?.order, axes.length);
    if (!Array.isArray(order) || order.length !== axes.length) {
      throw reshapeError(
        `cannot follow transpose order ${show(codecs[i].configuration?.order)} over a chunk of rank ${axes.length}`,
      );
    }
    axes = order.map((o) => axes[o]);
  }
  return { shape: axes.map((a) => meta.shape[a]), axes };
}

/** Index of the codec whose configuration object is `configuration` (zarrita passes it through), else the first named `name`. */
export function codecPosition(meta, configuration, name) {
  const codecs = meta.codecs ?? [];
  let index = codecs.findIndex((c) => c?.configuration === configuration && c?.name === name);
  if (index < 0) index = codecs.findIndex((c) => c?.name === name);
  return index < 0 ? 0 : index;
}

/** Strides for zarrita's chunk (shape indexed by zarrita's axes) whose memory is C order over the logical layout. */
export function stridesFor(layout) {
  const logical = contiguousStrides(layout.shape);
  const stride = new Array(layout.axes.length);
  layout.axes.forEach((axis, i) => (stride[axis] = logical[i]));
  return stride;
}

/**
 * The chunk's data in C order over the logical layout: the same typed array when its
 * strides already say so (a view, no copy), else a gathered copy.
 */
export function contiguousData(chunk, layout) {
  const size = product(layout.shape);
  const stride = layout.axes.map((axis) => chunk.stride[axis]);
  const wanted = contiguousStrides(layout.shape);
  if (stride.every((s, i) => s === wanted[i] || layout.shape[i] === 1)) {
    return chunk.data.length === size ? chunk.data : chunk.data.subarray(0, size);
  }
  const out = new chunk.data.constructor(size);
  const rank = layout.shape.length;
  const index = new Array(rank).fill(0);
  let src = 0;
  for (let n = 0; n < size; n++) {
    out[n] = chunk.data[src];
    for (let d = rank - 1; d >= 0; d--) {
      index[d]++;
      src += stride[d];
      if (index[d] < layout.shape[d]) break;
      src -= stride[d] * layout.shape[d];
      index[d] = 0;
    }
  }
  return out;
}
