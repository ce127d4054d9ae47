#!/usr/bin/env node
// Builds the npm package into dist/: three modules — the whole codec (zarr_jpeg), the
// decode-only reader (zarr_jpeg_decoder), both without the `full-decoder` cargo feature,
// and the full decoder (zarr_jpeg_full_decoder: decode-only with all of zune-jpeg, loaded
// only when a chunk needs it) — each with wasm SIMD (simd128) and as a scalar fallback
// for engines without it; and the converter (zarr_jpeg_converter, SIMD only): release wasm →
// wasm-bindgen (web target) → wasm-opt (npm's binaryen, never Debian's: see docs/contributing.md)
// → the wasm inlined as base64 of its gzip form in a JS module (no bundler or server
// configuration needed); then the js/ sources. js/loader.js picks the variant at run time.
//
//   node scripts/build.mjs [--features a,b] [--variants simd,scalar] [--names] [--without-converter]
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import zlib from "node:zlib";
import binaryen from "binaryen";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const dist = path.join(root, "dist");
// Built beside dist/ and swapped in at the end, so a page or test using dist/ never
// sees it half-written.
const staging = path.join(root, ".dist-staging");
const wasmOut = path.join(staging, "wasm");
const crate = "zarr_jpeg";

function run(cmd, args, opts = {}) {
  console.log(`$ ${cmd} ${args.join(" ")}`);
  execFileSync(cmd, args, { stdio: "inherit", cwd: root, ...opts });
}

function cargoBin(name) {
  const home = process.env.CARGO_HOME ?? path.join(process.env.HOME ?? "/root", ".cargo");
  const candidate = path.join(home, "bin", name);
  return fs.existsSync(candidate) ? candidate : name;
}

// `--features a,b` is passed to cargo for every module (tests use `test-trap`); passing
// `full-decoder` here would put all of zune-jpeg back into the small modules.
const featuresArg = process.argv.indexOf("--features");
const extraFeatures = featuresArg > 0 ? process.argv[featuresArg + 1] : "";
// `--variants simd` skips the scalar fallback (a scratch build for one test); the package
// always ships both.
const variantsArg = process.argv.indexOf("--variants");
const variants = variantsArg > 0 ? process.argv[variantsArg + 1].split(",") : ["simd", "scalar"];
for (const v of variants) if (v !== "simd" && v !== "scalar") throw new Error(`--variants: unknown variant ${v}`);
// `--names` keeps the wasm name section, so CPU profiles name the Rust functions
// (bench/ab.mjs --profile); larger modules, never for the package.
const keepNames = process.argv.includes("--names");

const started = Date.now();
fs.rmSync(staging, { recursive: true, force: true });
fs.mkdirSync(wasmOut, { recursive: true });
const wasmOpt = path.join(root, "node_modules/.bin/wasm-opt");
if (!fs.existsSync(wasmOpt)) {
  throw new Error("node_modules/.bin/wasm-opt is missing: run `npm install` (binaryen from npm)");
}

// The whole codec (init()), the decode-only module viewers load first (initDecoder();
// register() and the worker pool), and the full decoder (initFullDecoder(); loaded when a
// chunk needs it, e.g. a progressive stream); each with SIMD and scalar, each in its own
// target dir so all stay cached. The scalar codec build uses the target dir `cargo test`
// uses for wasm too.
const modules = [];
for (const variant of variants) {
  const simd = variant === "simd";
  modules.push(
    buildModule({ name: crate, variant, targetDir: simd ? "target/simd" : "target", features: ["encoder", extraFeatures] }),
    buildModule({ name: `${crate}_decoder`, variant, targetDir: simd ? "target/simd-decoder" : "target/decoder", features: [extraFeatures] }),
    buildModule({
      name: `${crate}_full_decoder`, variant, targetDir: simd ? "target/simd-full-decoder" : "target/full-decoder",
      features: ["full-decoder", extraFeatures],
    }),
  );
}

// The converter (zarr_jpeg_converter: the Rust core's converter, for the CLI and
// `zarr-jpeg/convert` in Node): SIMD only, as Node has run wasm SIMD since 16.4 and no page
// loads it.
// (--without-converter: a package for tests of the codec modules only, e.g. the trap build)
if (variants.includes("simd") && !process.argv.includes("--without-converter")) {
  modules.push(buildModule({ name: `${crate}_converter`, variant: "simd", targetDir: "target/simd-converter", features: ["converter", extraFeatures] }));
}

/**
 * Builds one module. Both variants share the glue (`<name>.js`, written from the first
 * variant built; the build fails if the other's would differ); the payloads are
 * `<name>_bg.wasm.js` (SIMD) and `<name>_scalar_bg.wasm.js`.
 */
function buildModule({ name, variant, targetDir, features }) {
  const simd = variant === "simd";
  const list = features.filter(Boolean).join(",");
  // SIMD builds compile every crate with other flags: seed them from a SIMD build.
  seedTargetDir(targetDir, simd && targetDir !== "target/simd" ? "target/simd" : "target");
  const rustflags = [process.env.RUSTFLAGS, simd ? "-C target-feature=+simd128" : ""].filter(Boolean).join(" ");
  run(cargoBin("cargo"), [
    "build", "--lib", "--target", "wasm32-unknown-unknown", "--release", "--no-default-features",
    ...(list ? ["--features", list] : []),
  ], { env: { ...process.env, CARGO_TARGET_DIR: path.join(root, targetDir), RUSTFLAGS: rustflags } });
  // The same out-name for both variants: it is also the wasm's import module name, which
  // the shared glue refers to.
  const outDir = path.join(staging, `.bindgen-${variant}`);
  run(cargoBin("wasm-bindgen"), [
    "--target", "web",
    "--out-dir", outDir,
    "--out-name", name,
    "--no-typescript",
    path.join(root, targetDir, "wasm32-unknown-unknown/release", `${crate}.wasm`),
  ]);
  const wasmFile = path.join(outDir, `${name}_bg.wasm`);
  // A scalar module with SIMD in it would not load where the fallback is needed. (Checked
  // before wasm-opt, which strips the section; wasm-opt then also refuses SIMD code in a
  // scalar module, since only SIMD builds pass it --enable-simd.)
  const recorded = usedFeatures(fs.readFileSync(wasmFile));
  if (recorded.includes("simd128") !== simd) {
    throw new Error(`${name} (${variant}): target features ${recorded.join(", ")} do not match the variant`);
  }
  stubUncallableTableEntries(wasmFile);
  run(wasmOpt, [
    // --low-memory-unused: Rust puts the stack first, so addresses below 1024 are only its
    // deepest end, never reached; binaryen may then fold constant offsets into loads and
    // stores. --converge: repeat -O3 while the module still shrinks. Together -315 B gzip
    // on the decode-only SIMD module.
    "-O3", "--low-memory-unused", "--converge", ...(keepNames ? ["-g"] : []), "--enable-bulk-memory", "--enable-nontrapping-float-to-int", "--enable-sign-ext", "--enable-mutable-globals",
    "--enable-reference-types", "--enable-multivalue", ...(simd ? ["--enable-simd"] : []),
    // Custom sections no engine reads (the toolchain's names and the compiler's feature list).
    "--strip-producers", "--strip-target-features",
    wasmFile, "-o", wasmFile,
  ]);
  const wasmBytes = fs.readFileSync(wasmFile);
  const payloadName = simd ? `${name}_bg.wasm.js` : `${name}_scalar_bg.wasm.js`;
  const gzip = writePayload(payloadName, wasmBytes);
  fs.copyFileSync(wasmFile, path.join(wasmOut, payloadName.replace(/\.js$/, "")));
  writeGlue(name, path.join(outDir, `${name}.js`));
  return { name: payloadName.replace(/\.js$/, ""), raw: wasmBytes.length, gzip };
}

/**
 * Points the function-table entries that nothing can call at one empty function, so
 * wasm-opt drops their code (decode-only SIMD module -752 B gzip, full decoder -819 B).
 * wasm-bindgen leaves them in the table: js-sys declares every import it binds, and the
 * descriptor of each import that takes a closure takes the address of the closure's
 * `invoke` shim, which puts the shim in the table; wasm-bindgen deletes the descriptors but
 * not the table entries. Two kinds:
 * - `wasm_bindgen::convert::closures::_::invoke::*`: entry points for JS calling a Rust
 *   closure, which it does through the exported function table. Ours is not exported (no
 *   export of ours passes a closure to JS), so they cannot be called.
 * - `js_sys::futures::jspi::task_waker::*`: the waker of js-sys's JSPI executor, made only
 *   by the poll loop behind the `__wbg_jspi_task_poll` export, which wasm-bindgen deletes
 *   from a module without `#[wasm_bindgen(jspi)]` exports (so from ours).
 * The entries keep their places (a call through the table at one of them would trap, as
 * it cannot happen); the step refuses a module where either reason does not hold.
 */
function stubUncallableTableEntries(wasmFile) {
  const uncallable = /^(wasm_bindgen::convert::closures::_::invoke::|js_sys::futures::jspi::task_waker::)/;
  binaryen.setDebugInfo(true); // keep the name section for --names builds (wasm-opt drops it otherwise)
  const module = binaryen.readBinary(fs.readFileSync(wasmFile));
  try {
    for (let i = 0; i < module.getNumExports(); i++) {
      const exported = binaryen.getExportInfo(module.getExportByIndex(i));
      // (getTableInfo() does not give the element type; the C API does)
      const isFunctionTable =
        exported.kind === binaryen.ExternalTable &&
        binaryen._BinaryenTableGetType(module.getTable(exported.value)) === binaryen.funcref;
      if (isFunctionTable || exported.name === "__wbg_jspi_task_poll") {
        throw new Error(`${wasmFile}: exports ${exported.name}, so its closure shims or JSPI wakers may be called`);
      }
    }
    if (module.getNumTables() === 0 || module.getNumElementSegments() !== 1) return;
    const segment = binaryen.getElementSegmentInfo(module.getElementSegmentByIndex(0));
    const table = binaryen.getTableInfo(module.getTableByIndex(0));
    const offset = binaryen.getExpressionInfo(segment.offset);
    if (table.module || offset.id !== binaryen.ConstId) {
      throw new Error(`${wasmFile}: an imported function table or a computed element offset`);
    }
    const stub = "zarr_jpeg_build::uncallable_table_entry";
    const entries = segment.data.map((f) => (uncallable.test(f) ? stub : f));
    if (!entries.includes(stub)) return;
    module.addFunction(stub, binaryen.none, binaryen.none, [], module.unreachable());
    module.removeElementSegment(segment.name);
    module.addActiveElementSegment(table.name, segment.name, entries, module.i32.const(offset.value));
    fs.writeFileSync(wasmFile, module.emitBinary());
  } finally {
    module.dispose();
  }
}

/** The glue, patched for js/loader.js; or, when already written, a check that it is the same. */
function writeGlue(name, builtGlue) {
  // Let the loader discard a trapped instance and instantiate afresh (see js/loader.js).
  const glue = fs.readFileSync(builtGlue, "utf8");
  const defaultUrl = `module_or_path = new URL('${name}_bg.wasm', import.meta.url);`;
  if (!/^let [\w, ]*\bwasm;$/m.test(glue) || !glue.includes(defaultUrl)) {
    throw new Error(`unexpected wasm-bindgen glue in ${builtGlue}: the loader patches below need updating`);
  }
  const patched =
    // The loader always passes the module itself; without this URL, bundlers do not try
    // to emit a .wasm asset next to the inlined one.
    glue.replace(defaultUrl, 'throw new Error("zarr-jpeg: pass the WebAssembly module to init");') +
    "\n// Added by scripts/build.mjs: forget the current instance so initSync() makes a new one.\n" +
    "export function __resetInstance() { wasm = undefined; }\n";
  const gluePath = path.join(wasmOut, `${name}.js`);
  if (!fs.existsSync(gluePath)) {
    fs.writeFileSync(gluePath, patched);
  } else if (fs.readFileSync(gluePath, "utf8") !== patched) {
    throw new Error(`${name}: the SIMD and scalar builds need different wasm-bindgen glue; the loader assumes one`);
  }
}

/** The features the compiler recorded in the module's `target_features` section. */
function usedFeatures(wasmBytes) {
  const module = new WebAssembly.Module(wasmBytes);
  const [section] = WebAssembly.Module.customSections(module, "target_features");
  if (!section) throw new Error("the wasm module has no target_features section");
  const bytes = new Uint8Array(section);
  let at = 0;
  const leb = () => {
    let value = 0;
    for (let shift = 0; ; shift += 7) {
      const byte = bytes[at++];
      value |= (byte & 0x7f) << shift;
      if (byte < 0x80) return value;
    }
  };
  const features = [];
  for (let n = leb(); n > 0; n--) {
    const prefix = String.fromCharCode(bytes[at++]); // "+" used, "-" disallowed
    const length = leb();
    const name = new TextDecoder().decode(bytes.subarray(at, (at += length)));
    if (prefix === "+") features.push(name);
  }
  return features;
}

/** Writes the inlined payload module; returns the gzip size. */
function writePayload(fileName, wasmBytes) {
  // gzip before base64: base64 of machine code compresses poorly, so inlining the raw
  // module cost ~60 KB more over the wire than inlining it compressed (js/loader.js
  // inflates it with the platform's DecompressionStream).
  const packed = zlib.gzipSync(wasmBytes, { level: 9 });
  fs.writeFileSync(
    path.join(wasmOut, fileName),
    `// Generated by scripts/build.mjs: the WebAssembly module, gzip-compressed and base64-encoded\n` +
      `// so that it loads from any bundler, static server or Node without extra configuration.\n` +
      `export default ${JSON.stringify(packed.toString("base64"))};\n`,
  );
  return packed.length;
}

for (const variant of variants) fs.rmSync(path.join(staging, `.bindgen-${variant}`), { recursive: true, force: true });
copyTree(path.join(root, "js"), staging);
const previous = path.join(root, ".dist-previous");
fs.rmSync(previous, { recursive: true, force: true });
if (fs.existsSync(dist)) fs.renameSync(dist, previous);
fs.renameSync(staging, dist);
fs.rmSync(previous, { recursive: true, force: true });

console.log(
  `built dist/ in ${((Date.now() - started) / 1000).toFixed(1)} s: ` +
    modules.map((m) => `${m.name} ${(m.raw / 1024).toFixed(1)} KiB (${(m.gzip / 1024).toFixed(1)} KiB gzip -9)`).join(", "),
);

/**
 * A new target dir starts from another one's compiled dependencies (host build scripts
 * and wasm crates are the same), so a fresh machine compiles them once, not twice.
 */
function seedTargetDir(targetDir, seed = "target") {
  if (targetDir === seed || fs.existsSync(path.join(root, targetDir))) return;
  for (const sub of ["release", "wasm32-unknown-unknown/release"]) {
    const from = path.join(root, seed, sub);
    if (fs.existsSync(from)) {
      fs.cpSync(from, path.join(root, targetDir, sub), { recursive: true, preserveTimestamps: true });
    }
  }
}

function copyTree(from, to) {
  for (const entry of fs.readdirSync(from, { withFileTypes: true })) {
    const src = path.join(from, entry.name);
    const dst = path.join(to, entry.name);
    if (entry.isDirectory()) {
      fs.mkdirSync(dst, { recursive: true });
      copyTree(src, dst);
    } else {
      fs.copyFileSync(src, dst);
    }
  }
}
