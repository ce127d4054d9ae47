// `zarr-jpeg/check`: which Zarr extensions a dataset needs, against the OME-Zarr RFC-16
// allowlist (./allowlist.js).
export { checkArray, checkDataset, supportedExtensions, canRead, formatReport } from "./allowlist.js";
