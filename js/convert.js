// `zarr-jpeg/convert`: images (PNG, JPEG, TIFF/BigTIFF/OME-TIFF/SVS, or samples in memory)
// into JPEG OME-Zarr. Re-exports only: the converter itself is in ./convert/.
export {
  convert,
  formatSummary,
  ConvertError,
  SUBSAMPLING,
  DEFAULTS,
  resolveOptions,
  imageFromArray,
  downsample2x,
  levelCount,
  crc32c,
} from "./convert/core.js";
