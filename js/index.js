// The package's public face: re-exports only.
export { init, isReady, encode, decode, validateConfig } from "./loader.js";
