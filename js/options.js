// Checks of options the JS layer takes before the wasm module that would check them is
// loaded, and the way its messages name a value.

/** The encode option quantTable's values, as mozjpeg's -quant-table 0–8 (index.d.ts). */
export const QUANT_TABLES = Object.freeze(["annex-k", "flat", "ms-ssim", "imagemagick", "psnr-hvs", "klein", "watson", "ahumada", "peterson"]);

/**
 * What encode() would say of `options` (src/encode.rs, EncodeOptions::parse), checked here
 * because the encoder is not loaded until the first chunk is written: a typo in
 * `encodeOptions` is reported by register(), and a bad convert() option before any pixel is
 * read. The wording is encode()'s; tests/js/zarrita.test.mjs checks that the two agree.
 */
export function encodeOptionsProblem(options) {
  if (options === undefined || options === null) return null;
  if (typeof options !== "object" || Array.isArray(options)) {
    return `the encode options must be an object, got ${Array.isArray(options) ? "an array" : describe(options)}`;
  }
  if (typeof options[Symbol.iterator] === "function") {
    return `the encode options are not a JSON-like object: ${describe(options)} is not a JSON-like value`;
  }
  let entries;
  try {
    entries = Object.entries(options); // (runs getters and Proxy traps, which may throw)
  } catch (error) {
    return `the encode options could not be read: reading them threw: ${error?.message ?? error}`;
  }
  for (const [name, value] of entries) {
    if (value === undefined) continue; // absent, as JSON.stringify leaves it out
    if (name === "restartIntervals" || name === "trellis") {
      if (typeof value !== "boolean") return `the encode option ${name} must be true or false, got ${describe(value)}`;
    } else if (name === "quantTable") {
      if (!QUANT_TABLES.includes(value)) {
        return `the encode option quantTable must be one of ${QUANT_TABLES.map((t) => JSON.stringify(t)).join(", ")}, got ${describe(value)}`;
      }
    } else {
      return `unknown encode option ${quote(name)} (known: restartIntervals, trellis, quantTable)`;
    }
  }
  return null;
}

/** A value as messages name it: `undefined`, `5`, `"x" (a string)`, `an Array`, `a Map`. */
export function describe(value) {
  if (value === null || value === undefined) return String(value);
  if (typeof value === "string") return `${quote(value)} (a string)`;
  if (typeof value !== "object" && typeof value !== "function") return String(value);
  const name = value.constructor?.name || "object";
  return `${/^[AEIOaeio]/.test(name) ? "an" : "a"} ${name}`;
}

/**
 * Why `what` (a configuration, the chunk metadata) could not be used: reading a member
 * threw (a getter or Proxy), which messages report rather than pass on.
 */
export function readProblem(what, error) {
  return `${what} could not be read: reading it threw: ${error?.message ?? error}`;
}

/**
 * A string from the input as messages show it, as the wasm modules' messages do
 * (src/config_value.rs, `quote`): in double quotes, cut after 40 characters (with "…"),
 * quotes, backslashes and control characters escaped (`\u001B`), so a hostile value can
 * neither flood a log nor write terminal escapes into it.
 */
export function quote(s) {
  const chars = [...s];
  const cut = chars.length > 40 ? chars.slice(0, 40).join("") + "…" : s;
  const escaped = cut.replace(/["\\\u0000-\u001F\u007F]/g, (c) =>
    c === '"' || c === "\\" ? `\\${c}` : `\\u00${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`,
  );
  return `"${escaped}"`;
}
