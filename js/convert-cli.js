// `zarr-jpeg convert <image> <out.zarr> [options]`: writes a JPEG-compressed OME-Zarr
// image (see convert.js), with a progress bar on a TTY and a summary at the end.
// Exit codes: 0 written, 1 conversion failed (bad input, output in the way), 2 usage error.
import os from "node:os";
import { SUBSAMPLING, DEFAULTS } from "./convert.js";
import { convertFile, ConvertError } from "./convert-files.js";

// --workers' default: a worker for each core but the one the calling thread keeps busy (it
// reads and decodes the input, averages the levels and writes the store while the workers
// encode), at least 1 and up to 8, which bounds what more could add.
export const DEFAULT_WORKERS = Math.max(1, Math.min((os.availableParallelism?.() ?? os.cpus().length) - 1, 8));

const USAGE = `usage: zarr-jpeg convert <image.png|image.jpg|image.tif|slide.svs|dicom-folder|precomputed-folder> <out.zarr> [options]

Writes an OME-Zarr 0.5 image: a Zarr v3 group with a pyramid of uint8 arrays
(2× area averaging per level until the image fits one chunk), every chunk a
JPEG image (the Zarr v3 "jpeg" codec). Colour images are stored (c, y, x) with a
transpose codec, so each chunk is still one interleaved RGB JPEG.

TIFF, BigTIFF, OME-TIFF and SVS whose first page has 8-bit JPEG tiles: each
level-0 chunk IS its tile's JPEG data (tables spliced in, colour markers set
from the Photometric tag; not re-encoded), chunk shape = tile shape; the
quality recorded is an estimate from the tiles' tables; levels 1+ are
re-encoded (--quality, or --level-psnr's rule by default). Read a row of tiles at a time.
A DICOM whole-slide series (a folder of instances, or one file): level 0 is the
largest VOLUME image; its JPEG Baseline frames are copied as the TIFF tiles are,
other transfer syntaxes (uncompressed, RLE, JPEG 2000) decoded and re-encoded.
--color, --subsampling and --chunk do not apply. Levels of more than 1,024
chunks are stored in shards of 16 × 16 chunks (--shard 0: none). TIFF pages
that are uncompressed, LZW, Deflate or PackBits (8-bit, 1 or 3 samples, tiles
or strips, chunky or planar) are decoded a row of tiles at a time and encoded
as any image. PNG (8-bit, non-interlaced) and baseline JPEG are read a band of
rows at a time (a JPEG file is held in memory compressed); progressive JPEGs
are decoded whole, refused if they would not fit WebAssembly's 4 GiB.
A neuroglancer precomputed volume (a folder with an info file; "encoding":
"jpeg", 1 or 3 channels, sharded or not): each scale becomes a level of 3-D
chunks (z, y, x; c first for colour) stored through reshape + jpeg, its
full-size chunks copied byte for byte, those clipped at the volume's bounds
padded and re-encoded (--quality). Only --quality, --shard, --name and the
encode options apply.

options:
  --quality N        JPEG quality 1–100 (default ${DEFAULTS.quality})
  --color C          ycbcr | rgb | grayscale (default: ycbcr for colour input,
                     grayscale for grayscale input; grayscale on colour input
                     converts to luma; rgb stores channels without colour transform)
  --subsampling S    chroma subsampling for ycbcr: ${Object.keys(SUBSAMPLING).join(", ")} (default ${DEFAULTS.subsampling})
  --chunk N          chunk side in pixels (default ${DEFAULTS.chunk}; multiples of 16 avoid edge padding)
  --chunk-z D        z-stack input: D z planes per chunk (default 1), stored through
                     reshape + jpeg as one JPEG of the D planes one above the other
  --downsample-z     z-stack input: each level halves z too (2×2×2 averaging; chunks
                     of --chunk-z planes, or fewer where a level has fewer)
  --shard N          store chunks inside N×N shards (sharding_indexed; N a multiple of --chunk;
                     TIFF input: 0 for none)
  --levels N         number of pyramid levels (default: halve until one chunk holds the image)
  --channel-axis A   first (c, y, x: OME-Zarr 0.5 axis order, default) | last (y, x, c)
  --name NAME        multiscale name (default: the input file's name)
  --pixel-size S     physical pixel size for the scale transforms (default 1)
  --unit U           unit of the space axes, e.g. micrometer
  --no-restart-intervals
                     write no restart intervals (they make zarr-jpeg's decoder faster,
                     other decoders about as fast; docs/api.md "Restart intervals")
  --trellis          rate–distortion-optimised quantisation: fewer bytes at equal
                     PSNR (about 3 % colour, 8 % grayscale on the sample images),
                     encoding 3–4× slower (docs/api.md "Trellis quantisation")
  --quant-table T    base quantisation tables that --quality scales: annex-k
                     (default) | flat | ms-ssim | imagemagick | psnr-hvs | klein |
                     watson | ahumada | peterson (mozjpeg's -quant-table 0–8; flat:
                     fewest bytes at equal PSNR on colour; docs/api.md "Quantisation tables")
  --rescale R        16-bit TIFF or PNG input: auto (the image's own min–max) or MIN:MAX,
                     mapped linearly to 0–255 (recorded in the omero channels as
                     rescaled_from); without it 16-bit input is refused
  --level-psnr DB    JPEG-tiled TIFF input: each level 1+ at the lowest quality, from
                     the tiles' own up, at which a sample of it is at least DB dB
                     from its exact 2×2 averages (default 30; 0: the tiles' quality
                     for all; --quality sets them instead)
  --dicom-identifiers
                     DICOM input: write the slide's container, study and series
                     identifiers and accession number into the store's attributes
                     (no patient data is ever written; without this flag, none of these)
  --workers N        encode in N worker threads, 0 for none (default ${DEFAULT_WORKERS}: one
                     per core but one, 1 to 8); the output is the same either way
  --overwrite        replace <out.zarr> if it exists and is a Zarr store (or an
                     empty directory) that does not hold the input image
  --quiet            no progress or summary
  --json             print the summary as JSON
  -h, --help         show this help

exit code: 0 written, 1 conversion failed, 2 usage error`;

const VALUE_OPTIONS = {
  "--quality": ["quality", "int"],
  "--color": ["color", "string"],
  "--subsampling": ["subsampling", "string"],
  "--chunk": ["chunk", "int"],
  "--chunk-z": ["chunkDepth", "int"],
  "--shard": ["shard", "int"],
  "--levels": ["levels", "int"],
  "--channel-axis": ["channelAxis", "string"],
  "--name": ["name", "string"],
  "--pixel-size": ["pixelSize", "number"],
  "--unit": ["unit", "string"],
  "--quant-table": ["quantTable", "string"],
  "--workers": ["workers", "int"],
  "--rescale": ["rescale", "string"],
  "--level-psnr": ["levelPsnr", "number"],
};
const FLAGS = {
  "--overwrite": "overwrite",
  "--no-restart-intervals": "noRestartIntervals",
  "--trellis": "trellis",
  "--dicom-identifiers": "dicomIdentifiers",
  "--downsample-z": "downsampleZ",
  "--quiet": "quiet",
  "--json": "json",
  "--help": "help",
  "-h": "help",
};

/** Parses argv into `{ input, output, options, flags }` or `{ error }`. */
export function parseArgs(argv) {
  const positional = [];
  const options = {};
  const flags = {};
  for (let i = 0; i < argv.length; i++) {
    let arg = argv[i];
    let value;
    const eq = arg.indexOf("=");
    if (arg.startsWith("--") && eq > 0) {
      value = arg.slice(eq + 1);
      arg = arg.slice(0, eq);
    }
    if (arg in FLAGS) {
      flags[FLAGS[arg]] = true;
      continue;
    }
    if (arg in VALUE_OPTIONS) {
      const [key, type] = VALUE_OPTIONS[arg];
      if (value === undefined) {
        if (i + 1 >= argv.length) return { error: `${arg} needs a value` };
        value = argv[++i];
      }
      if (type === "int") {
        if (!/^-?\d+$/.test(value)) return { error: `${arg} must be an integer, got "${value}"` };
        options[key] = Number(value);
      } else if (type === "number") {
        const n = Number(value);
        if (value.trim() === "" || !Number.isFinite(n)) return { error: `${arg} must be a number, got "${value}"` };
        options[key] = n;
      } else {
        options[key] = value;
      }
      continue;
    }
    if (arg.startsWith("-") && arg !== "-") return { error: `unknown option ${arg}` };
    positional.push(arg);
  }
  if (flags.help) return { help: true };
  if (positional.length !== 2) {
    return { error: positional.length < 2 ? "expected <image> and <out.zarr>" : `expected two paths, got ${positional.length}: ${positional.join(" ")}` };
  }
  if (flags.overwrite) options.overwrite = true;
  if (flags.noRestartIntervals) options.restartIntervals = false;
  if (flags.trellis) options.trellis = true;
  if (flags.dicomIdentifiers) options.dicomIdentifiers = true;
  if (flags.downsampleZ) options.downsampleZ = true;
  return { input: positional[0], output: positional[1], options, flags };
}

export function progressBar(stream) {
  const tty = Boolean(stream.isTTY);
  let last = 0;
  let lastLevel = -1;
  return {
    update(event) {
      if (!tty) {
        // Not a terminal (a log, a pipe): one line per level.
        if (event.phase === "level" && event.level !== lastLevel) {
          lastLevel = event.level;
          stream.write(`level ${event.level + 1}/${event.levels}: shape ${event.shape.join("×")} (${event.chunksDone}/${event.chunksTotal} chunks done)\n`);
        }
        return;
      }
      const now = Date.now();
      if (event.phase === "chunk" && now - last < 50 && event.chunksDone !== event.chunksTotal) return;
      last = now;
      const width = Math.max(10, Math.min(40, (stream.columns ?? 80) - 45));
      const fraction = event.chunksTotal ? event.chunksDone / event.chunksTotal : 0;
      const filled = Math.round(fraction * width);
      stream.write(`\r[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${(fraction * 100).toFixed(0).padStart(3)}%  ` +
        `level ${event.level + 1}/${event.levels}  chunks ${event.chunksDone}/${event.chunksTotal}\x1b[K`);
    },
    done() {
      if (tty && last) stream.write("\n");
    },
  };
}

/** Runs `convert` with the arguments after the subcommand; resolves to the exit code. */
export async function main(argv) {
  const args = parseArgs(argv);
  if (args.help) {
    console.log(USAGE);
    return 0;
  }
  if (args.error) {
    console.error(`zarr-jpeg convert: ${args.error}\n\n${USAGE}`);
    return 2;
  }
  const quiet = Boolean(args.flags.quiet);
  const bar = progressBar(process.stderr);
  try {
    const summary = await convertFile(args.input, args.output, {
      workers: DEFAULT_WORKERS,
      ...args.options,
      onWarning: (message) => console.error(`zarr-jpeg convert: warning: ${message}`),
      onProgress: quiet || args.flags.json ? undefined : (event) => bar.update(event),
    });
    bar.done();
    if (args.flags.json) console.log(JSON.stringify(summary, (k, v) => (v === Infinity ? "Infinity" : v), 2));
    else if (!quiet) console.log(summary.text);
    return 0;
  } catch (error) {
    bar.done();
    if (error instanceof ConvertError) {
      console.error(error.message);
      return 1;
    }
    console.error(`zarr-jpeg convert: failed: ${error?.stack ?? error}`);
    return 1;
  }
}
