export { checkArray, checkDataset, supportedExtensions, canRead, formatReport } from "./allowlist.js";
export type { ArrayCheck, Finding, Support, SupportRow, ExtensionPoint, ReaderLevel } from "./allowlist.js";
