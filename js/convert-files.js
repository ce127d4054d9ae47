// The converter on Node's file system: the Rust core's pipeline (the converter module,
// js/loader.js's convertWithCore) with its two IO seams filled here — the input file read
// at offsets, the store written into a temporary directory beside the output and renamed
// into place when complete (the destination holds the whole store or nothing) — and the
// --overwrite rules. The same side as src/convert/fs.rs is for the native bindings.
import fs from "node:fs";
import path from "node:path";
import * as loader from "./loader.js";
import { startEncoders } from "./convert-encoders.js";
import { MAX_WORKERS } from "./pool.js";

/**
 * A conversion the converter refuses. Its message begins "zarr-jpeg convert: " (the
 * package's error convention, js/errors.js); its `kind` is "InvalidArgument" (an option or
 * argument), "InvalidInput" (the input cannot be converted) or "OutputUnavailable" (the
 * output is in the way or cannot be written).
 */
export class ConvertError extends Error {
  constructor(message, { kind = "InvalidInput", cause } = {}) {
    super(`zarr-jpeg convert: ${message}`, cause === undefined ? undefined : { cause });
    this.name = "ConvertError";
    this.kind = kind;
  }
}

export const argumentProblem = (message, { cause } = {}) => new ConvertError(message, { kind: "InvalidArgument", cause });
export const outputProblem = (message, { cause } = {}) => new ConvertError(message, { kind: "OutputUnavailable", cause });

/**
 * A file-system error (Node's, with a `code` such as ENOENT, EACCES, EROFS, ENOSPC) while
 * writing `output`, as a ConvertError that names the output and the cause in one line;
 * other errors unchanged.
 */
export function fileSystemError(error, output) {
  if (error instanceof ConvertError || typeof error?.code !== "string" || typeof error?.syscall !== "string") return error;
  return outputProblem(`cannot write ${output}: ${error.message}`, { cause: error });
}

/** What an output directory is, for --overwrite: its name and the files at its top that make one. */
const ZARR_OUTPUT = { name: "a Zarr store", markers: ["zarr.json", ".zgroup", ".zarray", ".zattrs"], why: "no zarr.json at its top" };
const PRECOMPUTED_OUTPUT = { name: "a precomputed volume", markers: ["info"], why: "no info file at its top" };

/**
 * What `--overwrite` may replace: a Zarr store (a directory with zarr.json, or Zarr v2's
 * .zgroup/.zarray/.zattrs, at its top; for an export, a precomputed volume's info) or an
 * empty directory, and never one that holds the input image. Without this,
 * `convert image.png . --overwrite` deleted the current directory, the image with it.
 */
function checkReplaceable(target, output, input, kind) {
  // (real paths: a symbolic link to the store or to the image changes nothing)
  const real = fs.realpathSync(target);
  const inputPath = input === null ? null : fs.realpathSync(input);
  if (inputPath && (inputPath === real || inputPath.startsWith(real + path.sep))) {
    const what = inputPath === real ? "is the input image" : `holds the input image ${input}`;
    throw outputProblem(`${output} ${what}; --overwrite would delete it: choose another output`);
  }
  const stat = fs.statSync(target);
  if (!stat.isDirectory()) {
    throw outputProblem(`${output} exists and is not ${kind.name} (not a directory); --overwrite replaces only ${kind.name}: remove it yourself or choose another output`);
  }
  const entries = fs.readdirSync(target);
  const isStore = kind.markers.some((name) => entries.includes(name));
  if (entries.length > 0 && !isStore) {
    throw outputProblem(
      `${output} exists and is not ${kind.name} (${kind.why}); --overwrite replaces only ${kind.name} or an empty directory: ` +
        "remove it yourself or choose another output",
    );
  }
}

/**
 * Checks `output` (absent, or replaceable with `overwrite`) and names the temporary
 * directory the store is written under: `{ target, temp }`.
 */
export function prepareOutput(output, options, input, kind = ZARR_OUTPUT) {
  const target = path.resolve(output);
  if (fs.existsSync(target) && !options.overwrite) {
    throw outputProblem(`${output} already exists; choose another name or pass --overwrite`);
  }
  if (fs.existsSync(target)) {
    try {
      checkReplaceable(target, output, input, kind);
    } catch (error) {
      throw fileSystemError(error, output);
    }
  }
  const parent = path.dirname(target);
  if (!fs.existsSync(parent)) throw outputProblem(`the output's parent directory ${parent} does not exist`);
  const temp = path.join(parent, `.${path.basename(target)}.partial-${process.pid}-${Date.now().toString(36)}`);
  return { target, temp };
}

/** Moves the finished store from `temp` to `target` (replacing an old one in one rename). */
export function commitOutput(target, temp) {
  if (fs.existsSync(target)) {
    // --overwrite: move the old store aside first, so the new one appears in one rename.
    const old = `${temp}.old`;
    fs.renameSync(target, old);
    fs.renameSync(temp, target);
    fs.rmSync(old, { recursive: true, force: true });
  } else {
    fs.renameSync(temp, target);
  }
}

/**
 * A directory's files (not hidden, sorted by name), each opened as an input with its
 * name: a DICOM series, or a neuroglancer precomputed volume (an info file, and folders
 * of chunks). The Rust core reads them; files that are not DICOM it skips.
 */
function openFolder(dir) {
  let names;
  try {
    names = fs.readdirSync(dir).filter((n) => !n.startsWith(".")).sort();
  } catch (error) {
    throw new ConvertError(`cannot read ${dir}: ${error?.message}`, { cause: error });
  }
  const files = [];
  try {
    for (const name of names) {
      const file = path.join(dir, name);
      if (fs.statSync(file).isFile()) files.push(Object.assign(openInput(file), { name: file }));
    }
  } catch (error) {
    for (const f of files) f.close();
    throw error instanceof ConvertError ? error : new ConvertError(`cannot read ${dir}: ${error?.message}`, { cause: error });
  }
  // files below the folder, opened when the core asks (a precomputed volume's chunks); the
  // core closes each when it is done with it
  const open = (relative) => {
    const file = path.join(dir, ...relative.split("/"));
    if (!fs.existsSync(file)) return null;
    return openInput(file);
  };
  return Object.assign(files, { open, close: () => files.forEach((f) => f.close()) });
}

/** The input file (or a directory's files: see openFolder), read at offsets. */
function openInput(file) {
  let fd;
  try {
    fd = fs.openSync(file, "r");
    const stat = fs.fstatSync(fd);
    if (stat.isDirectory()) {
      fs.closeSync(fd);
      throw new ConvertError(`cannot read ${file}: it is a directory`);
    }
    return {
      size: stat.size,
      read(offset, length) {
        const out = new Uint8Array(length);
        let done = 0;
        while (done < length) {
          const n = fs.readSync(fd, out, done, length - done, offset + done);
          if (n === 0) break;
          done += n;
        }
        return done === length ? out : out.subarray(0, done);
      },
      close: () => fs.closeSync(fd),
    };
  } catch (error) {
    if (error instanceof ConvertError) throw error;
    if (fd !== undefined) fs.closeSync(fd);
    const reason = error?.code === "ENOENT" ? "no such file" : error?.code === "EISDIR" ? "it is a directory" : error?.message;
    throw new ConvertError(`cannot read ${file}: ${reason}`, { cause: error });
  }
}

/** A store in a directory: values are files, keys their relative paths. */
class DirectoryStore {
  constructor(root) {
    this.root = root;
    this.appending = new Map();
    fs.mkdirSync(root);
  }

  #path(key) {
    const file = path.join(this.root, key);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    return file;
  }

  write(key, bytes) {
    fs.writeFileSync(this.#path(key), bytes);
  }

  append(key, bytes) {
    let fd = this.appending.get(key);
    if (fd === undefined) {
      fd = fs.openSync(this.#path(key), "a");
      this.appending.set(key, fd);
    }
    for (let done = 0; done < bytes.length; ) done += fs.writeSync(fd, bytes, done, bytes.length - done);
  }

  close(key) {
    const fd = this.appending.get(key);
    if (fd !== undefined) {
      this.appending.delete(key);
      fs.closeSync(fd);
    }
  }

  clear() {
    this.closeAll();
    fs.rmSync(this.root, { recursive: true, force: true });
    fs.mkdirSync(this.root);
  }

  closeAll() {
    for (const fd of this.appending.values()) fs.closeSync(fd);
    this.appending.clear();
  }
}

const CALLBACKS = new Set(["onProgress", "onWarning"]);

/** The options for the core: the caller's own members, without the callbacks. */
function coreOptions(options) {
  if (options === null || typeof options !== "object" || Array.isArray(options)) {
    throw argumentProblem(`options must be an object, got ${options === null ? "null" : Array.isArray(options) ? "an array" : typeof options}`);
  }
  const out = {};
  for (const [key, value] of Object.entries(options)) {
    if (!CALLBACKS.has(key) && value !== undefined) out[key] = value;
  }
  return out;
}

/**
 * Runs `call(store, events)` (a conversion by the core) into a temporary directory beside
 * `output`, renamed into place when it is complete; `input` is the input file (null for
 * samples), which --overwrite never deletes. → the summary, `text` on it (not enumerable).
 */
async function writeStore(output, options, input, call) {
  // (a count the core refuses starts none: the core names the problem)
  const count = Object.hasOwn(options, "workers") ? options.workers : undefined;
  const encoders = Number.isInteger(count) && count >= 1 && count <= MAX_WORKERS ? await startEncoders(count) : null;
  try {
    return writeStoreWith(output, options, input, (store, events) => call(store, events, encoders ?? undefined));
  } finally {
    await encoders?.close();
  }
}

function writeStoreWith(output, options, input, call, kind = ZARR_OUTPUT) {
  let target = null;
  let temp = null;
  let store = null;
  // Warnings wait for the output to be checked, which happens at the first write (the core
  // has read the input and resolved the options by then): a conversion refused for its
  // output prints none, as the native converter does.
  let pending = [];
  const warn = (message) => (pending ? pending.push(message) : options.onWarning?.(message));
  const flush = () => {
    const waiting = pending ?? [];
    pending = null;
    for (const message of waiting) options.onWarning?.(message);
  };
  const opened = () => {
    if (!store) {
      ({ target, temp } = prepareOutput(output, options, input, kind));
      store = new DirectoryStore(temp);
      flush();
    }
    return store;
  };
  try {
    const { summary, text } = call(
      {
        write: (key, bytes) => opened().write(key, bytes),
        append: (key, bytes) => opened().append(key, bytes),
        close: (key) => store?.close(key),
        clear: () => store?.clear(),
      },
      { warning: warn, progress: (event) => options.onProgress?.(event) },
    );
    opened().closeAll();
    commitOutput(target, temp);
    temp = null;
    Object.defineProperty(summary, "text", { value: text, enumerable: false });
    return summary;
  } catch (error) {
    // (warnings found before a refusal of the input are still said, unless the output was refused)
    if (!(error instanceof ConvertError && error.kind === "OutputUnavailable")) flush();
    if (error instanceof Error && typeof error.kind === "string" && !(error instanceof ConvertError) && !error.syscall) {
      throw new ConvertError(error.message, { kind: error.kind, cause: error });
    }
    throw fileSystemError(error, output);
  } finally {
    store?.closeAll();
    if (temp) {
      try {
        fs.rmSync(temp, { recursive: true, force: true });
      } catch {
        // (the error that stopped the conversion is the one to report)
      }
    }
  }
}

/**
 * Converts the image file `input` (PNG, JPEG, TIFF/BigTIFF/OME-TIFF/SVS, DICOM, or a
 * directory holding a DICOM whole-slide series) into the store
 * directory `output` with the Rust core's converter: the CLI's options (`quality`, `shard`,
 * `overwrite`, …), `onProgress(event)` and `onWarning(message)`. → the summary (the CLI's
 * `--json` object) with `text` (the CLI's lines) as a non-enumerable property.
 */
export async function convertFile(input, output, options = {}) {
  const own = coreOptions(options);
  if (typeof input !== "string" || input === "") throw argumentProblem("input must be an image file path");
  if (typeof output !== "string" || output === "") throw argumentProblem("output must be a directory path");
  await loader.initConverter();
  const source = isDirectory(input) ? openFolder(input) : openInput(input);
  try {
    return await writeStore(output, options, input, (store, events, encoders) =>
      loader.convertWithCore(source, input, path.resolve(output), own, store, events, encoders));
  } finally {
    source.close();
  }
}

/**
 * Writes the JPEG OME-Zarr image (or volume) in the directory `input` as the neuroglancer
 * precomputed volume `output` (options `quality`, `workers`, `overwrite`, `onProgress`,
 * `onWarning`), its chunks copied where the layouts agree. → the summary, `text` on it.
 */
export async function exportPrecomputed(input, output, options = {}) {
  const own = coreOptions(options);
  if (typeof input !== "string" || input === "") throw argumentProblem("input must be a Zarr store's directory path");
  if (typeof output !== "string" || output === "") throw argumentProblem("output must be a directory path");
  if (!isDirectory(input)) throw new ConvertError(`${input} is not a directory: export --precomputed reads a Zarr v3 store`, { kind: "InvalidInput" });
  await loader.initConverter();
  const folder = {
    open: (relative) => {
      const file = path.join(input, ...relative.split("/"));
      return fs.existsSync(file) ? openInput(file) : null;
    },
  };
  const summary = writeStoreWith(output, options, input, (store, events) =>
    loader.exportPrecomputedWithCore(folder, input, path.resolve(output), own, store, events), PRECOMPUTED_OUTPUT);
  return summary;
}

function isDirectory(file) {
  try {
    return fs.statSync(file).isDirectory();
  } catch {
    return false; // (openInput names the problem)
  }
}

/** Converts samples in memory (`data`: a Uint8Array of `shape`) as convertFile() converts a file. */
export async function convertSamples(data, shape, output, options = {}) {
  const own = coreOptions(options);
  if (typeof output !== "string" || output === "") throw argumentProblem("output must be a directory path");
  await loader.initConverter();
  return writeStore(output, options, null, (store, events, encoders) =>
    loader.convertSamplesWithCore(data, shape, path.resolve(output), own, store, events, encoders));
}
