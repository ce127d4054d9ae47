// Which pages of a TIFF make the image to convert. Usually the first page (its SubIFDs and
// the reduced-resolution pages after it are the file's own pyramid, which the converter
// makes anew). But OME-TIFF and ImageJ files store each channel of a multi-channel image as
// a page of its own: converting only the first page would silently drop every other
// channel. Such pages are joined here into one page with planar (separate) samples, one
// plane per channel, which the converter stores as a `c` axis of grayscale chunks; z-stacks
// and time series are refused by name (the converter writes one 2-D image and its channels).
// JPEG-compressed channel pages keep their tiles: each becomes a chunk of its channel.
import { ConvertError } from "./core.js";

/** The first image's `<Pixels …>` start tag in an OME-XML description, or null. */
export function omePixels(description) {
  return /<(?:\w+:)?Pixels\b[^>]*>/.exec(description)?.[0] ?? null;
}

/** The first image's dimensions from an OME-XML or ImageJ description: { c, z, t, source } or null. */
export function imageDimensions(description) {
  if (!description) return null;
  if (description.includes("<OME")) {
    const pixels = omePixels(description);
    if (!pixels) return null;
    const attr = (name) => Number(new RegExp(`\\b${name}="(\\d+)"`).exec(pixels)?.[1] ?? 1);
    // SizeC counts samples: an RGB channel (SamplesPerPixel 3) is one page of three samples
    const channel = /<(?:\w+:)?Channel\b[^>]*>/.exec(description.slice(description.indexOf(pixels)))?.[0] ?? "";
    const samples = Number(/\bSamplesPerPixel="(\d+)"/.exec(channel)?.[1] ?? 1);
    return { c: Math.max(1, Math.floor(attr("SizeC") / samples)), z: attr("SizeZ"), t: attr("SizeT"), source: "OME-XML" };
  }
  if (/^ImageJ=/.test(description)) {
    const value = (name) => Number(new RegExp(`^${name}=(\\d+)`, "m").exec(description)?.[1] ?? 1);
    return { c: value("channels"), z: value("slices"), t: value("frames"), source: "the ImageJ description" };
  }
  return null;
}

/**
 * The page to convert: the first page, or the first image's channel pages joined as planes.
 * `warn` receives a warning for full-resolution pages left out of a file that does not say
 * what they are.
 */
export function imagePage(tiff, file, warn) {
  const first = tiff.pages[0];
  const dims = imageDimensions(first.description);
  if (dims && dims.z * dims.t > 1) {
    throw new ConvertError(`${file}: ${dims.source} describes ${dims.z} z-plane(s) × ${dims.t} time point(s) × ${dims.c} channel(s); ` +
      "this converter writes one 2-D image with its channels: extract a plane first (e.g. with tifffile or bfconvert)");
  }
  if (dims && dims.c > 1 && first.samplesPerPixel === 1) return joinChannelPages(tiff.pages.slice(0, dims.c), dims, file);
  if (!dims) {
    const more = tiff.pages.slice(1).filter((p) => (p.subfileType & 1) === 0 && p.width === first.width && p.height === first.height);
    if (more.length > 0) {
      warn(`${file}: ${more.length} more full-resolution page(s) of the same size (${more.slice(0, 3).map((p) => p.label).join(", ")}${more.length > 3 ? ", …" : ""}) ` +
        "are not converted: the file does not say they are channels (no OME-XML or ImageJ description); only page 0 is");
    }
  }
  return first;
}

function joinChannelPages(pages, dims, file) {
  const [first] = pages;
  if (pages.length < dims.c) {
    throw new ConvertError(`${file}: ${dims.source} describes ${dims.c} channels stored as pages, but the file has ${pages.length} page(s)`);
  }
  const same = (p) => p.width === first.width && p.height === first.height && p.samplesPerPixel === 1 &&
    p.tileWidth === first.tileWidth && p.tileHeight === first.tileHeight && p.tiled === first.tiled &&
    p.compression === first.compression && p.sampleFormat === first.sampleFormat && p.bitsPerSample[0] === first.bitsPerSample[0] &&
    p.predictor === first.predictor;
  const odd = pages.find((p) => !same(p));
  if (odd) {
    throw new ConvertError(`${file}: ${odd.label}, channel ${odd.index} of ${dims.c}, differs from page 0 (size, tiling, compression or sample type): ` +
      "channel pages must be alike to be stored as one array");
  }
  // One block per tile (or strip) of each page, in channel order: what planar (separate)
  // samples would list.
  const perPage = Math.ceil(first.height / first.tileHeight) * Math.ceil(first.width / first.tileWidth);
  const lists = pages.map((p) => {
    if (!p.offsets || !p.byteCounts || p.offsets.length < perPage || p.byteCounts.length < perPage) {
      throw new ConvertError(`${file}: ${p.label}: ${perPage} ${p.tiled ? "tile" : "strip"}s needed but ${Math.min(p.offsets?.length ?? 0, p.byteCounts?.length ?? 0)} offsets given`);
    }
    return [p.offsets.slice(0, perPage), p.byteCounts.slice(0, perPage)];
  });
  return {
    ...first,
    label: `pages 0–${dims.c - 1} (${dims.c} channels)`,
    samplesPerPixel: dims.c,
    bitsPerSample: pages.map((p) => p.bitsPerSample[0]),
    planar: 2,
    photometric: first.photometric ?? 1,
    offsets: lists.flatMap(([offsets]) => offsets),
    byteCounts: lists.flatMap(([, counts]) => counts),
  };
}
