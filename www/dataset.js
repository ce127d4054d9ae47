// Opening a dataset by URL: an OME-Zarr multiscale image (Zarr v3 group) or a plain Zarr v3
// array. Checks what this page can show before zarrita touches a chunk (uint8, codecs
// this page's registry has, a 2-D image with 1 or 3 channels) and explains any refusal.
// The store is metered (each chunk read records its encoded size and fetch time) and
// cached, so the viewer and the inspector share fetched bytes.
import * as zarr from "zarrita";

/** A dataset this page cannot show; `kind` is "fetch", "codec", "dtype" or "layout". */
export class DatasetError extends Error {
  constructor(kind, message) {
    super(message);
    this.kind = kind;
  }
}

/**
 * Wraps a store so a read can carry a `meter` object in its options (zarrita passes
 * getChunk's options through to the store): the meter receives the bytes and timings.
 */
export class MeteredStore {
  constructor(inner) {
    this.inner = inner;
  }
  async get(key, options) {
    const { meter, ...rest } = options ?? {};
    const t0 = performance.now();
    const bytes = await this.inner.get(key, rest);
    if (meter) Object.assign(meter, { key, bytes: bytes?.length ?? 0, fetchMs: performance.now() - t0, fetched: performance.now() });
    return bytes;
  }
  async getRange(key, range, options) {
    const { meter, ...rest } = options ?? {};
    const t0 = performance.now();
    const bytes = await this.inner.getRange(key, range, rest);
    if (meter) {
      if ("suffixLength" in range) {
        meter.indexBytes = bytes?.length ?? 0; // the shard index, read once per shard
      } else {
        Object.assign(meter, { key, bytes: bytes?.length ?? 0, offset: range.offset, fetchMs: performance.now() - t0, fetched: performance.now() });
      }
    }
    return bytes;
  }
}

/**
 * Keeps recently read bytes, and shares reads in flight, so the viewer and the inspector
 * (which reads the visible region through zarrita on its own) fetch each chunk once.
 */
export class CachedStore {
  constructor(inner, maxBytes = 64 * 1024 * 1024) {
    this.inner = inner;
    this.maxBytes = maxBytes;
    this.bytes = 0;
    this.entries = new Map(); // cache key → { promise, size }; Map order is recency
  }
  get(key, options) {
    return this.#read(key, () => this.inner.get(key, options));
  }
  getRange(key, range, options) {
    const id = `${key}#${range.offset ?? ""}:${range.length ?? ""}:${range.suffixLength ?? ""}`;
    return this.#read(id, () => this.inner.getRange(key, range, options));
  }
  #read(id, fetchBytes) {
    const hit = this.entries.get(id);
    if (hit) {
      this.entries.delete(id); // move to the most recent end
      this.entries.set(id, hit);
      return hit.promise;
    }
    const entry = { promise: fetchBytes(), size: 0 };
    this.entries.set(id, entry);
    entry.promise.then(
      (bytes) => {
        if (this.entries.get(id) !== entry) return;
        entry.size = bytes?.length ?? 0;
        this.bytes += entry.size;
        this.#evict();
      },
      () => {
        if (this.entries.get(id) === entry) this.entries.delete(id); // failures are retried
      },
    );
    return entry.promise;
  }
  #evict() {
    for (const [id, entry] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      if (!entry.size) continue; // still in flight
      this.entries.delete(id);
      this.bytes -= entry.size;
    }
  }
}

function trimUrl(url) {
  const resolved = new URL(url, location.href).href;
  return resolved.replace(/\/+$/, "");
}

async function fetchJson(url, what) {
  let response;
  try {
    response = await fetch(url);
  } catch (error) {
    throw new DatasetError("fetch", `Could not fetch ${url} (${error.message}). Is the URL right, and does the server allow cross-origin requests (CORS)?`);
  }
  if (response.status === 404) return null;
  if (!response.ok) throw new DatasetError("fetch", `Fetching ${url} failed: HTTP ${response.status} ${response.statusText}`);
  try {
    return await response.json();
  } catch {
    throw new DatasetError("fetch", `${url} is not valid JSON (${what})`);
  }
}

/** Every codec name in an array's metadata, nested sharding codecs included. */
export function codecNames(codecs, out = []) {
  for (const codec of codecs ?? []) {
    const name = typeof codec === "string" ? codec : codec?.name;
    out.push(name);
    if (name === "sharding_indexed") {
      codecNames(codec.configuration?.codecs, out);
      codecNames(codec.configuration?.index_codecs, out);
    }
  }
  return out;
}

/** The jpeg codec configuration of an array's metadata (inside sharding too), or null. */
export function jpegConfig(meta) {
  const find = (codecs) => {
    for (const codec of codecs ?? []) {
      if (codec?.name === "jpeg") return codec.configuration;
      if (codec?.name === "sharding_indexed") {
        const inner = find(codec.configuration?.codecs);
        if (inner) return inner;
      }
    }
    return null;
  };
  return find(meta.codecs);
}

function checkArrayMeta(meta, url, registry) {
  if (meta.zarr_format !== 3 && meta.zarr_format !== 2) throw new DatasetError("layout", `${url}/zarr.json is not Zarr v3 metadata (zarr_format ${meta.zarr_format})`);
  if (meta.data_type !== "uint8") {
    throw new DatasetError("dtype",
      `The array at ${url} has data type "${typeof meta.data_type === "string" ? meta.data_type : JSON.stringify(meta.data_type)}"; ` +
        "this page shows uint8 arrays only (the jpeg codec stores uint8).");
  }
  const missing = [...new Set(codecNames(meta.codecs))].filter((name) => name !== "sharding_indexed" && !registry.has(name));
  if (missing.length) {
    throw new DatasetError("codec",
      `The array at ${url} uses the codec${missing.length > 1 ? "s" : ""} ${missing.map((n) => `"${n}"`).join(", ")}, ` +
        "which this page (zarrita + zarr-jpeg) cannot decode.");
  }
}

/** Which axis is y, x and the channel, and which index other axes are held at. */
function resolveAxes(names, shape, types) {
  const ndim = shape.length;
  const lower = names.map((n) => String(n ?? "").toLowerCase());
  let y = lower.lastIndexOf("y");
  let x = lower.lastIndexOf("x");
  let c = lower.findIndex((n, i) => n === "c" || types?.[i] === "channel");
  if (y < 0 || x < 0) {
    // No names: the last two non-channel axes are (y, x); a 3-D array with 1 or 3 at an end is a channel axis.
    if (c < 0 && ndim === 3) {
      if (shape[2] === 3 || shape[2] === 1) c = 2;
      else if (shape[0] === 3 || shape[0] === 1) c = 0;
    }
    const spatial = shape.map((_, i) => i).filter((i) => i !== c);
    if (spatial.length < 2) throw new DatasetError("layout", `cannot find two spatial axes in shape ${JSON.stringify(shape)}`);
    [y, x] = spatial.slice(-2);
  }
  const channels = c >= 0 ? shape[c] : 1;
  const fixed = {};
  shape.forEach((size, i) => {
    if (i !== y && i !== x && i !== c) fixed[i] = lower[i] === "z" ? Math.floor(size / 2) : 0;
  });
  return { y, x, c, channels, rgb: channels === 3, fixed };
}

/** "RRGGBB" → [r, g, b] in 0–1, or null. */
function hexColor(text) {
  return typeof text === "string" && /^[0-9a-f]{6}$/i.test(text) ? [0, 2, 4].map((i) => parseInt(text.slice(i, i + 2), 16) / 255) : null;
}

/**
 * The channels to blend, when the channel axis holds separately stored channels (chunks of
 * one channel each) that OME-Zarr's `omero` describes: each active one's index, colour and
 * display window (start–end mapped to 0–1, then tinted and added). Null otherwise (one
 * channel, or RGB chunks, which show as they are).
 */
function compositeChannels(omero, axes, array) {
  const list = omero?.channels;
  if (axes.c < 0 || axes.channels < 2 || array.chunks[axes.c] !== 1 || !Array.isArray(list) || list.length !== axes.channels) return null;
  const channels = list.map((channel, index) => {
    const window = channel?.window ?? {};
    const start = Number.isFinite(window.start) ? window.start : 0;
    const end = Number.isFinite(window.end) && window.end > start ? window.end : start + 255;
    return { index, label: String(channel?.label ?? `channel ${index}`), color: hexColor(channel?.color) ?? [1, 1, 1], start, end, active: channel?.active !== false };
  });
  return channels.some((c) => c.active) ? channels : null;
}

const V2_DTYPES = { "|u1": "uint8", "<u1": "uint8", ">u1": "uint8", "|i1": "int8" };

/** A kerchunk reference set (tifffile's `write_fsspec`, VirtualiZarr): version 1 or 0. */
function isReferenceSpec(json) {
  if (!json || typeof json !== "object" || Array.isArray(json)) return false;
  const refs = json.version === 1 ? json.refs : json;
  return !!refs && typeof refs === "object" && [".zarray", ".zgroup", "zarr.json"].some((k) => k in refs || Object.keys(refs).some((key) => key.endsWith(`/${k}`)));
}

/** Zarr v2 array metadata in the v3 shape this page checks (dtype, codecs, chunk keys). */
function v2ArrayMeta(zarray, url) {
  if (!zarray) throw new DatasetError("fetch", `No .zarray at ${url}: the references list no array there.`);
  const codecs = [];
  if (zarray.order === "F") codecs.push({ name: "transpose", configuration: { order: "F" } });
  for (const filter of zarray.filters ?? []) codecs.push({ name: `numcodecs.${filter.id}`, configuration: filter });
  codecs.push({ name: "bytes" });
  if (zarray.compressor) codecs.push({ name: `numcodecs.${zarray.compressor.id}`, configuration: zarray.compressor });
  return {
    zarr_format: 2,
    node_type: "array",
    data_type: V2_DTYPES[zarray.dtype] ?? zarray.dtype,
    shape: zarray.shape,
    codecs,
    chunk_grid: { name: "regular", configuration: { chunk_shape: zarray.chunks } },
    chunk_key_encoding: { name: "v2", configuration: { separator: zarray.dimension_separator ?? "." } },
  };
}

/**
 * Opens a kerchunk reference set: a TIFF page (or a pyramid, with OME-Zarr 0.4 multiscales
 * in `.zattrs`) read in place through Range requests, its chunks decoded by the
 * imagecodecs_jpeg codec.
 */
async function openReferences(url, spec, registry) {
  let store;
  try {
    store = zarr.ReferenceStore.fromSpec(spec);
  } catch (error) {
    throw new DatasetError("fetch", `${url} is not a reference set zarrita can read: ${error.message}`);
  }
  const metered = new MeteredStore(new CachedStore(store));
  const location = zarr.root(metered);
  const json = async (key) => {
    const bytes = await store.get(`/${key}`);
    return bytes ? JSON.parse(new TextDecoder().decode(bytes)) : null;
  };
  const zattrs = (await json(".zattrs")) ?? {};
  const ms = Array.isArray(zattrs.multiscales) ? zattrs.multiscales[0] : null;
  const levelPaths = ms?.datasets?.length ? ms.datasets.map((d) => String(d.path)) : [""];
  const levels = [];
  for (const path of levelPaths) {
    const meta = v2ArrayMeta(await json(path ? `${path}/.zarray` : ".zarray"), `${url} ${path}`);
    checkArrayMeta(meta, `${url}${path ? ` (${path})` : ""}`, registry);
    let array;
    try {
      array = await zarr.open.v2(path ? location.resolve(path) : location, { kind: "array" });
    } catch (error) {
      throw new DatasetError("layout", `zarrita cannot open ${url} ${path}: ${error.message}`);
    }
    levels.push({ path, url: `${url}#${path}`, array, meta, jpeg: null, references: true });
  }
  const axes = ms?.axes?.map((a) => (typeof a === "string" ? { name: a } : a));
  return { levels, axesMeta: axes ?? null, name: url.split("/").pop(), store: metered };
}

/**
 * Opens `url`. Returns `{ url, kind: "multiscale" | "array", name, levels, axes, store }`,
 * levels finest first: `{ path, array, meta, height, width, chunkHeight, chunkWidth, factor, jpeg }`.
 */
export async function openDataset(rawUrl, registry) {
  if (!rawUrl || !rawUrl.trim()) throw new DatasetError("fetch", "Enter the URL of a Zarr v3 array or OME-Zarr image.");
  let url;
  try {
    url = trimUrl(rawUrl.trim());
  } catch {
    throw new DatasetError("fetch", `"${rawUrl}" is not a URL`);
  }
  if (/\.json$/i.test(url)) {
    const spec = await fetchJson(url, "a reference set");
    if (!spec) throw new DatasetError("fetch", `No file at ${url} (HTTP 404).`);
    if (!isReferenceSpec(spec)) throw new DatasetError("layout", `${url} is JSON but not a kerchunk reference set (no .zarray or .zgroup in it).`);
    const opened = await openReferences(url, spec, registry);
    return finish({ url, kind: opened.levels.length > 1 ? "multiscale" : "array", ...opened });
  }
  const root = await fetchJson(`${url}/zarr.json`, "Zarr v3 metadata");
  if (!root) {
    const v2 = (await fetchJson(`${url}/.zattrs`, "").catch(() => null)) ?? (await fetchJson(`${url}/.zarray`, "").catch(() => null));
    throw new DatasetError("fetch",
      `No zarr.json at ${url}/zarr.json (HTTP 404). ` +
        (v2 ? "This looks like Zarr v2; this page opens Zarr v3 and OME-Zarr 0.5 datasets." : "Check the URL: it should point at a Zarr v3 array or an OME-Zarr image group."));
  }
  const store = new MeteredStore(new CachedStore(new zarr.FetchStore(url)));
  const location = zarr.root(store);
  let levelPaths;
  let axesMeta = null;
  let omero = null;
  let scales = [];
  let name = url.split("/").pop();
  let kind;
  if (root.node_type === "array") {
    kind = "array";
    levelPaths = [""];
  } else if (root.node_type === "group") {
    const attrs = root.attributes ?? {};
    const ome = attrs.ome ?? attrs;
    const ms = Array.isArray(ome.multiscales) ? ome.multiscales[0] : null;
    if (!ms || !Array.isArray(ms.datasets) || ms.datasets.length === 0) {
      throw new DatasetError("layout", `${url} is a Zarr group without OME-Zarr multiscales; open one of its arrays or image groups instead.`);
    }
    kind = "multiscale";
    levelPaths = ms.datasets.map((d) => String(d.path));
    scales = ms.datasets.map((d) => (Array.isArray(d.coordinateTransformations) ? d.coordinateTransformations.find((t) => t?.type === "scale")?.scale : null) ?? null);
    axesMeta = Array.isArray(ms.axes) ? ms.axes.map((a) => (typeof a === "string" ? { name: a } : a)) : null;
    name = ms.name ?? name;
    omero = ome.omero ?? null;
  } else {
    throw new DatasetError("layout", `${url}/zarr.json has node_type ${JSON.stringify(root.node_type)}`);
  }
  const levels = [];
  for (const [i, path] of levelPaths.entries()) {
    const levelUrl = path ? `${url}/${path}` : url;
    const meta = path ? await fetchJson(`${levelUrl}/zarr.json`, "array metadata") : root;
    if (!meta) throw new DatasetError("fetch", `No zarr.json at ${levelUrl}/zarr.json (HTTP 404): the multiscales list a level that is missing.`);
    if (meta.node_type !== "array") throw new DatasetError("layout", `${levelUrl} is not an array`);
    checkArrayMeta(meta, levelUrl, registry);
    let array;
    try {
      array = await zarr.open.v3(path ? location.resolve(path) : location, { kind: "array" });
    } catch (error) {
      throw new DatasetError("layout", `zarrita cannot open ${levelUrl}: ${error.message}`);
    }
    levels.push({ path, url: levelUrl, array, meta, jpeg: jpegConfig(meta), scale: scales[i] ?? null });
  }
  return finish({ url, kind, name, levels, axesMeta, omero, store });
}

/** Axes, level sizes and order, for a dataset opened either way. */
function finish({ url, kind, name, levels, axesMeta, omero, store }) {
  const first = levels[0];
  const names = axesMeta?.map((a) => a.name) ?? first.meta.dimension_names ?? first.array.shape.map(() => null);
  const axes = resolveAxes(names, first.array.shape, axesMeta?.map((a) => a.type));
  axes.names = names.map((n, i) => n ?? `axis ${i}`);
  axes.composite = compositeChannels(omero, axes, first.array);
  if (axes.composite) {
    axes.rgb = false;
  } else if (axes.channels !== 1 && axes.channels !== 3) {
    axes.note = `the channel axis has ${axes.channels} channels; showing channel 0 as grayscale`;
    axes.rgb = false;
  }
  for (const level of levels) {
    const shape = level.array.shape;
    const chunks = level.array.chunks;
    Object.assign(level, {
      height: shape[axes.y],
      width: shape[axes.x],
      chunkHeight: chunks[axes.y],
      chunkWidth: chunks[axes.x],
      factor: first.array.shape[axes.x] / shape[axes.x],
      sharded: codecNames(level.meta.codecs)[0] === "sharding_indexed",
      shardShape: level.meta.chunk_grid?.configuration?.chunk_shape,
    });
  }
  // The finest level first, whatever order the metadata lists them in.
  levels.sort((a, b) => a.factor - b.factor);
  return { url, kind, name, levels, axes, store };
}

/**
 * The indices `level` is held at along the axes the view does not show (z, t, …): the
 * dataset's `axes.fixed` are level 0's, and a level that halves z too has fewer planes, each
 * spanning several of level 0's, by the ratio of the levels' scales (OME-Zarr), else of their
 * sizes.
 */
export function fixedAt(dataset, level) {
  const first = dataset.levels[0];
  return Object.fromEntries(Object.entries(dataset.axes.fixed).map(([axis, index]) => {
    const size = level.array.shape[axis];
    const ratio = first.scale?.[axis] > 0 && level.scale?.[axis] > 0 ? level.scale[axis] / first.scale[axis] : first.array.shape[axis] / size;
    return [axis, Math.min(size - 1, Math.floor(index / ratio + 1e-9))];
  }));
}

/** The default chunk key of `coords` for an array's chunk_key_encoding. */
export function chunkKey(meta, coords) {
  const encoding = meta.chunk_key_encoding ?? { name: "default" };
  const separator = encoding.configuration?.separator ?? (encoding.name === "v2" ? "." : "/");
  if (encoding.name === "v2") return coords.join(separator);
  return ["c", ...coords].join(separator);
}
