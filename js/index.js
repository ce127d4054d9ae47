// The package's public face, card-sized: loading, the codec functions, configuration
// checking, register() and the codec classes. Module introspection is in ./advanced.js
// (`zarr-jpeg/advanced`), the RFC-16 checker in ./check.js (`zarr-jpeg/check`).
export { init, initDecoder, initFullDecoder, encode, encodeInto, decode, decodeInto, decodeAsync, validateConfig } from "./loader.js";
export { register } from "./register.js";
export { JpegCodec } from "./codecs/jpeg.js";
export { ReshapeCodec } from "./codecs/reshape.js";
