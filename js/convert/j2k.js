// JPEG 2000 tiles and strips (TIFF compression 34712, and Aperio's 33005: RGB codestreams),
// decoded by OpenJPEG compiled to WebAssembly (@cornerstonejs/codec-openjpeg, the
// decoder-only build), for the converter's decoded-TIFF path: the same `decode(buffer)` →
// ArrayBuffer shape as geotiff's decoders, samples interleaved, in the TIFF's byte order.
// Aperio's 33003 (YCbCr codestreams, possibly with subsampled chroma) is not read.

/** The TIFF compressions this module decodes. */
export const J2K_COMPRESSIONS = Object.freeze({ 34712: "JPEG 2000", 33005: "JPEG 2000 (Aperio, RGB)" });

/** A block OpenJPEG cannot decode, or whose codestream contradicts the page; the converter names the block. */
export class J2kBlockError extends Error {}

let openjpeg = null;
// What OpenJPEG reports while decoding: it prints its errors (and progress) instead of
// throwing, and may return the frame of a previous codestream, so each block is decoded by a
// fresh decoder and any "[ERROR]" line it printed fails the block.
let reported = [];

const J2K_CODESTREAM = [0xff, 0x4f, 0xff, 0x51]; // SOC, then SIZ
const JP2_SIGNATURE = [0x00, 0x00, 0x00, 0x0c, 0x6a, 0x50, 0x20, 0x20];
const startsWith = (bytes, prefix) => prefix.every((b, i) => bytes[i] === b);

/**
 * A decoder for blocks of `tileWidth` × `tileHeight` pixels of `samplesPerPixel` samples of
 * `bits` (8 or 16) bits; `littleEndian` the TIFF's byte order (16-bit samples are handed back
 * in it, as geotiff's decoders do).
 */
export async function j2kDecoder({ tileWidth, tileHeight, samplesPerPixel, bits, littleEndian }) {
  openjpeg ??= import("@cornerstonejs/codec-openjpeg/decodewasmjs").then((m) =>
    (m.default ?? m)({ print() {}, printErr: (line) => reported.push(String(line)) }));
  const module = await openjpeg;
  return {
    decode(buffer) {
      const bytes = new Uint8Array(buffer);
      if (!startsWith(bytes, J2K_CODESTREAM) && !startsWith(bytes, JP2_SIGNATURE)) {
        throw new J2kBlockError("it is not a JPEG 2000 codestream (no SOC and SIZ markers, nor a JP2 signature, at its start)");
      }
      const decoder = new module.J2KDecoder();
      try {
        decoder.getEncodedBuffer(bytes.length).set(bytes);
        reported = [];
        try {
          decoder.decode();
        } catch (error) {
          // (an Emscripten exception: a message string or a pointer)
          throw new J2kBlockError(`OpenJPEG could not decode it (${typeof error === "string" ? error : error?.message ?? "corrupt codestream"})`);
        }
        const failure = reported.find((line) => line.includes("[ERROR]"));
        if (failure) throw new J2kBlockError(`OpenJPEG could not decode it: ${failure.replace(/^\[ERROR\]\s*/, "").trim()}`);
        const frame = decoder.getFrameInfo();
        if (!(frame.width > 0 && frame.height > 0)) throw new J2kBlockError("OpenJPEG decoded no image from it");
        if (frame.componentCount !== samplesPerPixel) {
          throw new J2kBlockError(`its codestream has ${frame.componentCount} component(s); the page has ${samplesPerPixel} sample(s) per pixel`);
        }
        if (frame.bitsPerSample !== bits || frame.isSigned) {
          throw new J2kBlockError(`its codestream holds ${frame.isSigned ? "signed " : ""}${frame.bitsPerSample}-bit samples; the page says ${bits}-bit unsigned`);
        }
        if (frame.width > tileWidth || frame.height > tileHeight) {
          throw new J2kBlockError(`its codestream is ${frame.width} × ${frame.height} pixels, larger than the page's ${tileWidth} × ${tileHeight} blocks`);
        }
        const decoded = decoder.getDecodedBuffer();
        // into a block of the page's block size (a smaller codestream, e.g. an edge strip, at its top left)
        const bytesPer = bits === 16 ? 2 : 1;
        const out = new Uint8Array(tileWidth * tileHeight * samplesPerPixel * bytesPer);
        const rowIn = frame.width * samplesPerPixel * bytesPer;
        const rowOut = tileWidth * samplesPerPixel * bytesPer;
        for (let y = 0; y < frame.height; y++) out.set(decoded.subarray(y * rowIn, (y + 1) * rowIn), y * rowOut);
        if (bits === 16 && !littleEndian) {
          // OpenJPEG hands back this machine's (WebAssembly's) little-endian order
          for (let k = 0; k + 1 < out.length; k += 2) [out[k], out[k + 1]] = [out[k + 1], out[k]];
        }
        return out.buffer;
      } finally {
        decoder.delete();
      }
    },
  };
}
