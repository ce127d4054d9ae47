// The reshape codec (zarr-extensions codecs/reshape): every sizing rule and MUST error,
// views rather than copies, and the jpeg spec's neuroglancer layout through zarrita.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as zarr from "zarrita";
import * as pkg from "../../dist/index.js";

const api = pkg;
const { register, ReshapeCodec, decode } = api;
register(zarr.registry);

const meta = (shape, codecs) => ({ dataType: "uint8", shape, codecs: codecs ?? [{ name: "reshape", configuration: null }], fillValue: 0 });
function outShape(shapeConfig, input) {
  const configuration = { shape: shapeConfig };
  return ReshapeCodec.fromConfig(configuration, meta(input, [{ name: "reshape", configuration }])).shape;
}

test("rule 'positive integer size': B_shape[i] := size", () => {
  assert.deepEqual(outShape([6, 4], [2, 3, 4]), [6, 4]);
});

test("rule 'input_dims': B_shape[i] := prod(A_shape[input_dims]), incl. the spec's example", () => {
  assert.deepEqual(outShape([[0, 1], [2], 3], [100, 50, 64, 3]), [5000, 64, 3]);
  assert.deepEqual(outShape([[0], [1, 2]], [2, 3, 4]), [2, 12]);
  assert.deepEqual(outShape([[0, 1], 10, [3, 4]], [2, 5, 10, 3, 7]), [10, 10, 21]);
});

test("rule '-1 determined automatically', at most once", () => {
  assert.deepEqual(outShape([-1, 4], [2, 3, 4]), [6, 4]);
  assert.deepEqual(outShape([[0, 1], -1, 3], [4, 5, 64, 3]), [20, 64, 3]);
  assert.throws(() => outShape([-1, -1], [2, 3, 4]), /^Error: reshape: .*at most once/);
});

test("MUST error: prod(B_shape) == prod(A_shape) cannot be satisfied", () => {
  assert.throws(() => outShape([5, 5], [2, 3, 4]), /reshape: .*prod\(output\) = 25 != prod\(input\) = 24/);
  assert.throws(() => outShape([5, -1], [2, 3, 4]), /reshape: .*no size for -1/);
});

test("MUST error: flattened input_dims not monotonically increasing (the spec's three examples)", () => {
  assert.throws(() => outShape([[1], [0]], [3, 4]), /increasing order/);
  assert.throws(() => outShape([[1, 0], 10, [3, 4]], [2, 5, 10, 3, 7]), /increasing order/);
  assert.throws(() => outShape([[3, 4], 10, [0, 1]], [2, 5, 10, 3, 7]), /increasing order/);
});

test("MUST error: input_dims must line up (prod(B[:i]) == prod(A[:input_dims[0]]), prod(B[i+1:]) == prod(A[last+1:]))", () => {
  // prod matches (48) but 3 output elements precede [0], whose input has none before it.
  assert.throws(() => outShape([3, [0], -1], [2, 6, 4]), /shape\[1\] = \[0\].*cover exactly/);
  // non-adjacent input dims [0, 2]: prod matches (24) but the 3 after it are not A[3:] (empty).
  assert.throws(() => outShape([[0, 2], 3], [2, 3, 4]), /cover exactly/);
  // and the corrected reading accepts the spec's own example (the literal reading rejects it).
  assert.doesNotThrow(() => outShape([[0, 1], [2], 3], [100, 50, 64, 3]));
});

test("errors: malformed shape entries, out-of-range input dims", () => {
  assert.throws(() => outShape([], [2]), /non-empty array/);
  assert.throws(() => outShape([0, 24], [2, 3, 4]), /positive integer/);
  assert.throws(() => outShape([-2, 12], [2, 3, 4]), /positive integer/);
  assert.throws(() => outShape([2.5, 2], [5]), /positive integer/);
  assert.throws(() => outShape([[0, 3]], [2, 3, 4]), /input dimension 3 .*rank 3/);
  assert.throws(() => ReshapeCodec.fromConfig({}, meta([2])), /configuration.shape/);
});

// Before: NaN showed as `null` (JSON.stringify), a BigInt entry threw JSON.stringify's own
// TypeError, a throwing getter or Proxy leaked its exception, metadata without a shape threw
// `Cannot read properties of undefined (reading 'map')`, and unknown members were ignored.
test("errors: NaN and BigInt named as such; unreadable configurations and metadata, unknown members are reshape Errors", () => {
  const reshapeError = (pattern, kind = "InvalidConfiguration") => (e) =>
    e instanceof Error && e.kind === kind && e.message.startsWith("reshape: ") && pattern.test(e.message);
  assert.throws(() => outShape([NaN], [4, 4]), reshapeError(/^reshape: shape\[0\] = NaN must be a positive integer/));
  assert.throws(() => outShape([[0, NaN]], [4, 4]), reshapeError(/shape\[0\] = \[0,NaN\]: input dimension NaN is not an integer/));
  assert.throws(() => outShape([Infinity, 1], [4, 4]), reshapeError(/shape\[0\] = Infinity must be/));
  assert.throws(() => outShape([16n], [4, 4]), reshapeError(/shape\[0\] = 16n must be/));
  assert.throws(() => outShape(NaN, [4, 4]), reshapeError(/configuration.shape must be a non-empty array, got NaN/));
  const m = meta([4, 4]);
  assert.throws(() => ReshapeCodec.fromConfig({ shape: [16], foo: 1 }, m), reshapeError(/^reshape: unknown configuration member "foo" \(the reshape codec's configuration has only "shape"\)$/));
  assert.throws(() => ReshapeCodec.fromConfig(null, m), reshapeError(/the configuration must be an object with a shape member, got null/));
  assert.throws(() => ReshapeCodec.fromConfig([16], m), reshapeError(/the configuration must be an object with a shape member, got an array/));
  assert.throws(() => ReshapeCodec.fromConfig({ get shape() { throw new Error("getter says no"); } }, m), reshapeError(/^reshape: the configuration could not be read: reading it threw: getter says no$/));
  const proxy = new Proxy([16], { get(target, key) { if (key === "0") throw new Error("proxy says no"); return Reflect.get(target, key); } });
  assert.throws(() => ReshapeCodec.fromConfig({ shape: proxy }, m), reshapeError(/reading it threw: proxy says no/));
  assert.throws(() => ReshapeCodec.fromConfig({ shape: [16] }, { dataType: "uint8" }), reshapeError(/the chunk metadata's shape must be an array of integers ≥ 0, got undefined/, "InvalidShape"));
  assert.throws(() => ReshapeCodec.fromConfig({ shape: [16] }, { dataType: "uint8", shape: [4, NaN] }), reshapeError(/got \[4,NaN\]/, "InvalidShape"));
  assert.throws(() => ReshapeCodec.fromConfig({ shape: [16] }, undefined), reshapeError(/the chunk metadata must be an object with the chunk's shape, got undefined/));
  assert.throws(() => ReshapeCodec.fromConfig({ shape: [16] }, { shape: [4, 4], codecs: {} }), reshapeError(/codecs must be an array, got an Object/));
  // a member whose value is fine stays fine
  assert.deepEqual(ReshapeCodec.fromConfig({ shape: [16] }, { dataType: "uint8", shape: [4, 4], codecs: [null] }).shape, [16]);
});

test("empty input_dims [] gives size 1 (prod of nothing)", () => {
  assert.deepEqual(outShape([[], [0], [1]], [3, 4]), [1, 3, 4]);
});

test("ravel(B) == ravel(A), and encode/decode are views (no copy) for contiguous chunks", () => {
  const configuration = { shape: [[0, 1], [2], 3] };
  const codec = ReshapeCodec.fromConfig(configuration, meta([2, 3, 4, 3], [{ name: "reshape", configuration }]));
  assert.equal(codec.kind, "array_to_array");
  const data = Uint8Array.from({ length: 72 }, (_, i) => i);
  const enc = codec.encode({ data, shape: [2, 3, 4, 3], stride: [36, 12, 3, 1] });
  assert.deepEqual(enc.shape, [6, 4, 3]);
  assert.deepEqual(enc.stride, [12, 3, 1]);
  assert.equal(enc.data, data, "encode returns the same array");
  const dec = codec.decode(enc);
  assert.deepEqual(dec.shape, [2, 3, 4, 3]);
  assert.deepEqual(dec.stride, [36, 12, 3, 1]);
  assert.equal(dec.data, data, "decode returns the same array");
  // A non-contiguous (F-order) input is gathered in C order.
  const f = codec.encode({ data: (() => { const d = new Uint8Array(72); for (let a = 0; a < 2; a++) for (let b = 0; b < 3; b++) for (let c = 0; c < 4; c++) for (let e = 0; e < 3; e++) d[a + 2 * b + 6 * c + 24 * e] = a * 36 + b * 12 + c * 3 + e; return d; })(), shape: [2, 3, 4, 3], stride: [1, 2, 6, 24] });
  assert.deepEqual([...f.data], [...data]);
  assert.deepEqual(codec.getEncodedMeta(meta([2, 3, 4, 3])).shape, [6, 4, 3]);
});

test("chunk data of another length than the chunk's is an error naming both, not silently cut or overread", () => {
  const configuration = { shape: [[0, 1], [2], 3] };
  const codec = ReshapeCodec.fromConfig(configuration, meta([2, 3, 4, 3], [{ name: "reshape", configuration }]));
  const wrong = (n) => (e) => e.kind === "InvalidData" && e.message.startsWith(`reshape: invalid chunk data: the chunk data holds ${n} samples but the chunk shape [`) && e.message.endsWith("] needs 72");
  for (const n of [73, 71, 144, 0]) {
    const data = new Uint8Array(n);
    assert.throws(() => codec.encode({ data, shape: [2, 3, 4, 3], stride: [36, 12, 3, 1] }), wrong(n), `encode ${n}`);
    assert.throws(() => codec.decode({ data, shape: [6, 4, 3], stride: [12, 3, 1] }), wrong(n), `decode ${n}`);
  }
  assert.throws(() => codec.encode({ data: new Uint8Array(73), shape: [2, 3, 4, 3], stride: [36, 12, 3, 1] }), /the chunk shape \[2, 3, 4, 3\] needs 72/);
  assert.throws(() => codec.decode({ data: new Uint8Array(73), shape: [6, 4, 3], stride: [12, 3, 1] }), /the chunk shape \[6, 4, 3\] needs 72/);
});

test("reshape + bytes (the spec's example) through zarrita: stored bytes are ravel(A)", async () => {
  const store = new Map();
  const shape = [4, 2, 3, 3];
  const arr = await zarr.create(store, { shape, chunkShape: shape, dtype: "uint8", codecs: [{ name: "reshape", configuration: { shape: [[0, 1], [2], 3] } }, { name: "bytes", configuration: {} }] });
  const data = Uint8Array.from({ length: 72 }, (_, i) => (i * 5) % 251);
  await zarr.set(arr, null, { data, shape, stride: [18, 9, 3, 1] });
  assert.deepEqual([...store.get("/c/0/0/0/0")], [...data]);
  const got = await zarr.get(arr);
  assert.deepEqual([...got.data], [...data]);
});

test("jpeg spec neuroglancer layout: [z, y, x, c] chunks reshaped to (z·y, x, c) read and write", async () => {
  const store = new Map();
  const Z = 4, Y = 16, X = 24;
  const config = { quality: 95, encoded_color_space: "ycbcr", subsampling: [[1, 1], [1, 1], [1, 1]] };
  const arr = await zarr.create(store, {
    shape: [Z, Y, X, 3], chunkShape: [Z, Y, X, 3], dtype: "uint8",
    codecs: [{ name: "reshape", configuration: { shape: [[0, 1], [2], [3]] } }, { name: "jpeg", configuration: config }],
  });
  const data = new Uint8Array(Z * Y * X * 3);
  for (let z = 0; z < Z; z++) for (let y = 0; y < Y; y++) for (let x = 0; x < X; x++) for (let c = 0; c < 3; c++)
    data[((z * Y + y) * X + x) * 3 + c] = [40 + z * 40, 60 + y * 4, 200 - x * 3][c];
  await zarr.set(arr, null, { data, shape: [Z, Y, X, 3], stride: [Y * X * 3, X * 3, 3, 1] });
  // The stream is a (Z·Y) × X colour image.
  const image = decode(config, store.get("/c/0/0/0/0"), [Z * Y, X, 3]);
  const got = await zarr.get(await zarr.open(store, { kind: "array" }));
  assert.deepEqual(got.shape, [Z, Y, X, 3]);
  assert.deepEqual([...got.data], [...image], "zarrita's result is the JPEG image, C order");
  let max = 0;
  for (let i = 0; i < data.length; i++) max = Math.max(max, Math.abs(data[i] - got.data[i]));
  assert.ok(max <= 12, `max diff ${max}`);
  const slice = await zarr.get(await zarr.open(store, { kind: "array" }), [2, null, 5, null]);
  assert.deepEqual(slice.shape, [Y, 3]);
  assert.ok(Math.abs(slice.data[0] - 120) <= 8);
});

test("[transpose, reshape, jpeg]: (c, z, y, x) chunks → (z, y, x, c) → (z·y, x, c)", async () => {
  const store = new Map();
  const Z = 2, Y = 16, X = 16;
  const config = { quality: 95, encoded_color_space: "rgb" };
  const arr = await zarr.create(store, {
    shape: [3, Z, Y, X], chunkShape: [3, Z, Y, X], dtype: "uint8",
    codecs: [
      { name: "transpose", configuration: { order: [1, 2, 3, 0] } },
      { name: "reshape", configuration: { shape: [[0, 1], [2], [3]] } },
      { name: "jpeg", configuration: config },
    ],
  });
  const data = new Uint8Array(3 * Z * Y * X);
  for (let c = 0; c < 3; c++) data.fill([20, 130, 240][c], c * Z * Y * X, (c + 1) * Z * Y * X);
  await zarr.set(arr, null, { data, shape: [3, Z, Y, X], stride: [Z * Y * X, Y * X, X, 1] });
  const image = decode(config, store.get("/c/0/0/0/0"), [Z * Y, X, 3]);
  assert.ok(Math.abs(image[0] - 20) <= 2 && Math.abs(image[1] - 130) <= 2 && Math.abs(image[2] - 240) <= 2, "pixel 0 holds channels 0, 1, 2");
  const got = await zarr.get(await zarr.open(store, { kind: "array" }), [null, 1, 3, 4]);
  assert.deepEqual(got.shape, [3]);
  for (let c = 0; c < 3; c++) assert.ok(Math.abs(got.data[c * got.stride[0]] - [20, 130, 240][c]) <= 2);
});
