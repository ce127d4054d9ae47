// Rate–distortion: our encoder (default and trellis), Pillow (libjpeg-turbo) with and without
// `optimize`, and mozjpeg (@jsquash/jpeg in Node) at q 50–95, each stream decoded by Pillow
// and measured against the source (bench/rd.py); then the equal-PSNR comparisons:
// each curve's BD-rate against Pillow with `optimize`, and each reference's bytes at our PSNR.
// Used by bench/run.mjs (colour only) and bench/rd.mjs (standalone, colour and grayscale).
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { toNetpbm } from "./images.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../..");

/** The reference every BD-rate is computed against. */
export const BD_REFERENCE = "pillow (optimize)";

/**
 * Encodes `img` ({ width, height, channels, data }: 3 channels → `ycbcr` 4:2:0, 1 → grayscale)
 * at each quality with each candidate into `dir`, measures them with bench/rd.py and returns
 * { image, subsampling, psnr, mozjpeg, mozjpegOptions, meta, curves, bdRate, atEqualPsnr }.
 * `tables` (quantTable values) adds our curves with each, without and with trellis:
 * "ours (flat)", "ours (flat, trellis)".
 */
export async function rateDistortion(ours, img, { dir, qualities, label = "ihc", tables = [] }) {
  fs.mkdirSync(dir, { recursive: true });
  const gray = img.channels === 1;
  const ref = path.join(dir, gray ? "reference.pgm" : "reference.ppm");
  fs.writeFileSync(ref, toNetpbm(img));
  const { init: initEnc, default: jsqEncode } = await import("@jsquash/jpeg/encode.js");
  await initEnc(await WebAssembly.compile(fs.readFileSync(path.join(root, "node_modules/@jsquash/jpeg/codec/enc/mozjpeg_enc.wasm"))));
  const rgba = new Uint8ClampedArray(img.width * img.height * 4);
  for (let i = 0; i < img.width * img.height; i++) {
    for (let c = 0; c < 3; c++) rgba[i * 4 + c] = img.data[i * img.channels + (gray ? 0 : c)];
    rgba[i * 4 + 3] = 255;
  }
  // mozjpeg: its own defaults (progressive, trellis, its quantisation tables) and baseline.
  const colour = gray ? { color_space: 1 } : { chroma_subsample: 2 };
  const mozOpts = {
    "mozjpeg (defaults)": { auto_subsample: false, ...colour },
    "mozjpeg (baseline)": { auto_subsample: false, ...colour, baseline: true, progressive: false },
    "mozjpeg (baseline, annex-k)": { auto_subsample: false, ...colour, baseline: true, progressive: false, quant_table: 0 },
  };
  const config = gray
    ? { encoded_color_space: "grayscale" }
    : { encoded_color_space: "ycbcr", subsampling: [[2, 2], [1, 1], [1, 1]] };
  const shape = gray ? [img.height, img.width] : [img.height, img.width, 3];
  const pad = (q) => String(q).padStart(2, "0");
  for (const q of qualities) {
    const cfg = { ...config, quality: q };
    fs.writeFileSync(path.join(dir, `ours_q${pad(q)}.jpg`), ours.encode(cfg, img.data, shape));
    fs.writeFileSync(path.join(dir, `ours (trellis)_q${pad(q)}.jpg`), ours.encode(cfg, img.data, shape, { trellis: true }));
    for (const quantTable of tables) {
      for (const trellis of [false, true]) {
        const name = `ours (${quantTable}${trellis ? ", trellis" : ""})`;
        fs.writeFileSync(path.join(dir, `${name}_q${pad(q)}.jpg`), ours.encode(cfg, img.data, shape, { trellis, quantTable }));
      }
    }
    for (const [name, o] of Object.entries(mozOpts)) {
      const out = await jsqEncode({ data: rgba, width: img.width, height: img.height }, { quality: q, ...o });
      fs.writeFileSync(path.join(dir, `${name}_q${pad(q)}.jpg`), new Uint8Array(out));
    }
  }
  const venv = path.join(here, "..", "..", ".venv", "bin", "python");
  const py = process.env.PYTHON ?? (fs.existsSync(venv) ? venv : "python3");
  const out = execFileSync(py, [path.join(here, "..", "rd.py"), ref, dir, qualities.join(",")], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], maxBuffer: 1 << 24 });
  const r = JSON.parse(out);
  return {
    image: `${label} ${img.width}x${img.height}`,
    subsampling: gray ? "grayscale" : "4:2:0",
    psnr: `over all ${gray ? "" : "RGB "}samples, decoded by Pillow (libjpeg-turbo)`,
    mozjpeg: "@jsquash/jpeg 1.6.0 (mozjpeg in wasm, run in Node); options shown",
    mozjpegOptions: mozOpts,
    ...r,
    bdRate: bdRates(r.curves),
    atEqualPsnr: equalPsnr(r.curves),
  };
}

/** log(bytes) of `pts` (sorted by PSNR) at `psnr`, linearly interpolated; null outside. */
function logBytesAt(pts, psnr) {
  for (let i = 0; i + 1 < pts.length; i++) {
    const [a, b] = [pts[i], pts[i + 1]];
    if (a.psnr <= psnr && psnr <= b.psnr) {
      const t = (psnr - a.psnr) / (b.psnr - a.psnr || 1);
      return Math.log(a.bytes) * (1 - t) + Math.log(b.bytes) * t;
    }
  }
  return null;
}

/**
 * Bjøntegaard-delta rate of `test` against `ref`, in % bytes at equal PSNR: the mean
 * difference of log(bytes), each curve interpolated piecewise linearly in PSNR, over the PSNR
 * range both curves cover (1,000 steps). Negative: fewer bytes than the reference.
 */
export function bdRate(ref, test) {
  const [r, t] = [ref, test].map((c) => [...c].sort((a, b) => a.psnr - b.psnr));
  const lo = Math.max(r[0].psnr, t[0].psnr);
  const hi = Math.min(r.at(-1).psnr, t.at(-1).psnr);
  if (!(hi > lo)) return { percent: null, note: "the PSNR ranges do not overlap" };
  const n = 1000;
  let sum = 0;
  for (let k = 0; k <= n; k++) {
    const p = lo + ((hi - lo) * k) / n;
    sum += logBytesAt(t, p) - logBytesAt(r, p);
  }
  return { percent: Number(((Math.exp(sum / (n + 1)) - 1) * 100).toFixed(2)), psnrRange: [Number(lo.toFixed(2)), Number(hi.toFixed(2))] };
}

/** Every curve's BD-rate against BD_REFERENCE. */
export function bdRates(curves) {
  const ref = curves[BD_REFERENCE];
  if (!ref) return {};
  return Object.fromEntries(Object.entries(curves).filter(([n]) => n !== BD_REFERENCE).map(([n, pts]) => [n, { against: BD_REFERENCE, ...bdRate(ref, pts) }]));
}

/** Bytes of each reference curve interpolated (log-bytes, linear in PSNR) at our PSNR for each q. */
export function equalPsnr(curves) {
  const ours = curves.ours ?? [];
  const out = {};
  for (const [name, pts] of Object.entries(curves)) {
    if (name === "ours") continue;
    const s = [...pts].sort((a, b) => a.psnr - b.psnr);
    out[name] = ours.map((p) => {
      const lb = logBytesAt(s, p.psnr);
      if (lb === null) return { q: p.q, psnr: p.psnr, theirBytes: null, note: "outside their PSNR range" };
      const bytes = Math.exp(lb);
      return { q: p.q, psnr: p.psnr, theirBytes: Math.round(bytes), oursOverTheirs: Number((p.bytes / bytes).toFixed(4)) };
    });
  }
  return out;
}
