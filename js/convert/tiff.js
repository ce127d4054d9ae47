// Reading a TIFF (or BigTIFF, either byte order) in place for the converter: its pages
// (the main IFD chain, plus SubIFDs) with the tags a converter needs, and each tile's or
// strip's raw bytes by positioned reads. Never the whole file in memory.
//
// IFDs are parsed by the `geotiff` npm package (a maintained TIFF reader: BigTIFF, both
// byte orders, SubIFD offsets, and its own LZW/Deflate decoders), through a source that
// refuses every read past the end of the file *before* allocating for it, and with the
// parser in eager mode: its lazy arrays allocate by a header's claimed count up front and
// read their values little-endian whatever the file's byte order (geotiff 3.0.5). The IFD
// chain is walked here, with a loop check and a page limit.
import fs from "node:fs";
import { GeoTIFF } from "geotiff";

/** A TIFF the converter refuses, with a one-line message naming the file, the page or tile, and why. */
export class TiffInputError extends Error {
  constructor(message, options) {
    super(message, options);
    this.name = "TiffInputError";
  }
}

const MAX_PAGES = 100_000;
// the longest read that may be cut at the end of the file (65,535 IFD entries × 18 bytes)
const SPECULATIVE = 65535 * 18;

export const COMPRESSION = Object.freeze({ 1: "none", 5: "LZW", 6: "old-style JPEG", 7: "JPEG", 8: "Deflate", 32946: "Deflate", 33003: "Aperio JPEG 2000 (YCbCr)", 33005: "Aperio JPEG 2000 (RGB)", 34712: "JPEG 2000", 50000: "Zstandard", 50001: "WebP" });
export const PHOTOMETRIC = Object.freeze({ 0: "min-is-white", 1: "min-is-black", 2: "RGB", 3: "palette", 4: "mask", 5: "separated (CMYK)", 6: "YCbCr", 8: "CIELab" });

/** Positioned reads of one file, refusing any range that is not wholly inside it. */
class FileSource {
  constructor(file, fd, size) {
    this.file = file;
    this.fd = fd;
    this.size = size;
  }

  /** `length` bytes at `offset`, or a TiffInputError naming `what` if they are not all in the file. */
  read(offset, length, what) {
    if (!(Number.isSafeInteger(offset) && Number.isSafeInteger(length) && offset >= 0 && length >= 0) || offset + length > this.size) {
      throw new TiffInputError(`${this.file}: ${what} at byte ${offset} (${length} bytes) lies past the end of the file (${this.size} bytes): truncated or corrupt`);
    }
    const out = new Uint8Array(length);
    let done = 0;
    while (done < length) {
      const n = fs.readSync(this.fd, out, done, length - done, offset + done);
      if (n === 0) throw new TiffInputError(`${this.file}: ${what}: the file ended while reading (it changed?)`);
      done += n;
    }
    return out;
  }

  // geotiff's BaseSource interface. It reads speculatively (1024 bytes at an IFD, or 18
  // bytes per entry for a 12-byte entry) and then checks what it got (a DataView read past
  // the end of what is returned throws), so a short read (up to SPECULATIVE bytes) is cut at
  // the end of the file. A longer one (a tag's values: geotiff then allocates for the count
  // the tag claims) must lie wholly inside the file, so no claim allocates more than the file holds.
  async fetch(slices) {
    return slices.map(({ offset, length }) => {
      const n = length <= SPECULATIVE ? Math.max(0, Math.min(length, this.size - offset)) : length;
      if (n < Math.min(length, 2)) this.read(offset, length, "a TIFF structure"); // (throws)
      return this.read(offset, n, "a TIFF structure").buffer;
    });
  }

  get fileSize() {
    return this.size;
  }

  async close() {}
}

function single(value) {
  if (value == null) return undefined;
  if (typeof value === "number" || typeof value === "bigint" || typeof value === "string") return Number(value);
  return value.length ? Number(value[0]) : undefined;
}

function list(value) {
  if (value == null) return null;
  if (typeof value === "number") return [value];
  return Array.from(value, Number);
}

/**
 * Opens a TIFF: `{ file, size, bigTiff, littleEndian, pages, readBytes(offset, length, what), close() }`,
 * `pages` the main IFD chain in order, each with its SubIFDs as `page.subIfds` (pages too).
 */
export async function openTiff(file) {
  let fd;
  try {
    fd = fs.openSync(file, "r");
  } catch (error) {
    const reason = error?.code === "ENOENT" ? "no such file" : error?.message;
    throw new TiffInputError(`cannot read ${file}: ${reason}`, { cause: error });
  }
  try {
    const size = fs.fstatSync(fd).size;
    const source = new FileSource(file, fd, size);
    let tiff;
    try {
      tiff = await GeoTIFF.fromSource(source);
    } catch (error) {
      if (error instanceof TiffInputError) throw error;
      throw new TiffInputError(`${file}: not a readable TIFF header: ${error?.message ?? error}`, { cause: error });
    }
    tiff.parser.eager = true; // (see the top of this file)
    const visited = new Set();
    let pageCount = 0;
    const parseAt = async (offset, label) => {
      if (visited.has(offset)) throw new TiffInputError(`${file}: ${label}: its IFD offset ${offset} was already read (a loop of IFD offsets)`);
      visited.add(offset);
      if (++pageCount > MAX_PAGES) throw new TiffInputError(`${file}: more than ${MAX_PAGES} IFDs`);
      let ifd;
      try {
        ifd = await tiff.parser.parseFileDirectoryAt(offset);
      } catch (error) {
        if (error instanceof TiffInputError) {
          throw new TiffInputError(error.message.startsWith(`${file}: `) ? `${file}: ${label}: ${error.message.slice(file.length + 2)}` : error.message, { cause: error });
        }
        throw new TiffInputError(`${file}: ${label}: unreadable IFD at byte ${offset}: ${error?.message ?? error}`, { cause: error });
      }
      return pageFromIfd(ifd, label);
    };
    const pages = [];
    let offset = tiff.firstIFDOffset;
    while (offset !== 0) {
      const page = await parseAt(offset, `page ${pages.length}`);
      page.index = pages.length;
      const subs = page.subIfdOffsets ?? [];
      page.subIfds = [];
      for (let i = 0; i < subs.length; i++) page.subIfds.push(await parseAt(subs[i], `page ${page.index} SubIFD ${i}`));
      pages.push(page);
      offset = page.next;
    }
    if (pages.length === 0) throw new TiffInputError(`${file}: the TIFF has no pages`);
    return {
      file,
      size,
      bigTiff: tiff.bigTiff,
      littleEndian: tiff.littleEndian,
      pages,
      readBytes: (at, length, what) => source.read(at, length, what),
      close: () => fs.closeSync(fd),
    };
  } catch (error) {
    fs.closeSync(fd);
    throw error;
  }
}

function pageFromIfd(ifd, label) {
  const get = (tag) => ifd.getValue(tag);
  const width = single(get(256));
  const height = single(get(257));
  const bits = list(get(258)) ?? [1];
  const samplesPerPixel = single(get(277)) ?? 1;
  const tileWidth = single(get(322));
  const tileHeight = single(get(323));
  const tiled = tileWidth !== undefined || tileHeight !== undefined;
  const descriptionValue = get(270);
  const jpegTablesValue = get(347);
  return {
    label,
    width,
    height,
    bitsPerSample: bits,
    samplesPerPixel,
    sampleFormat: single(get(339)) ?? 1,
    compression: single(get(259)) ?? 1,
    predictor: single(get(317)) ?? 1,
    photometric: single(get(262)),
    planar: single(get(284)) ?? 1,
    subfileType: single(get(254)) ?? 0,
    description: typeof descriptionValue === "string" ? descriptionValue : null,
    tiled,
    tileWidth: tiled ? tileWidth : width,
    tileHeight: tiled ? tileHeight : Math.min(single(get(278)) ?? height, height),
    offsets: list(tiled ? get(324) : get(273)),
    byteCounts: list(tiled ? get(325) : get(279)),
    jpegTables: jpegTablesValue ? Uint8Array.from(jpegTablesValue) : null,
    subIfdOffsets: list(get(330)),
    next: Number(ifd.nextIFDByteOffset ?? 0),
  };
}

/** A page's grid of tiles (or strips): rows × columns × planes, checked against the page's offsets. */
export function tileGrid(page, file) {
  const where = `${file}: ${page.label}`;
  const { width, height, tileWidth, tileHeight } = page;
  for (const [name, v] of [["width", width], ["height", height], ["tile width", tileWidth], ["tile height", tileHeight]]) {
    if (!Number.isSafeInteger(v) || v < 1) throw new TiffInputError(`${where}: the ${name} is ${v ?? "missing"}`);
  }
  if (width > 2 ** 31 || height > 2 ** 31 || width * height > 2 ** 40) {
    throw new TiffInputError(`${where}: claims ${width} × ${height} pixels (width × height), more than this converter accepts (2^31 per side, 2^40 in all)`);
  }
  const rows = Math.ceil(height / tileHeight);
  const columns = Math.ceil(width / tileWidth);
  const planes = page.planar === 2 ? page.samplesPerPixel : 1;
  const count = rows * columns * planes;
  const kind = page.tiled ? "tile" : "strip";
  if (!page.offsets || !page.byteCounts) throw new TiffInputError(`${where}: no ${kind} offsets or byte counts`);
  if (page.offsets.length < count || page.byteCounts.length < count) {
    throw new TiffInputError(`${where}: ${count} ${kind}s needed but ${Math.min(page.offsets.length, page.byteCounts.length)} offsets given`);
  }
  return { rows, columns, planes, count, kind };
}
