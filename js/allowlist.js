// OME-Zarr RFC-16: checks Zarr v3 array metadata and OME-Zarr hierarchies
// against the allowlist of Zarr extensions (allowlist.json), and says which
// allowlisted extensions this package plus zarrita can read.
// Browser-safe: no Node-only imports; zarrita is loaded lazily, only when
// checkDataset is given a URL.
import allowlist from "./allowlist.json" with { type: "json" };
import { packageError } from "./errors.js";

export { allowlist };

/** The five RFC-16 extension points, in report order. */
export const EXTENSION_POINTS = Object.freeze([
  "data_type",
  "codec",
  "chunk_grid",
  "chunk_key_encoding",
  "storage_transformer",
]);

const LEVEL_ORDER = ["MUST", "SHOULD", "MAY", "not-allowed"];

/** Top-level members of Zarr v3 array metadata (core specification). */
const CORE_ARRAY_MEMBERS = new Set([
  "zarr_format", "node_type", "shape", "data_type", "chunk_grid", "chunk_key_encoding",
  "fill_value", "codecs", "attributes", "storage_transformers", "dimension_names",
]);

function indexByPointAndName(list) {
  const index = new Map(EXTENSION_POINTS.map((point) => [point, new Map()]));
  for (const item of list) index.get(item.extensionPoint).set(item.name, item);
  return index;
}

const ENTRIES = new Map(
  EXTENSION_POINTS.map((point) => [
    point,
    new Map(allowlist.extensionPoints[point].entries.map((entry) => [entry.name, entry])),
  ]),
);
const ALIASES = indexByPointAndName(allowlist.aliases);
const RELATED = indexByPointAndName(allowlist.related);
const EXCLUDED = indexByPointAndName(allowlist.excluded);

const POINT_LABEL = {
  data_type: "data type",
  codec: "codec",
  chunk_grid: "chunk grid",
  chunk_key_encoding: "chunk key encoding",
  storage_transformer: "storage transformer",
  metadata: "metadata",
  hierarchy: "hierarchy",
};

/**
 * What the allowlist says about one extension name.
 * @returns {{ level: string, entry?: object, alias?: object, related?: object, excluded?: object }}
 */
export function lookupExtension(extensionPoint, name) {
  const entry = ENTRIES.get(extensionPoint)?.get(name);
  if (entry) return { level: entry.readers, entry };
  return {
    level: "not-allowed",
    alias: ALIASES.get(extensionPoint)?.get(name),
    related: RELATED.get(extensionPoint)?.get(name),
    excluded: EXCLUDED.get(extensionPoint)?.get(name),
  };
}

// ---------------------------------------------------------------- findings

function finding(extensionPoint, name, location, level, severity, message, extra) {
  return { extensionPoint, name, location, level, severity, message, ...extra };
}

function invalid(location, message) {
  return finding("metadata", null, location, "invalid", "error", message);
}

function describe(value) {
  if (value === undefined) return "nothing (the member is missing)";
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return JSON.stringify(value);
  return typeof value === "object" ? "an object" : `${typeof value} ${String(value)}`;
}

function isPlainObject(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isIgnorable(value) {
  return isPlainObject(value) && value.must_understand === false;
}

function allowedNames(extensionPoint) {
  return [...ENTRIES.get(extensionPoint).keys()].join(", ");
}

/** The finding for one use of an extension name at a location. */
function extensionFinding(extensionPoint, name, location) {
  const label = POINT_LABEL[extensionPoint];
  const what = `${label} "${name}" at ${location || "(root)"}`;
  const { level, alias, related, excluded } = lookupExtension(extensionPoint, name);
  if (level !== "not-allowed") {
    return finding(extensionPoint, name, location, level, "info",
      `${what} is on the allowlist (readers ${level} support it)`);
  }
  if (alias) {
    return finding(extensionPoint, name, location, level, "error",
      `${what} is an alias (${alias.kind}) of "${alias.aliasOf}"; RFC-16 Conformance: writers MUST use the allowlisted name, aliases MUST NOT be written — write "${alias.aliasOf}"`,
      { aliasOf: alias.aliasOf });
  }
  if (related) {
    return finding(extensionPoint, name, location, level, "error",
      `${what} is not on the allowlist and is not an alias (${related.note}); re-encode with ${related.insteadUse.join(" + ")}`,
      { insteadUse: related.insteadUse });
  }
  if (excluded) {
    return finding(extensionPoint, name, location, level, "error",
      `${what} is deliberately not on the allowlist: ${excluded.reason}`);
  }
  const allowed = allowedNames(extensionPoint);
  return finding(extensionPoint, name, location, level, "error",
    allowed
      ? `${what} is not on the allowlist; OME-Zarr data MUST only use allowlisted ${label}s (${allowed})`
      : `${what} is not on the allowlist, which has no ${label}s`);
}

function ignoredFinding(extensionPoint, name, location) {
  return finding(extensionPoint, name, location, "ignored", "info",
    `${POINT_LABEL[extensionPoint]} ${name ? `"${name}" ` : ""}at ${location} is marked "must_understand": false; RFC-16 does not restrict it`);
}

// ---------------------------------------------------------------- walking

/** A named extension member: a string, or an object with a string `name`. */
function extensionName(value) {
  if (typeof value === "string") return value;
  if (isPlainObject(value) && typeof value.name === "string") return value.name;
  return undefined;
}

function checkNamedMember(findings, extensionPoint, value, location) {
  const name = extensionName(value);
  if (name === undefined) {
    findings.push(invalid(location,
      `${location} must be a ${POINT_LABEL[extensionPoint]} name or an object with a string "name", got ${describe(value)}`));
    return;
  }
  findings.push(extensionFinding(extensionPoint, name, location));
}

/** A codec object: `{name, configuration?, must_understand?}` and nothing else. */
function isCodecObject(value) {
  if (!isPlainObject(value) || typeof value.name !== "string") return false;
  if ("configuration" in value && !isPlainObject(value.configuration)) return false;
  return Object.keys(value).every((key) => key === "name" || key === "configuration" || key === "must_understand");
}

/** A list of codecs: codec objects, possibly mixed with bare codec names. */
function isCodecList(value) {
  return Array.isArray(value) && value.length > 0 && value.some(isCodecObject)
    && value.every((item) => isCodecObject(item) || typeof item === "string");
}

function checkCodecList(findings, codecs, location) {
  if (!Array.isArray(codecs)) {
    findings.push(invalid(location, `${location} must be an array of codecs, got ${describe(codecs)}`));
    return;
  }
  if (codecs.length === 0) {
    findings.push(invalid(location, `${location} must list at least one codec (Zarr v3 needs an array → bytes codec)`));
    return;
  }
  codecs.forEach((codec, i) => checkCodec(findings, codec, `${location}[${i}]`));
}

function checkCodec(findings, codec, location) {
  if (isIgnorable(codec)) {
    findings.push(ignoredFinding("codec", extensionName(codec), location));
    return;
  }
  const name = extensionName(codec);
  if (name === undefined) {
    findings.push(invalid(location, `${location} must be a codec name or an object with a string "name", got ${describe(codec)}`));
    return;
  }
  findings.push(extensionFinding("codec", name, location));
  if (!isPlainObject(codec) || !("configuration" in codec)) return;
  if (!isPlainObject(codec.configuration)) {
    findings.push(invalid(`${location}.configuration`,
      `${location}.configuration of codec "${name}" must be an object, got ${describe(codec.configuration)}`));
    return;
  }
  for (const [key, value] of Object.entries(codec.configuration)) {
    checkConfigurationMember(findings, key, value, `${location}.configuration.${key}`);
  }
}

/**
 * Nested extensions inside a codec configuration: a `data_type` member
 * (cast_value's target type), and codec objects held by any member at any
 * depth (sharding_indexed's `codecs`/`index_codecs`, conditional's wrapped codecs).
 */
function checkConfigurationMember(findings, key, value, location) {
  if (isIgnorable(value)) {
    findings.push(ignoredFinding("codec", extensionName(value), location));
    return;
  }
  if (key === "data_type" && extensionName(value) !== undefined) {
    findings.push(extensionFinding("data_type", extensionName(value), location));
    return;
  }
  findNestedCodecs(findings, value, location);
}

function findNestedCodecs(findings, value, location) {
  if (isCodecList(value)) {
    value.forEach((codec, i) => checkCodec(findings, codec, `${location}[${i}]`));
  } else if (isCodecObject(value)) {
    checkCodec(findings, value, location);
  } else if (Array.isArray(value)) {
    value.forEach((item, i) => findNestedCodecs(findings, item, `${location}[${i}]`));
  } else if (isPlainObject(value)) {
    for (const [key, member] of Object.entries(value)) {
      checkConfigurationMember(findings, key, member, `${location}.${key}`);
    }
  }
}

function checkStorageTransformers(findings, transformers) {
  if (transformers === undefined) return;
  if (!Array.isArray(transformers)) {
    findings.push(invalid("storage_transformers", `storage_transformers must be an array, got ${describe(transformers)}`));
    return;
  }
  transformers.forEach((transformer, i) => {
    const location = `storage_transformers[${i}]`;
    const name = extensionName(transformer);
    if (isIgnorable(transformer)) {
      findings.push(ignoredFinding("storage_transformer", name, location));
    } else if (name === undefined) {
      findings.push(invalid(location, `${location} must be an object with a string "name", got ${describe(transformer)}`));
    } else {
      findings.push(finding("storage_transformer", name, location, "not-allowed", "error",
        `storage transformer "${name}" at ${location} is not allowed: the RFC-16 allowlist of storage transformers is empty, so storage_transformers MUST be absent or []`));
    }
  });
}

function checkOtherMembers(findings, metadata) {
  for (const [key, value] of Object.entries(metadata)) {
    if (CORE_ARRAY_MEMBERS.has(key)) continue;
    if (isIgnorable(value)) {
      findings.push(finding("metadata", key, key, "ignored", "info",
        `member "${key}" is marked "must_understand": false; RFC-16 does not restrict it`));
    } else {
      findings.push(finding("metadata", key, key, "unknown", "warning",
        `member "${key}" is not a Zarr v3 core member and is not marked "must_understand": false; Zarr v3 readers that do not know it must refuse the array (outside RFC-16's five extension points)`));
    }
  }
}

function checkArrayMetadata(findings, metadata) {
  if (!isPlainObject(metadata)) {
    findings.push(invalid("", `array metadata must be a JSON object, got ${describe(metadata)}`));
    return;
  }
  if (metadata.zarr_format !== 3) {
    findings.push(invalid("zarr_format",
      `zarr_format must be 3 (OME-Zarr 0.5 and later use Zarr v3), got ${describe(metadata.zarr_format)}`));
    if (metadata.zarr_format === 2) return;
  }
  if (metadata.node_type !== "array") {
    findings.push(invalid("node_type", `node_type must be "array", got ${describe(metadata.node_type)}`));
  }
  const required = [["data_type", "data_type"], ["chunk_grid", "chunk_grid"], ["chunk_key_encoding", "chunk_key_encoding"]];
  for (const [member, extensionPoint] of required) {
    if (metadata[member] === undefined) {
      findings.push(invalid(member, `${member} is required in Zarr v3 array metadata but is missing`));
    } else {
      checkNamedMember(findings, extensionPoint, metadata[member], member);
    }
  }
  if (metadata.codecs === undefined) {
    findings.push(invalid("codecs", "codecs is required in Zarr v3 array metadata but is missing"));
  } else {
    checkCodecList(findings, metadata.codecs, "codecs");
  }
  checkStorageTransformers(findings, metadata.storage_transformers);
  checkOtherMembers(findings, metadata);
}

/** The extensions a reader needs, from a list of findings. */
function usedExtensions(findings) {
  return findings
    .filter((f) => EXTENSION_POINTS.includes(f.extensionPoint) && f.name !== null && f.level !== "ignored")
    .map(({ extensionPoint, name, level, location, aliasOf }) =>
      ({ extensionPoint, name, level, location, ...(aliasOf ? { aliasOf } : {}) }));
}

/**
 * Checks one array's zarr.json (parsed object, or its text / bytes) against the
 * RFC-16 allowlist. Never throws: invalid metadata yields a finding.
 * @returns {{ ok: boolean, findings: object[], extensions: object[] }}
 */
export function checkArray(zarrJson) {
  const findings = [];
  try {
    checkArrayMetadata(findings, parseMetadata(zarrJson));
  } catch (error) {
    const message = error instanceof MetadataParseError ? error.message : `array metadata could not be checked: ${error?.message ?? String(error)}`;
    findings.push(invalid("", message));
  }
  return { ok: !findings.some((f) => f.severity === "error"), findings, extensions: usedExtensions(findings) };
}

class MetadataParseError extends Error {}

function parseMetadata(zarrJson) {
  let text = zarrJson;
  if (zarrJson instanceof Uint8Array) text = new TextDecoder().decode(zarrJson);
  if (typeof text !== "string") return zarrJson;
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new MetadataParseError(`zarr.json is not valid JSON (${error.message})`);
  }
}

// ---------------------------------------------------------------- what this package + zarrita read

/** Codec names zarrita 0.7.5's default registry reads (its codecs module). */
const ZARRITA_CODECS = [
  "blosc", "lz4", "zstd", "gzip", "zlib", "transpose", "bytes", "crc32c", "vlen-utf8", "json2",
  "bitround", "cast_value", "scale_offset",
  "numcodecs.blosc", "numcodecs.lz4", "numcodecs.zstd", "numcodecs.gzip", "numcodecs.zlib",
  "numcodecs.vlen-utf8", "numcodecs.shuffle", "numcodecs.delta", "numcodecs.bitround", "numcodecs.json2",
];
/** Codec names this package registers into zarrita's registry (numcodecs.imagecodecs_jpeg decode-only). */
const ZARR_JPEG_CODECS = ["jpeg", "reshape", "numcodecs.imagecodecs_jpeg"];

const ZARRITA_OTHER_EXTENSIONS = {
  data_type: new Set(["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64", "float16"]),
  chunk_grid: new Set(["regular"]),
  chunk_key_encoding: new Set(["default", "v2"]),
  storage_transformer: new Set(),
};

function codecSupport(name, registry) {
  if (name === "sharding_indexed") {
    return { supported: true, by: "zarrita", note: "built into zarrita as the outermost array → bytes codec; sharding nested in sharding is not read" };
  }
  const supported = registry ? registry.has(name) : ZARRITA_CODECS.includes(name) || ZARR_JPEG_CODECS.includes(name);
  if (!supported) return { supported, by: null };
  return { supported, by: ZARR_JPEG_CODECS.includes(name) ? "zarr-jpeg" : "zarrita" };
}

function otherSupport(extensionPoint, name) {
  const supported = ZARRITA_OTHER_EXTENSIONS[extensionPoint]?.has(name) ?? false;
  if (extensionPoint === "data_type" && name === "float16") {
    const present = typeof globalThis.Float16Array === "function";
    return { supported: present, by: present ? "zarrita" : null, note: `zarrita reads float16 into Float16Array, which this JavaScript runtime ${present ? "has" : "lacks"}` };
  }
  return { supported, by: supported ? "zarrita" : null };
}

/**
 * Whether this package plus zarrita can read one extension (allowlisted or
 * not, e.g. an alias). `registry` is a zarrita codec registry (a Map keyed by
 * codec name, e.g. zarrita's `registry` after this package's register());
 * without it, zarrita 0.7.5's default registry plus this package's codecs.
 * @returns {{ supported: boolean, by: "zarrita" | "zarr-jpeg" | null, note?: string }}
 */
export function canRead(extensionPoint, name, registry) {
  return extensionPoint === "codec" ? codecSupport(name, registry) : otherSupport(extensionPoint, name);
}

/**
 * Which allowlisted entries this package plus zarrita can read: one row per
 * allowlist entry, `{ extensionPoint, name, readers, supported, by, note? }`.
 * `registry` as for canRead.
 */
export function supportedExtensions(registry) {
  const rows = [];
  for (const extensionPoint of EXTENSION_POINTS) {
    for (const entry of ENTRIES.get(extensionPoint).values()) {
      rows.push({ extensionPoint, name: entry.name, readers: entry.readers, ...canRead(extensionPoint, entry.name, registry) });
    }
  }
  return rows;
}

// ---------------------------------------------------------------- datasets

function joinPath(parent, child) {
  return [parent, child].filter(Boolean).join("/").replace(/\/+/g, "/").replace(/^\/|\/$/g, "");
}

function isSafeChildPath(path) {
  return typeof path === "string" && path !== "" && !path.split("/").some((part) => part === ".." || part === ".");
}

async function openStore(storeOrUrl, options) {
  if (typeof storeOrUrl === "string" || storeOrUrl instanceof URL) {
    const { FetchStore } = await import("zarrita");
    return new FetchStore(String(storeOrUrl), options.fetchOptions);
  }
  if (!storeOrUrl || typeof storeOrUrl.get !== "function") {
    throw packageError("InvalidArgument", `checkDataset() takes a URL string or a store with get(key), got ${describe(storeOrUrl)}`, { type: TypeError, command: "check" });
  }
  return storeOrUrl;
}

/** Reads `<path>/zarr.json`: `{ metadata }`, `{ missing: true }` or `{ problem }`. */
async function readNode(store, path) {
  const key = `/${joinPath(path, "zarr.json")}`;
  let bytes;
  try {
    bytes = await store.get(key);
  } catch (error) {
    return { problem: `could not read ${key}: ${error?.message ?? String(error)}` };
  }
  if (bytes === undefined || bytes === null) return { missing: true };
  try {
    const metadata = JSON.parse(new TextDecoder().decode(bytes));
    if (!isPlainObject(metadata)) return { problem: `${key} must hold a JSON object, got ${describe(metadata)}` };
    return { metadata };
  } catch (error) {
    return { problem: `${key} is not valid JSON (${error.message})` };
  }
}

function omeAttributes(metadata) {
  const attributes = isPlainObject(metadata.attributes) ? metadata.attributes : {};
  return isPlainObject(attributes.ome) ? attributes.ome : attributes;
}

function hierarchyFinding(location, severity, message) {
  return finding("hierarchy", null, location || "(root)", severity === "error" ? "invalid" : "note", severity, message);
}

/** Child paths an OME-Zarr group points at, with the role each child plays. */
function childrenOf(ome, path, report) {
  const children = [];
  const add = (child, role, from) => {
    if (!isSafeChildPath(child)) {
      report.findings.push(hierarchyFinding(path, "error", `${from} must be a relative path inside the dataset, got ${describe(child)}`));
      return;
    }
    children.push({ path: joinPath(path, child), role });
  };
  const list = (value) => (Array.isArray(value) ? value : []);
  list(ome.multiscales).forEach((multiscale, m) =>
    list(multiscale?.datasets).forEach((dataset, d) =>
      add(dataset?.path, "multiscale level", `multiscales[${m}].datasets[${d}].path`)));
  list(ome.labels).forEach((label, i) => add(label, "label image", `labels[${i}]`));
  list(ome.plate?.wells).forEach((well, i) => add(well?.path, "well", `plate.wells[${i}].path`));
  list(ome.well?.images).forEach((image, i) => add(image?.path, "field of view", `well.images[${i}].path`));
  list(ome.series).forEach((series, i) => add(series, "series", `series[${i}]`));
  return children;
}

async function visitNode(store, path, role, report, visited) {
  if (visited.has(path)) return;
  visited.add(path);
  const node = await readNode(store, path);
  if (node.problem) {
    report.findings.push(hierarchyFinding(path, "error", node.problem));
    return;
  }
  if (node.missing) {
    report.findings.push(hierarchyFinding(path, "error",
      `${role} "${path || "/"}" has no zarr.json (OME-Zarr 0.5 and later use Zarr v3)`));
    return;
  }
  const { metadata } = node;
  if (metadata.node_type === "array") {
    report.arrays.push({ path, role, ...checkArray(metadata) });
    return;
  }
  if (metadata.node_type !== "group") {
    report.findings.push(hierarchyFinding(path, "error",
      `node_type of ${joinPath(path, "zarr.json") } must be "array" or "group", got ${describe(metadata.node_type)}`));
    return;
  }
  const ome = omeAttributes(metadata);
  const children = childrenOf(ome, path, report);
  if (Array.isArray(ome.multiscales) && role !== "labels group") {
    const labels = await readNode(store, joinPath(path, "labels"));
    if (labels.metadata) children.push({ path: joinPath(path, "labels"), role: "labels group" });
  }
  if (ome["bioformats2raw.layout"] !== undefined && !Array.isArray(ome.series)) {
    children.push(...(await bioformats2rawSeries(store, path)));
  }
  if (children.length === 0 && role !== "labels group") {
    report.findings.push(hierarchyFinding(path, "warning",
      `group "${path || "/"}" (${role}) has no OME-Zarr multiscales, labels, plate, well or series to follow`));
  }
  for (const child of children) await visitNode(store, child.path, child.role, report, visited);
}

/** bioformats2raw layout: OME/zarr.json lists the series; otherwise 0, 1, 2, … until one is missing. */
async function bioformats2rawSeries(store, path) {
  const ome = await readNode(store, joinPath(path, "OME"));
  const listed = ome.metadata && omeAttributes(ome.metadata).series;
  if (Array.isArray(listed)) return listed.filter(isSafeChildPath).map((series) => ({ path: joinPath(path, series), role: "series" }));
  const series = [];
  for (let i = 0; ; i++) {
    const node = await readNode(store, joinPath(path, String(i)));
    if (!node.metadata) break;
    series.push({ path: joinPath(path, String(i)), role: "series" });
  }
  return series;
}

function levelRank(level) {
  const rank = LEVEL_ORDER.indexOf(level);
  return rank === -1 ? LEVEL_ORDER.length : rank;
}

/** canRead for one use of an extension: zarrita reads sharding only as the outermost codec. */
function readableAt(used, registry) {
  if (used.extensionPoint === "codec" && used.name === "sharding_indexed" && used.location.includes(".configuration.")) {
    return { supported: false, note: `zarrita reads sharding_indexed only in the array's own codecs, not nested at ${used.location}` };
  }
  return canRead(used.extensionPoint, used.name, registry);
}

/** The union of extensions the arrays use, with the arrays that use each. */
function requiredExtensions(arrays, registry) {
  const byKey = new Map();
  for (const array of arrays) {
    for (const used of array.extensions) {
      const key = `${used.extensionPoint}\u0000${used.name}`;
      if (!byKey.has(key)) {
        byKey.set(key, {
          extensionPoint: used.extensionPoint,
          name: used.name,
          level: used.level,
          ...(used.aliasOf ? { aliasOf: used.aliasOf } : {}),
          supported: true,
          arrays: [],
        });
      }
      const entry = byKey.get(key);
      const support = readableAt(used, registry);
      if (!support.supported) {
        entry.supported = false;
        if (support.note) entry.note = support.note;
      }
      if (!entry.arrays.includes(array.path)) entry.arrays.push(array.path);
    }
  }
  return [...byKey.values()].sort((a, b) =>
    EXTENSION_POINTS.indexOf(a.extensionPoint) - EXTENSION_POINTS.indexOf(b.extensionPoint)
    || levelRank(a.level) - levelRank(b.level)
    || a.name.localeCompare(b.name));
}

/**
 * Walks an OME-Zarr hierarchy (multiscales' datasets, labels, plate → wells →
 * fields of view, bioformats2raw series; or a single array) and checks every
 * array against the RFC-16 allowlist.
 * @param storeOrUrl a URL string (read with zarrita's FetchStore) or a store with `get(key)`
 * @param options `{ registry?, fetchOptions? }`: registry as for supportedExtensions
 */
export async function checkDataset(storeOrUrl, options = {}) {
  const store = await openStore(storeOrUrl, options);
  const report = { arrays: [], findings: [] };
  await visitNode(store, "", "root", report, new Set());
  if (report.arrays.length === 0 && !report.findings.some((f) => f.severity === "error")) {
    report.findings.push(hierarchyFinding("", "error", "no arrays found: the root is neither an array nor an OME-Zarr group that points at arrays"));
  }
  const required = requiredExtensions(report.arrays, options.registry);
  const ok = report.arrays.every((array) => array.ok) && !report.findings.some((f) => f.severity === "error");
  return {
    ok,
    arrays: report.arrays,
    findings: report.findings,
    requiredExtensions: required,
    unsupported: required.filter((r) => !r.supported),
  };
}

// ---------------------------------------------------------------- report text

/** A readable, plain-text report of a checkDataset result (shared by the CLI and the demo page). */
export function formatReport(result, { source = "dataset", verbose = false } = {}) {
  const lines = [`RFC-16 allowlist check of ${source}: ${result.ok ? "conforms" : "DOES NOT CONFORM"}`, ""];
  for (const f of result.findings) lines.push(`${f.severity.toUpperCase()} ${f.location}: ${f.message}`);
  if (result.findings.length) lines.push("");
  for (const array of result.arrays) {
    lines.push(`array ${array.path || "/"} (${array.role}): ${array.ok ? "ok" : "not conforming"}`);
    for (const f of array.findings) {
      if (!verbose && f.severity === "info") continue;
      lines.push(`  ${f.severity.toUpperCase()} ${f.message}`);
    }
  }
  lines.push("", "a reader needs:");
  for (const r of result.requiredExtensions) {
    const readable = r.supported ? "readable by zarrita + zarr-jpeg" : "NOT readable by zarrita + zarr-jpeg";
    const alias = r.aliasOf ? `, alias of ${r.aliasOf}` : "";
    lines.push(`  ${POINT_LABEL[r.extensionPoint].padEnd(19)} ${r.name.padEnd(26)} ${r.level.padEnd(11)} ${readable}${alias}`);
  }
  // Names and paths come from the dataset's metadata: a control character in one (a
  // terminal escape sequence, a newline that fakes a line of the report) is shown as
  // \uXXXX, not written to the terminal.
  return lines.map(escapeControl).join("\n");
}

function escapeControl(text) {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
