// The package's public face: re-exports only.
export {
  init,
  initDecoder,
  initFullDecoder,
  isFullDecoderReady,
  isReady,
  encode,
  encodeInto,
  decode,
  decodeInto,
  decodeAsync,
  validateConfig,
  compiledWasmModule,
  compiledDecoderModule,
  compiledFullDecoderModule,
  simdSupported,
  usesSimd,
  QUANT_TABLES,
} from "./loader.js";
export { register, JpegCodec, ReshapeCodec } from "./zarrita.js";
export { checkArray, checkDataset, supportedExtensions, canRead, formatReport } from "./allowlist.js";
