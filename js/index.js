// The package's public face: re-exports only.
export {
  init,
  initDecoder,
  isReady,
  encode,
  decode,
  decodeInto,
  validateConfig,
  compiledWasmModule,
  compiledDecoderModule,
  simdSupported,
  usesSimd,
} from "./loader.js";
export { register, JpegCodec, ReshapeCodec } from "./zarrita.js";
export { checkArray, checkDataset, supportedExtensions, canRead, formatReport } from "./allowlist.js";
