// Byte-array helpers shared by the package's modules (internal: not a package export).

/** Joins Uint8Arrays into one new Uint8Array. */
export function concat(parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
