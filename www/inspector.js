// The inspector: takes the visible region of the current level (as stored: what zarrita
// decodes), re-encodes it live with the chosen quality / colour space / subsampling (and
// trellis quantisation, an encode option), and
// shows stored | re-encoded | amplified difference side by side, with bytes, ratio and
// PSNR, and a rate–distortion chart (bytes vs PSNR across qualities) for the region.
import * as zarr from "zarrita";
import { init, encode, decode } from "/dist/index.js";
import { QUANT_TABLES } from "/dist/advanced.js";
import { SUBSAMPLING, rgbToLuma } from "/dist/color-names.js";
import { fixedAt } from "./dataset.js";

const RD_QUALITIES = [10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 100];
const MAX_REGION = 256;

function subsamplingName(s) {
  return Object.keys(SUBSAMPLING).find((k) => JSON.stringify(SUBSAMPLING[k]) === JSON.stringify(s)) ?? "4:2:0";
}

export function psnr(a, b) {
  let sum = 0;
  let max = 0;
  for (let i = 0; i < a.length; i++) {
    const d = a[i] - b[i];
    sum += d * d;
    if (d > max) max = d;
    else if (-d > max) max = -d;
  }
  const mse = sum / a.length;
  return { psnr: mse === 0 ? Infinity : 10 * Math.log10((255 * 255) / mse), maxError: max };
}

const toLuma = rgbToLuma;

function paint(canvas, samples, h, w, channels) {
  canvas.width = w;
  canvas.height = h;
  const rgba = new Uint8ClampedArray(w * h * 4);
  for (let i = 0; i < w * h; i++) {
    if (channels === 3) rgba.set(samples.subarray(3 * i, 3 * i + 3), 4 * i);
    else rgba[4 * i] = rgba[4 * i + 1] = rgba[4 * i + 2] = samples[i];
    rgba[4 * i + 3] = 255;
  }
  canvas.getContext("2d").putImageData(new ImageData(rgba, w, h), 0, 0);
}

const fmtBytes = (n) => (n >= 1e6 ? `${(n / 1e6).toFixed(2)} MB` : n >= 1e3 ? `${(n / 1e3).toFixed(1)} kB` : `${n} B`);
const fmtDb = (v) => (Number.isFinite(v) ? `${v.toFixed(2)} dB` : "∞ (identical)");
const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

/**
 * A curve's name ("ycbcr 4:2:0 flat trellis") as its parts: the colour setting ("ycbcr
 * 4:2:0", which picks its colour), and encode()'s options.
 */
function curveParts(name) {
  const words = name.split(" ");
  const quantTable = words.find((word) => QUANT_TABLES.includes(word)) ?? "annex-k";
  const trellis = words.includes("trellis");
  const setting = words.filter((word) => word !== "trellis" && !QUANT_TABLES.includes(word)).join(" ");
  return { setting, options: { trellis, quantTable } };
}

export class Inspector {
  /** `pool`: register()'s worker pool, if any, which computes the rate–distortion curves. */
  constructor(root, { pool = null } = {}) {
    this.root = root;
    this.pool = pool;
    this.$ = (sel) => root.querySelector(sel);
    this.region = null;
    this.rdToken = 0;
    this.rdCache = new Map();
    const tables = this.$("#insp-table");
    for (const name of QUANT_TABLES) tables.add(new Option(name, name, name === "annex-k", name === "annex-k"));
    for (const sel of ["#insp-quality", "#insp-color", "#insp-subsampling", "#insp-trellis", "#insp-table", "#insp-amp"]) {
      this.$(sel).addEventListener("input", () => this.update(sel !== "#insp-quality" && sel !== "#insp-amp"));
    }
  }

  /** The configuration the controls describe, and the channels it encodes. */
  config() {
    const quality = Number(this.$("#insp-quality").value);
    const color = this.$("#insp-color").value;
    const config = { quality, encoded_color_space: color };
    if (color === "ycbcr") config.subsampling = SUBSAMPLING[this.$("#insp-subsampling").value];
    return config;
  }

  /** encode()'s options the controls describe. */
  options() {
    return { trellis: this.$("#insp-trellis").checked, quantTable: this.$("#insp-table").value };
  }

  /** Forgets the region (nothing open). */
  clear() {
    this.region = null;
    this.figures = null;
    this.rdToken++;
    for (const id of ["#insp-original", "#insp-decoded", "#insp-diff"]) {
      const canvas = this.$(id);
      canvas.width = canvas.height = 0;
    }
    for (const dd of this.root.querySelectorAll(".figures dd")) {
      dd.textContent = "–";
      delete dd.dataset.value;
    }
    this.$("#insp-rd").innerHTML = "";
    this.$("#insp-region").textContent = "open a dataset";
    this.$("#insp-stored").textContent = "";
  }

  /** Sets the controls from the dataset's stored jpeg configuration. */
  setDefaults(dataset) {
    const stored = dataset.levels[0].jpeg;
    const rgb = dataset.axes.rgb;
    const color = this.$("#insp-color");
    for (const option of color.options) option.disabled = !rgb && option.value !== "grayscale";
    color.value = stored?.encoded_color_space && (rgb || stored.encoded_color_space === "grayscale") ? stored.encoded_color_space : rgb ? "ycbcr" : "grayscale";
    this.$("#insp-quality").value = stored?.quality ?? 95; // the spec: builders SHOULD default quality to 95
    this.$("#insp-subsampling").value = stored?.subsampling ? subsamplingName(stored.subsampling) : "4:2:0";
    this.$("#insp-stored").textContent = stored
      ? `stored with jpeg quality ${stored.quality}, ${stored.encoded_color_space}${stored.subsampling ? " " + subsamplingName(stored.subsampling) : ""}`
      : `stored without the jpeg codec (${dataset.levels[0].meta.codecs.map((c) => c.name).join(" → ")})`;
  }

  /** Reads the region (level pixels [y0, y1) × [x0, x1), at most MAX_REGION², a multiple of 16 when possible) through zarrita. */
  async setRegion(dataset, region) {
    const L = dataset.levels[region.level];
    const { axes } = dataset;
    const crop = (a0, a1) => {
      let size = Math.min(MAX_REGION, a1 - a0);
      if (size >= 16) size -= size % 16;
      // Start on the 16-pixel grid, so re-encoding lines up with the stored chunks' JPEG blocks.
      let start = Math.max(a0, Math.floor((a0 + a1) / 2 - size / 2));
      if (size >= 16) start = Math.min(Math.ceil(start / 16) * 16, a1 - size);
      return [start, start + size];
    };
    const [y0, y1] = crop(region.y0, region.y1);
    const [x0, x1] = crop(region.x0, region.x1);
    const h = y1 - y0;
    const w = x1 - x0;
    if (h < 1 || w < 1) return;
    const fixed = fixedAt(dataset, L);
    const selection = L.array.shape.map((_, i) => (i in fixed ? fixed[i] : null));
    selection[axes.y] = zarr.slice(y0, y1);
    selection[axes.x] = zarr.slice(x0, x1);
    // (a composite: the first channel shown)
    if (axes.c >= 0 && !axes.rgb) selection[axes.c] = axes.composite?.find((c) => c.active)?.index ?? 0;
    const t0 = performance.now();
    const got = await zarr.get(L.array, selection);
    const readMs = performance.now() - t0;
    // The kept axes, in array order → interleaved (y, x, c).
    const kept = L.array.shape.map((_, i) => i).filter((i) => selection[i] === null || typeof selection[i] === "object");
    const sy = got.stride[kept.indexOf(axes.y)];
    const sx = got.stride[kept.indexOf(axes.x)];
    const C = axes.rgb ? 3 : 1;
    const sc = axes.rgb ? got.stride[kept.indexOf(axes.c)] : 0;
    const samples = new Uint8Array(h * w * C);
    for (let y = 0, o = 0; y < h; y++) for (let x = 0; x < w; x++) for (let c = 0; c < C; c++) samples[o++] = got.data[y * sy + x * sx + c * sc];
    this.region = { level: region.level, path: L.path, y0, x0, h, w, C, samples, readMs, id: `${dataset.url}|${region.level}|${y0}|${x0}|${h}|${w}` };
    paint(this.$("#insp-original"), samples, h, w, C);
    this.$("#insp-region").textContent =
      `level ${L.path || "(array)"}: rows ${y0}–${y1 - 1}, columns ${x0}–${x1 - 1} (${h}×${w}${C === 3 ? "×3" : ""}), read through zarrita in ${readMs.toFixed(0)} ms`;
    await this.update(true);
  }

  /** Re-encodes the region with the controls' settings; with `rd`, also redraws the rate–distortion chart. */
  async update(rd = false) {
    await init();
    const color = this.$("#insp-color").value;
    this.$("#insp-subsampling").disabled = color !== "ycbcr";
    this.$("#insp-quality-value").textContent = this.$("#insp-quality").value;
    if (!this.region) return;
    const { samples, h, w, C } = this.region;
    const config = this.config();
    const options = this.options();
    const result = this.#measure(config, options);
    // The reference for a grayscale encoding of colour data is its luma.
    const reference = result.reference;
    const outC = result.channels;
    paint(this.$("#insp-decoded"), result.decoded, h, w, outC);
    const amp = Number(this.$("#insp-amp").value);
    const diff = new Uint8Array(result.decoded.length);
    for (let i = 0; i < diff.length; i++) diff[i] = Math.min(255, Math.abs(result.decoded[i] - reference[i]) * amp);
    paint(this.$("#insp-diff"), diff, h, w, outC);
    this.$("#insp-diff-label").textContent = `|difference| × ${amp}`;
    const raw = samples.length;
    const figures = {
      bytes: result.bytes,
      raw,
      ratio: raw / result.bytes,
      bpp: (8 * result.bytes) / (h * w),
      psnr: result.psnr,
      maxError: result.maxError,
      encodeMs: result.encodeMs,
      decodeMs: result.decodeMs,
    };
    this.figures = { ...figures, config, options };
    this.updates = (this.updates ?? 0) + 1;
    const set = (id, text, value) => {
      const el = this.$(id);
      el.textContent = text;
      el.dataset.value = String(value);
    };
    set("#fig-bytes", fmtBytes(figures.bytes), figures.bytes);
    set("#fig-raw", fmtBytes(raw) + (C === 3 && outC === 1 ? " (RGB)" : ""), raw);
    set("#fig-ratio", `${figures.ratio.toFixed(1)} : 1`, figures.ratio);
    set("#fig-bpp", `${figures.bpp.toFixed(2)} bits/pixel`, figures.bpp);
    set("#fig-psnr", fmtDb(figures.psnr) + (C === 3 && outC === 1 ? " (vs luma)" : ""), figures.psnr);
    set("#fig-max", String(figures.maxError), figures.maxError);
    set("#fig-time", `${figures.encodeMs.toFixed(1)} ms encode, ${figures.decodeMs.toFixed(1)} ms decode`, figures.encodeMs);
    this.root.dispatchEvent(new CustomEvent("figures", { detail: this.figures }));
    if (rd) this.#rateDistortion();
    else this.#drawChart();
  }

  /** The region's samples as `config` encodes them, and their shape. */
  #input(config) {
    const { samples, h, w, C } = this.region;
    const channels = config.encoded_color_space === "grayscale" ? 1 : 3;
    const input = C === 3 && channels === 1 ? toLuma(samples) : samples;
    return { input, channels, shape: channels === 3 ? [h, w, 3] : [h, w] };
  }

  #measure(config, options) {
    const { input, channels, shape } = this.#input(config);
    const t0 = performance.now();
    const bytes = encode(config, input, shape, options);
    const t1 = performance.now();
    const decoded = decode(config, bytes, shape);
    const t2 = performance.now();
    return { bytes: bytes.length, decoded, reference: input, channels, ...psnr(decoded, input), encodeMs: t1 - t0, decodeMs: t2 - t1 };
  }

  /**
   * Curves: the controls' colour setting, and for colour data the three usual ones for
   * comparison; with other quantisation tables, the controls' setting with them (" flat");
   * with trellis on, the controls' setting with trellis too (" trellis", " flat trellis").
   */
  #curveSettings() {
    const color = this.$("#insp-color").value;
    const plain = color === "ycbcr" ? `ycbcr ${this.$("#insp-subsampling").value}` : color;
    const names = this.region.C === 3 ? ["ycbcr 4:2:0", "ycbcr 4:4:4", "rgb"] : ["grayscale"];
    if (!names.includes(plain)) names.push(plain);
    const { trellis, quantTable } = this.options();
    const tabled = quantTable === "annex-k" ? plain : `${plain} ${quantTable}`;
    if (tabled !== plain) names.push(tabled);
    if (trellis) names.push(`${tabled} trellis`);
    return { names, current: trellis ? `${tabled} trellis` : tabled };
  }

  async #rateDistortion() {
    const token = ++this.rdToken;
    const { names } = this.#curveSettings();
    for (const name of names) {
      const key = `${this.region.id}|${name}`;
      if (this.rdCache.has(key)) continue;
      const { setting, options } = curveParts(name);
      const [color, sub] = setting.split(" ");
      const configAt = (quality) => ({ quality, encoded_color_space: color, ...(sub ? { subsampling: SUBSAMPLING[sub] } : {}) });
      let points;
      if (this.pool) {
        // All of a curve's qualities at once in the pool's workers, off this thread; the
        // input is the same at every quality (it depends on the colour space only).
        const { input, shape } = this.#input(configAt(RD_QUALITIES[0]));
        points = await Promise.all(
          RD_QUALITIES.map(async (quality) => {
            const config = configAt(quality);
            const bytes = await this.pool.encode(config, input, shape, options);
            const decoded = await this.pool.decode(config, bytes, shape);
            return { quality, bytes: bytes.length, psnr: psnr(decoded, input).psnr };
          }),
        );
        if (token !== this.rdToken) return;
      } else {
        points = [];
        for (const quality of RD_QUALITIES) {
          await tick();
          if (token !== this.rdToken) return;
          const m = this.#measure(configAt(quality), options);
          points.push({ quality, bytes: m.bytes, psnr: m.psnr });
        }
      }
      this.rdCache.set(key, points);
      this.#drawChart();
    }
    this.#drawChart();
    this.root.dispatchEvent(new CustomEvent("rd", { detail: { curves: names.length } }));
  }

  #drawChart() {
    const svg = this.$("#insp-rd");
    if (!this.region) return;
    const { names, current } = this.#curveSettings();
    const curves = names.map((name) => ({ name, points: this.rdCache.get(`${this.region.id}|${name}`) })).filter((c) => c.points);
    const W = 460;
    const H = 260;
    const m = { l: 52, r: 28, t: 14, b: 40 };
    const all = curves.flatMap((c) => c.points).filter((p) => Number.isFinite(p.psnr));
    const here = this.figures;
    if (here && Number.isFinite(here.psnr)) all.push({ bytes: here.bytes, psnr: here.psnr });
    if (!all.length) {
      svg.innerHTML = "";
      return;
    }
    const xMax = Math.max(...all.map((p) => p.bytes)) * 1.05;
    const yMin = Math.floor(Math.min(...all.map((p) => p.psnr)) / 5) * 5;
    const yMax = Math.ceil(Math.max(...all.map((p) => p.psnr)) / 5) * 5 + 1;
    const X = (b) => m.l + (b / xMax) * (W - m.l - m.r);
    const Y = (p) => H - m.b - ((Math.min(p, yMax) - yMin) / (yMax - yMin)) * (H - m.t - m.b);
    const colors = { "ycbcr 4:2:0": "#4cc9f0", "ycbcr 4:4:4": "#f72585", rgb: "#ffd60a", grayscale: "#80ed99" };
    const parts = [`<rect x="${m.l}" y="${m.t}" width="${W - m.l - m.r}" height="${H - m.t - m.b}" class="plot"/>`];
    for (let i = 0; i <= 4; i++) {
      const b = (xMax * i) / 4;
      parts.push(`<line x1="${X(b)}" x2="${X(b)}" y1="${m.t}" y2="${H - m.b}" class="grid"/>`,
        `<text x="${X(b)}" y="${H - m.b + 14}" text-anchor="middle">${fmtBytes(Math.round(b))}</text>`);
    }
    for (let p = yMin; p <= yMax; p += 5) {
      parts.push(`<line x1="${m.l}" x2="${W - m.r}" y1="${Y(p)}" y2="${Y(p)}" class="grid"/>`,
        `<text x="${m.l - 6}" y="${Y(p) + 4}" text-anchor="end">${p}</text>`);
    }
    parts.push(`<text x="${(W + m.l) / 2}" y="${H - 6}" text-anchor="middle" class="axis">encoded bytes of the region</text>`,
      `<text transform="translate(13 ${(H - m.b + m.t) / 2}) rotate(-90)" text-anchor="middle" class="axis">PSNR (dB)</text>`);
    curves.forEach((c, i) => {
      const { setting, options } = curveParts(c.name);
      const color = colors[setting] ?? "#c77dff";
      // trellis dashed, other tables dotted
      const dash = options.trellis ? ' stroke-dasharray="5 3"' : options.quantTable !== "annex-k" ? ' stroke-dasharray="1.5 2.5"' : "";
      const pts = c.points.filter((p) => Number.isFinite(p.psnr));
      const width = c.name === current ? 2.5 : 1.2;
      parts.push(`<polyline points="${pts.map((p) => `${X(p.bytes).toFixed(1)},${Y(p.psnr).toFixed(1)}`).join(" ")}" fill="none" stroke="${color}" stroke-width="${width}"${dash} opacity="${c.name === current ? 1 : 0.6}"/>`);
      for (const p of pts) parts.push(`<circle cx="${X(p.bytes).toFixed(1)}" cy="${Y(p.psnr).toFixed(1)}" r="${c.name === current ? 2.6 : 1.6}" fill="${color}"><title>${c.name}, quality ${p.quality}: ${fmtBytes(p.bytes)}, ${p.psnr.toFixed(2)} dB</title></circle>`);
      parts.push(`<text x="${W - m.r - 6}" y="${H - m.b - 8 - 14 * i}" text-anchor="end" fill="${color}" class="legend">${c.name}${c.name === current ? " (selected)" : ""}</text>`);
    });
    if (here && Number.isFinite(here.psnr)) {
      parts.push(`<circle id="rd-current" cx="${X(here.bytes).toFixed(1)}" cy="${Y(here.psnr).toFixed(1)}" r="6" fill="none" stroke="#fff" stroke-width="2"><title>current: quality ${here.config.quality}${here.options.quantTable !== "annex-k" ? `, ${here.options.quantTable} tables` : ""}${here.options.trellis ? ", trellis" : ""}, ${fmtBytes(here.bytes)}, ${here.psnr.toFixed(2)} dB</title></circle>`);
    }
    svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
    svg.innerHTML = parts.join("");
  }
}
