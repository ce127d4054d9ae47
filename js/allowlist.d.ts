// Types for js/allowlist.js (OME-Zarr RFC-16 allowlist checker).

export type ExtensionPoint = "data_type" | "codec" | "chunk_grid" | "chunk_key_encoding" | "storage_transformer";
export type ReaderLevel = "MUST" | "SHOULD" | "MAY";

export interface AllowlistEntry {
  name: string;
  readers: ReaderLevel;
  source: "core" | "registry";
  description: string;
  /** codecs only: "array → array", "array → bytes" or "bytes → bytes" (informative) */
  type?: string;
}

export interface AllowlistAlias {
  extensionPoint: ExtensionPoint;
  name: string;
  aliasOf: string;
  kind: string;
  sources: string[];
}

export interface Allowlist {
  rfc: { title: string; status: string; date: string; registryCommit: string };
  levels: ReaderLevel[];
  extensionPoints: Record<ExtensionPoint, { title: string; entries: AllowlistEntry[] }>;
  aliases: AllowlistAlias[];
  related: { extensionPoint: ExtensionPoint; name: string; insteadUse: string[]; note: string; sources: string[] }[];
  excluded: { extensionPoint: ExtensionPoint; name: string; reason: string; sources: string[] }[];
  /** where each alias / related / excluded name comes from, by source id */
  sources: Record<string, string>;
}

export const allowlist: Allowlist;
export const EXTENSION_POINTS: readonly ExtensionPoint[];

export interface Finding {
  /** "metadata" for invalid or extra members, "hierarchy" for dataset-level problems */
  extensionPoint: ExtensionPoint | "metadata" | "hierarchy";
  name: string | null;
  /** e.g. "codecs[0].configuration.codecs[1]"; a node path for hierarchy findings */
  location: string;
  level: ReaderLevel | "not-allowed" | "invalid" | "ignored" | "unknown" | "note";
  severity: "info" | "warning" | "error";
  message: string;
  /** set when the name is an alias of an allowlisted name */
  aliasOf?: string;
  /** set when the name is a related, non-alias codec: what to re-encode with */
  insteadUse?: string[];
}

export interface UsedExtension {
  extensionPoint: ExtensionPoint;
  name: string;
  level: ReaderLevel | "not-allowed";
  location: string;
  aliasOf?: string;
}

export interface ArrayCheck {
  ok: boolean;
  findings: Finding[];
  extensions: UsedExtension[];
}

/** Checks one array's zarr.json (object, JSON text or bytes). Never throws. */
export function checkArray(zarrJson: unknown): ArrayCheck;

export function lookupExtension(
  extensionPoint: ExtensionPoint,
  name: string,
): { level: ReaderLevel | "not-allowed"; entry?: AllowlistEntry; alias?: AllowlistAlias; related?: object; excluded?: object };

/** A zarrita codec registry, or anything with has(name). */
export interface CodecRegistryLike {
  has(name: string): boolean;
}

export interface Support {
  supported: boolean;
  by: "zarrita" | "zarr-jpeg" | null;
  note?: string;
}

export function canRead(extensionPoint: ExtensionPoint, name: string, registry?: CodecRegistryLike): Support;

export interface SupportRow extends Support {
  extensionPoint: ExtensionPoint;
  name: string;
  readers: ReaderLevel;
}

/** One row per allowlist entry: can this package plus zarrita read it? */
export function supportedExtensions(registry?: CodecRegistryLike): SupportRow[];

export interface ReadableStoreLike {
  get(key: string, options?: unknown): Promise<Uint8Array | undefined>;
}

export interface RequiredExtension {
  extensionPoint: ExtensionPoint;
  name: string;
  level: ReaderLevel | "not-allowed";
  aliasOf?: string;
  /** readable by zarrita + zarr-jpeg (or the given registry) */
  supported: boolean;
  note?: string;
  /** paths of the arrays that use it */
  arrays: string[];
}

export interface DatasetCheck {
  ok: boolean;
  arrays: (ArrayCheck & { path: string; role: string })[];
  findings: Finding[];
  requiredExtensions: RequiredExtension[];
  unsupported: RequiredExtension[];
}

export function checkDataset(
  storeOrUrl: string | URL | ReadableStoreLike,
  options?: { registry?: CodecRegistryLike; fetchOptions?: unknown },
): Promise<DatasetCheck>;

/** Plain-text report of a checkDataset result (used by the CLI; the demo page can show it too). */
export function formatReport(result: DatasetCheck, options?: { source?: string; verbose?: boolean }): string;
