// `zarr-jpeg/advanced`: what the WebAssembly modules are and whether they are loaded (for
// worker set-ups and diagnostics), the quantisation table names, the codec pool itself,
// the codec classes bound to a pool, and TIFF tile completion.
export {
  isReady,
  isFullDecoderReady,
  compiledWasmModule,
  compiledDecoderModule,
  compiledFullDecoderModule,
  simdSupported,
  usesSimd,
  completeTileStream,
  QUANT_TABLES,
} from "./loader.js";
export { CodecPool, MAX_WORKERS } from "./pool.js";
export { makeJpegCodec } from "./codecs/jpeg.js";
export { makeImagecodecsJpegCodec } from "./codecs/imagecodecs-jpeg.js";
