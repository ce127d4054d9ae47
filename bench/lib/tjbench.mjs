// Native libjpeg-turbo ceiling: Debian's `tjbench` on the same files the browser candidates use.
import { execFileSync, spawnSync } from "node:child_process";

export function tjbenchVersion() {
  try {
    execFileSync("which", ["tjbench"], { stdio: "pipe" });
  } catch {
    return null;
  }
  // `cjpeg -version` (same libjpeg-turbo-progs package) prints the version on stderr.
  const r = spawnSync("cjpeg", ["-version"], { encoding: "utf8" });
  return `tjbench (${`${r.stdout ?? ""}${r.stderr ?? ""}`.trim() || "libjpeg-turbo"})`;
}

function lastRow(out) {
  const lines = out.split("\n").map((l) => l.trim()).filter(Boolean);
  const row = lines[lines.length - 1];
  return row.split(/\s+/);
}

const common = (t) => ["-quiet", "-nowrite", "-benchtime", String(t.benchtime), "-warmup", String(t.warmup)];

/** Decompression MP/s of a JPEG file (RGB output for colour streams). */
export function tjDecode(jpegFile, t) {
  const out = execFileSync("tjbench", [jpegFile, "-rgb", ...common(t)], { encoding: "utf8", stdio: "pipe" });
  const tok = lastRow(out);
  return { mps: Number(tok[tok.length - 1]), pixelFormat: tok[0], row: tok.join(" ") };
}

/** Compression MP/s of a PPM/PGM at quality 90 with the given subsampling (420, 444, GRAY). */
export function tjEncode(netpbmFile, subsamp, t) {
  const out = execFileSync("tjbench", [netpbmFile, "90", "-subsamp", subsamp, "-rgb", "-componly", ...common(t)], {
    encoding: "utf8",
    stdio: "pipe",
  });
  const tok = lastRow(out);
  // Pixel Format, (TD), Subsamp, Qual, Width, Height, Comp Perf, Comp Ratio[, Decomp Perf]
  return { mps: Number(tok[6]), pixelFormat: tok[0], compRatio: Number(tok[7]), row: tok.join(" ") };
}

/**
 * bench/native/encode.c, compiled once into `dir`: libjpeg-turbo's own API with zarr-jpeg's
 * settings (optimised Huffman tables, `rgb` streams), which tjbench 2.1 cannot set. Returns
 * the binary's path, or throws with the reason (no gcc, or no jpeglib.h: apt-get install
 * libjpeg62-turbo-dev).
 */
export function buildNativeEncoder(dir) {
  const source = new URL("../native/encode.c", import.meta.url).pathname;
  const binary = `${dir}/native-encode`;
  execFileSync("gcc", ["-O2", "-o", binary, source, "-ljpeg"], { stdio: "pipe" });
  return binary;
}

/** Compression MP/s with libjpeg-turbo at quality 90, `mode` 420|444|gray|rgb, optimised tables. */
export function nativeEncode(binary, netpbmFile, mode, t) {
  const out = execFileSync(binary, [netpbmFile, mode, "90", "1", String(t.benchtime), String(t.warmup)], { encoding: "utf8", stdio: "pipe" });
  const [mps, bytes] = out.trim().split(/\s+/).map(Number);
  return { mps, bytes };
}
