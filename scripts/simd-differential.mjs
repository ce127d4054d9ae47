#!/usr/bin/env node
// Differential check of the wasm SIMD build against the scalar one on hostile input: every
// stream of the decode fuzz corpus (fuzz/corpus/decode, grown by `npm run fuzz`), the test
// fixtures and the hostile-input regression files is decoded by both decode-only modules
// of dist/; each must give identical samples or the identical error. cargo-fuzz runs
// natively, where the simd128 kernels do not exist, so this is how the corpus reaches them.
//   node scripts/simd-differential.mjs [dir ...]
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const dirs = process.argv.slice(2);
if (dirs.length === 0) dirs.push("fuzz/corpus/decode", "tests/fixtures", "tests/hostile");

// Two copies of dist/ are two module graphs, so both variants can be loaded side by side.
const copies = ["simd", "scalar"].map((variant) => {
  const dir = fs.mkdtempSync(path.join(root, `.simd-diff-${variant}-`));
  fs.cpSync(path.join(root, "dist"), dir, { recursive: true });
  return { variant, dir };
});
try {
  const [simd, scalar] = await Promise.all(
    copies.map(async ({ variant, dir }) => {
      const pkg = await import(path.join(dir, "index.js"));
      await pkg.initDecoder({ simd: variant === "simd" });
      // Streams the decoder leaves to the full decoder (progressive) are compared there.
      await pkg.initFullDecoder({ simd: variant === "simd" });
      const { usesSimd } = await import(path.join(dir, "advanced.js"));
      if (usesSimd() !== (variant === "simd")) throw new Error(`${variant}: wrong module loaded`);
      return pkg;
    }),
  );
  const configs = {
    1: { quality: 90, encoded_color_space: "grayscale" },
    3: { quality: 90, encoded_color_space: "ycbcr", subsampling: [[2, 2], [1, 1], [1, 1]] },
  };
  let streams = 0, decoded = 0, refused = 0;
  const differing = [];
  for (const dir of dirs) {
    const full = path.resolve(root, dir);
    if (!fs.existsSync(full)) {
      console.log(`${dir}: missing, skipped`);
      continue;
    }
    for (const name of fs.readdirSync(full)) {
      const file = path.join(full, name);
      if (!fs.statSync(file).isFile()) continue;
      let bytes = new Uint8Array(fs.readFileSync(file));
      // Fuzz inputs carry 6 bytes of configuration and shape choices before the stream.
      if (dir.includes("corpus") && bytes.length > 6) bytes = bytes.subarray(6);
      const frame = frameOf(bytes);
      if (!frame || !configs[frame.components] || frame.height * frame.width > 2048 * 2048) continue;
      const shape = frame.components === 1 ? [frame.height, frame.width] : [frame.height, frame.width, 3];
      // The same config for both; for 3 components decoded_color_space defaults to rgb.
      const config = configs[frame.components];
      const [a, b] = [simd, scalar].map((pkg) => {
        try {
          return { data: pkg.decode(config, bytes, shape) };
        } catch (error) {
          return { error: error.message };
        }
      });
      streams++;
      if (a.error !== undefined || b.error !== undefined) {
        refused++;
        if (a.error !== b.error) differing.push(`${dir}/${name}: ${a.error ?? "decoded"} | ${b.error ?? "decoded"}`);
      } else {
        decoded++;
        if (!Buffer.from(a.data).equals(Buffer.from(b.data))) differing.push(`${dir}/${name}: samples differ`);
      }
    }
  }
  console.log(`${streams} streams through both modules: ${decoded} decoded, ${refused} refused; ${differing.length} differ`);
  for (const line of differing.slice(0, 20)) console.log(`  ${line}`);
  process.exitCode = differing.length === 0 && streams > 0 ? 0 : 1;
} finally {
  for (const { dir } of copies) fs.rmSync(dir, { recursive: true, force: true });
}

/**
 * The first SOF0/1/2 segment's dimensions and component count, if any. A byte scan, not
 * a segment walk (which gives up at the first malformed
 * segment), so that fuzzed streams with broken segment chains still get a shape.
 */
function frameOf(bytes) {
  for (let i = 0; i + 9 < bytes.length; i++) {
    if (bytes[i] === 0xff && bytes[i + 1] >= 0xc0 && bytes[i + 1] <= 0xc2) {
      return { height: (bytes[i + 5] << 8) | bytes[i + 6], width: (bytes[i + 7] << 8) | bytes[i + 8], components: bytes[i + 9] };
    }
  }
  return null;
}
