// The JavaScript side of the Python package's tests (tests/python/test_*.py): runs the built
// npm package (dist/) on a job the test writes, so that the two languages' results can be
// compared. Usage: node tests/python/node_side.mjs JOB.json; prints a JSON result.
//
// Jobs ({"op": ...}):
// - messages: {cases: [{config, samples?, shape?, options?}]} → for each, validateConfig's
//   normalised config (no samples) or encode()'s stream length, or the Error's message/kind.
// - encode: {cases: [{config, samples: file, shape, options?, out: file}]}: writes each stream.
// - decode: {cases: [{config, stream: file, shape, out: file}]}: writes each chunk's samples.
// - convert: {data: file, shape, dir, options}: zarr-jpeg convert (js/convert.js) into dir.
// - read: {store: dir, arrays: [{name, out: file}]}: zarrita + register() read each array
//   whole; writes its samples in C order and returns its shape.
import fs from "node:fs";
import * as zarr from "zarrita";
import FileSystemStore from "@zarrita/storage/fs";
import { init, encode, decode, validateConfig, register } from "../../dist/index.js";

const job = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
await init();

function attempt(f) {
  try {
    return { ok: f() };
  } catch (error) {
    return { error: String(error?.message ?? error), kind: error?.kind ?? null };
  }
}

const read = (file) => new Uint8Array(fs.readFileSync(file));
let result;
switch (job.op) {
  case "messages":
    result = job.cases.map((c) =>
      attempt(() =>
        c.samples === undefined
          ? validateConfig(c.config)
          : encode(c.config, read(c.samples), c.shape, c.options).length,
      ),
    );
    break;
  case "encode":
    result = job.cases.map((c) => attempt(() => fs.writeFileSync(c.out, encode(c.config, read(c.samples), c.shape, c.options))));
    break;
  case "decode":
    result = job.cases.map((c) => attempt(() => fs.writeFileSync(c.out, decode(c.config, read(c.stream), c.shape))));
    break;
  case "convert": {
    const { convert } = await import("../../dist/convert.js");
    await convert({ data: read(job.data), shape: job.shape }, job.dir, job.options);
    result = "ok";
    break;
  }
  case "read": {
    register(zarr.registry);
    const store = new FileSystemStore(job.store);
    result = [];
    for (const a of job.arrays) {
      const arr = await zarr.open(zarr.root(store).resolve(a.name), { kind: "array" });
      const got = await zarr.get(arr, arr.shape.map(() => null));
      fs.writeFileSync(a.out, cOrder(got));
      result.push({ shape: got.shape, codecs: arr.codecs?.map?.((c) => c.name) });
    }
    break;
  }
  default:
    throw new Error(`unknown op ${job.op}`);
}
process.stdout.write(JSON.stringify(result));

/** zarrita's result (its native order after a transpose codec) in C order. */
function cOrder({ data, shape, stride }) {
  const c = zarr._zarrita_internal_getStrides(shape, "C");
  if (stride.every((s, i) => s === c[i])) return data;
  const out = new Uint8Array(data.length);
  const idx = new Array(shape.length).fill(0);
  for (let n = 0; n < out.length; n++) {
    let src = 0;
    for (let d = 0; d < idx.length; d++) src += idx[d] * stride[d];
    out[n] = data[src];
    for (let d = idx.length - 1; d >= 0; d--) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}
