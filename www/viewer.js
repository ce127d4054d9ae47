// The pan/zoom canvas: picks the pyramid level for the zoom, reads only the chunks that
// are visible (through zarrita, so the jpeg codec decodes them in the worker pool), keeps
// decoded chunks as small canvases, and reports per-chunk details under the pointer.
import { chunkKey, fixedAt } from "./dataset.js";

const MAX_IN_FLIGHT = 6;
const CACHE_LIMIT = 400; // decoded chunks kept (≈ 100 MB of RGBA at 256²)

/** Where, in a chunk of `chunkShape` with `stride`, the plane the axes held at one index (`fixed`) pick begins. */
function planeOffset(fixed, chunkShape, stride) {
  let base = 0;
  for (const [axis, index] of Object.entries(fixed)) base += (index % chunkShape[axis]) * stride[axis];
  return base;
}

/** Chunk samples (zarrita's {data, shape, stride}) → RGBA for the valid `h × w` corner of the plane `fixed` picks. */
export function chunkToRgba(chunk, axes, fixed, h, w, chunkCoords, chunkShape) {
  const { data, stride } = chunk;
  const rgba = new Uint8ClampedArray(h * w * 4);
  const base = planeOffset(fixed, chunkShape, stride);
  const sy = stride[axes.y];
  const sx = stride[axes.x];
  const sc = axes.c >= 0 ? stride[axes.c] : 0;
  const c0 = axes.c >= 0 ? chunkCoords[axes.c] * chunkShape[axes.c] : 0;
  for (let y = 0, o = 0; y < h; y++) {
    for (let x = 0; x < w; x++, o += 4) {
      const at = base + y * sy + x * sx;
      if (axes.rgb) {
        rgba[o] = data[at - c0 * sc];
        rgba[o + 1] = data[at + (1 - c0) * sc];
        rgba[o + 2] = data[at + (2 - c0) * sc];
      } else {
        const v = data[at];
        rgba[o] = rgba[o + 1] = rgba[o + 2] = v;
      }
      rgba[o + 3] = 255;
    }
  }
  return rgba;
}

/**
 * The chunks of a dataset's separately stored channels (one per entry of
 * `axes.composite`, same coordinates but the channel) → RGBA: each channel's display window
 * mapped to 0–1, tinted by its colour and added, as OME-Zarr viewers composite `omero`
 * channels.
 */
export function compositeToRgba(chunks, axes, fixed, h, w, chunkShape) {
  const rgba = new Uint8ClampedArray(h * w * 4);
  const sum = new Float32Array(h * w * 3);
  axes.composite.forEach((channel, k) => {
    if (!channel.active) return;
    const { data, stride } = chunks[k];
    const base = planeOffset(fixed, chunkShape, stride);
    const [r, g, b] = channel.color;
    const scale = 1 / (channel.end - channel.start);
    for (let y = 0, o = 0; y < h; y++) {
      for (let x = 0; x < w; x++, o += 3) {
        const v = Math.min(Math.max((data[base + y * stride[axes.y] + x * stride[axes.x]] - channel.start) * scale, 0), 1);
        sum[o] += v * r;
        sum[o + 1] += v * g;
        sum[o + 2] += v * b;
      }
    }
  });
  for (let p = 0, o = 0; p < h * w; p++, o += 4) {
    rgba[o] = Math.round(sum[3 * p] * 255);
    rgba[o + 1] = Math.round(sum[3 * p + 1] * 255);
    rgba[o + 2] = Math.round(sum[3 * p + 2] * 255);
    rgba[o + 3] = 255;
  }
  return rgba;
}

export class Viewer extends EventTarget {
  constructor(canvas) {
    super();
    this.canvas = canvas;
    this.ctx = canvas.getContext("2d");
    this.dataset = null;
    this.cache = new Map(); // id → entry {level, cy, cx, canvas, info, used}
    this.loading = new Map(); // id → promise
    this.queue = [];
    this.inFlight = 0;
    this.generation = 0;
    this.view = { cx: 0, cy: 0, zoom: 1 }; // centre in level-0 pixels; screen pixels per level-0 pixel
    this.hover = null;
    this.pendingFrame = 0;
    this.idleWaiters = [];
    this.#bindInput();
    new ResizeObserver(() => this.resize()).observe(canvas.parentElement);
    this.resize();
  }

  setDataset(dataset) {
    this.dataset = dataset;
    this.hover = null;
    this.stats = null;
    this.fit();
    this.refresh();
  }

  /** Draws the chunks again (another dataset, plane or channel settings): the decoded chunks go. */
  refresh() {
    this.generation++;
    this.cache.clear();
    this.loading.clear();
    // Loads already started finish unseen (their generation is stale) and never decrement
    // the counter, so it restarts here.
    this.inFlight = 0;
    this.queue = [];
    this.requestRender();
  }

  /** Shows plane `index` of axis `axis` (e.g. z or t), keeping the view. */
  setPlane(axis, index) {
    this.dataset.axes.fixed[axis] = index;
    this.refresh();
  }

  resize() {
    const parent = this.canvas.parentElement;
    const dpr = window.devicePixelRatio || 1;
    const w = Math.max(1, Math.floor(parent.clientWidth));
    const h = Math.max(1, Math.floor(parent.clientHeight));
    this.canvas.style.width = `${w}px`;
    this.canvas.style.height = `${h}px`;
    this.canvas.width = Math.round(w * dpr);
    this.canvas.height = Math.round(h * dpr);
    this.requestRender();
  }

  get level0() {
    return this.dataset.levels[0];
  }

  fit() {
    if (!this.dataset) return;
    const { width, height } = this.level0;
    const zoom = Math.min(this.canvas.width / width, this.canvas.height / height) * 0.95;
    this.view = { cx: width / 2, cy: height / 2, zoom };
    this.requestRender();
  }

  /** Shows level `level` at 1:1 (one level pixel per canvas pixel) with its pixel (x0, y0) at the canvas's top-left. */
  setPixelView(level, x0, y0) {
    const f = this.dataset.levels[level].factor;
    const zoom = 1 / f;
    this.view = { cx: x0 * f + this.canvas.width / 2 / zoom, cy: y0 * f + this.canvas.height / 2 / zoom, zoom };
    this.requestRender();
  }

  zoomBy(factor, sx = this.canvas.width / 2, sy = this.canvas.height / 2) {
    const v = this.view;
    const ix = v.cx + (sx - this.canvas.width / 2) / v.zoom;
    const iy = v.cy + (sy - this.canvas.height / 2) / v.zoom;
    const zoom = Math.min(64, Math.max(1 / 512, v.zoom * factor));
    this.view = { zoom, cx: ix - (sx - this.canvas.width / 2) / zoom, cy: iy - (sy - this.canvas.height / 2) / zoom };
    this.requestRender();
  }

  panBy(dx, dy) {
    this.view = { ...this.view, cx: this.view.cx - dx / this.view.zoom, cy: this.view.cy - dy / this.view.zoom };
    this.requestRender();
  }

  /** The level whose pixels are closest to, but not smaller than needed for, the screen's. */
  currentLevel() {
    const levels = this.dataset.levels;
    let best = 0;
    for (let i = 0; i < levels.length; i++) if (levels[i].factor <= 1 / this.view.zoom + 1e-9) best = i;
    return best;
  }

  /** The visible rectangle in level-0 pixels. */
  visibleRect() {
    const v = this.view;
    const w = this.canvas.width / v.zoom;
    const h = this.canvas.height / v.zoom;
    return { x0: v.cx - w / 2, y0: v.cy - h / 2, x1: v.cx + w / 2, y1: v.cy + h / 2 };
  }

  /** The visible part of the image at `level`, in that level's pixels (integers, clipped). */
  visibleRegion(level = this.currentLevel()) {
    const L = this.dataset.levels[level];
    const r = this.visibleRect();
    const x0 = Math.max(0, Math.floor(r.x0 / L.factor));
    const y0 = Math.max(0, Math.floor(r.y0 / L.factor));
    const x1 = Math.min(L.width, Math.ceil(r.x1 / L.factor));
    const y1 = Math.min(L.height, Math.ceil(r.y1 / L.factor));
    return { level, x0, y0, x1: Math.max(x0, x1), y1: Math.max(y0, y1) };
  }

  requestRender() {
    if (this.pendingFrame) return;
    this.pendingFrame = requestAnimationFrame(() => {
      this.pendingFrame = 0;
      this.render();
    });
  }

  #chunksFor(level) {
    const L = this.dataset.levels[level];
    const reg = this.visibleRegion(level);
    const out = [];
    const cy0 = Math.floor(reg.y0 / L.chunkHeight);
    const cy1 = Math.ceil(reg.y1 / L.chunkHeight);
    const cx0 = Math.floor(reg.x0 / L.chunkWidth);
    const cx1 = Math.ceil(reg.x1 / L.chunkWidth);
    for (let cy = cy0; cy < cy1; cy++) for (let cx = cx0; cx < cx1; cx++) out.push({ level, cy, cx, id: `${level}/${cy}/${cx}` });
    return out;
  }

  render() {
    const ctx = this.ctx;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.fillStyle = "#1b1d22";
    ctx.fillRect(0, 0, this.canvas.width, this.canvas.height);
    if (!this.dataset) return;
    const level = this.currentLevel();
    const levels = this.dataset.levels;
    const wanted = this.#chunksFor(level);
    // Underlay: the coarsest level (usually one chunk), so panning never shows holes.
    const coarsest = levels.length - 1;
    const under = coarsest !== level ? this.#chunksFor(coarsest) : [];
    for (const c of [...under, ...wanted]) this.#draw(c);
    // Ask for what is missing, the coarsest level first, then from the centre outwards.
    const centre = this.visibleRegion(level);
    const mid = { x: (centre.x0 + centre.x1) / 2, y: (centre.y0 + centre.y1) / 2 };
    const L = levels[level];
    const dist = (c) => Math.hypot((c.cx + 0.5) * L.chunkWidth - mid.x, (c.cy + 0.5) * L.chunkHeight - mid.y);
    const missing = wanted.filter((c) => !this.cache.has(c.id)).sort((a, b) => dist(a) - dist(b));
    this.queue = [...under.filter((c) => !this.cache.has(c.id)), ...missing];
    this.#pump();
    this.#drawHover(level);
    this.stats = {
      level,
      zoom: this.view.zoom,
      visible: wanted.length,
      loaded: wanted.filter((c) => this.cache.has(c.id)).length,
      encodedBytes: wanted.reduce((n, c) => n + (this.cache.get(c.id)?.info.bytes ?? 0), 0),
    };
    this.dispatchEvent(new CustomEvent("render", { detail: this.stats }));
    if (this.stats.loaded === this.stats.visible && this.inFlight === 0) {
      const waiters = this.idleWaiters.splice(0);
      for (const resolve of waiters) resolve(this.stats);
      this.dispatchEvent(new CustomEvent("idle", { detail: this.stats }));
    }
  }

  /** Resolves once every visible chunk of the current level is drawn. */
  idle() {
    return new Promise((resolve) => {
      this.idleWaiters.push(resolve);
      this.requestRender();
    });
  }

  #screenRect(level, x, y, w, h) {
    const f = this.dataset.levels[level].factor;
    const v = this.view;
    const s = v.zoom * f;
    return {
      x: (x * f - v.cx) * v.zoom + this.canvas.width / 2,
      y: (y * f - v.cy) * v.zoom + this.canvas.height / 2,
      w: w * s,
      h: h * s,
      scale: s,
    };
  }

  #draw(c) {
    const entry = this.cache.get(c.id);
    if (!entry) return;
    entry.used = performance.now();
    const L = this.dataset.levels[c.level];
    const r = this.#screenRect(c.level, c.cx * L.chunkWidth, c.cy * L.chunkHeight, entry.canvas.width, entry.canvas.height);
    this.ctx.imageSmoothingEnabled = r.scale < 1;
    this.ctx.drawImage(entry.canvas, r.x, r.y, r.w, r.h);
  }

  #drawHover(level) {
    if (!this.hover || this.hover.level !== level) return;
    const L = this.dataset.levels[level];
    const { cy, cx } = this.hover;
    const w = Math.min(L.chunkWidth, L.width - cx * L.chunkWidth);
    const h = Math.min(L.chunkHeight, L.height - cy * L.chunkHeight);
    const r = this.#screenRect(level, cx * L.chunkWidth, cy * L.chunkHeight, w, h);
    this.ctx.strokeStyle = "rgba(255, 214, 10, 0.9)";
    this.ctx.lineWidth = 2;
    this.ctx.strokeRect(r.x + 1, r.y + 1, r.w - 2, r.h - 2);
  }

  #pump() {
    while (this.inFlight < MAX_IN_FLIGHT && this.queue.length) {
      const c = this.queue.shift();
      if (this.cache.has(c.id) || this.loading.has(c.id)) continue;
      this.inFlight++;
      const generation = this.generation;
      const job = this.#load(c)
        .then((entry) => {
          if (generation !== this.generation) return;
          this.cache.set(c.id, entry);
          this.#evict();
        })
        .catch((error) => {
          if (generation !== this.generation) return;
          this.dispatchEvent(new CustomEvent("chunkerror", { detail: { chunk: c, error } }));
        })
        .finally(() => {
          if (generation !== this.generation) return;
          this.loading.delete(c.id);
          this.inFlight--;
          this.requestRender();
        });
      this.loading.set(c.id, job);
    }
  }

  async #load(c) {
    const { axes } = this.dataset;
    const L = this.dataset.levels[c.level];
    const array = L.array;
    const coords = array.shape.map(() => 0);
    coords[axes.y] = c.cy;
    coords[axes.x] = c.cx;
    const fixed = fixedAt(this.dataset, L);
    for (const [axis, index] of Object.entries(fixed)) coords[axis] = Math.floor(index / array.chunks[axis]);
    const meter = {};
    const t0 = performance.now();
    const w = Math.min(L.chunkWidth, L.width - c.cx * L.chunkWidth);
    const h = Math.min(L.chunkHeight, L.height - c.cy * L.chunkHeight);
    let rgba;
    if (axes.composite) {
      // one chunk per channel; the details below are those of the first
      const first = axes.composite.findIndex((channel) => channel.active);
      const chunks = await Promise.all(axes.composite.map((channel, k) => {
        const at = coords.slice();
        at[axes.c] = channel.index;
        return channel.active ? array.getChunk(at, { meter: k === first ? meter : {} }) : null;
      }));
      coords[axes.c] = axes.composite[first].index;
      rgba = compositeToRgba(chunks, axes, fixed, h, w, array.chunks);
    } else {
      rgba = chunkToRgba(await array.getChunk(coords, { meter }), axes, fixed, h, w, coords, array.chunks);
    }
    const t1 = performance.now();
    const canvas = document.createElement("canvas");
    canvas.width = w;
    canvas.height = h;
    canvas.getContext("2d").putImageData(new ImageData(rgba, w, h), 0, 0);
    let key = chunkKey(L.meta, coords);
    if (L.sharded) {
      const per = L.shardShape.map((s, i) => s / array.chunks[i]);
      key = `${chunkKey(L.meta, coords.map((v, i) => Math.floor(v / per[i])))} ▸ inner chunk (${coords.join(", ")})`;
    }
    return {
      canvas,
      used: t1,
      info: {
        level: c.level,
        path: L.path,
        coords,
        key,
        bytes: meter.bytes ?? 0,
        missing: !meter.bytes,
        shape: [h, w],
        fetchMs: meter.fetchMs ?? 0,
        decodeMs: meter.fetched ? t1 - meter.fetched : t1 - t0,
        totalMs: t1 - t0,
      },
    };
  }

  #evict() {
    if (this.cache.size <= CACHE_LIMIT) return;
    const entries = [...this.cache.entries()].sort((a, b) => a[1].used - b[1].used);
    for (const [id] of entries.slice(0, this.cache.size - CACHE_LIMIT)) this.cache.delete(id);
  }

  /** Details of the chunk under canvas point (sx, sy), or null. */
  chunkAt(sx, sy) {
    if (!this.dataset) return null;
    const level = this.currentLevel();
    const L = this.dataset.levels[level];
    const v = this.view;
    const ix = (v.cx + (sx - this.canvas.width / 2) / v.zoom) / L.factor;
    const iy = (v.cy + (sy - this.canvas.height / 2) / v.zoom) / L.factor;
    if (ix < 0 || iy < 0 || ix >= L.width || iy >= L.height) return null;
    const cx = Math.floor(ix / L.chunkWidth);
    const cy = Math.floor(iy / L.chunkHeight);
    const entry = this.cache.get(`${level}/${cy}/${cx}`);
    return { level, cy, cx, x: Math.floor(ix), y: Math.floor(iy), info: entry?.info ?? null };
  }

  #bindInput() {
    const canvas = this.canvas;
    let drag = null;
    const point = (e) => {
      const rect = canvas.getBoundingClientRect();
      return { x: ((e.clientX - rect.left) * canvas.width) / rect.width, y: ((e.clientY - rect.top) * canvas.height) / rect.height };
    };
    canvas.addEventListener("pointerdown", (e) => {
      drag = { ...point(e), id: e.pointerId };
      canvas.setPointerCapture(e.pointerId);
      canvas.classList.add("dragging");
    });
    canvas.addEventListener("pointermove", (e) => {
      const p = point(e);
      if (drag) {
        this.panBy(p.x - drag.x, p.y - drag.y);
        drag.x = p.x;
        drag.y = p.y;
      }
      const hit = this.chunkAt(p.x, p.y);
      const same = hit && this.hover && hit.level === this.hover.level && hit.cx === this.hover.cx && hit.cy === this.hover.cy;
      this.hover = hit;
      if (!same) this.requestRender();
      this.dispatchEvent(new CustomEvent("hover", { detail: hit ? { ...hit, clientX: e.clientX, clientY: e.clientY } : null }));
    });
    const end = () => {
      drag = null;
      canvas.classList.remove("dragging");
      this.dispatchEvent(new CustomEvent("viewchange"));
    };
    canvas.addEventListener("pointerup", end);
    canvas.addEventListener("pointercancel", end);
    canvas.addEventListener("pointerleave", () => {
      this.hover = null;
      this.requestRender();
      this.dispatchEvent(new CustomEvent("hover", { detail: null }));
    });
    canvas.addEventListener("wheel", (e) => {
      e.preventDefault();
      const p = point(e);
      this.zoomBy(Math.exp(-e.deltaY * 0.0015), p.x, p.y);
      this.dispatchEvent(new CustomEvent("viewchange"));
    }, { passive: false });
  }
}
