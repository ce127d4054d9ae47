// `zarr-jpeg export --precomputed <in.zarr> <out-folder>`: a JPEG OME-Zarr image or volume
// written as a neuroglancer precomputed volume by the Rust core (chunks copied where the
// layouts agree). The Python package's `zarr-jpeg export` takes the same arguments.
import { exportPrecomputed, ConvertError } from "./convert-files.js";
import { progressBar, DEFAULT_WORKERS } from "./convert-cli.js";

const USAGE = `usage: zarr-jpeg export --precomputed <in.zarr> <out-folder> [options]

Writes a JPEG OME-Zarr image (a Zarr v3 group with OME-Zarr 0.5 multiscales) as a
neuroglancer precomputed volume ("encoding": "jpeg", unsharded, one scale per
level), which neuroglancer opens as precomputed://… and tensorstore reads. A
chunk whose JPEG is a precomputed chunk's image (z-major rows of x, colour
interleaved) is copied byte for byte; chunks at the volume's upper bounds,
which precomputed stores clipped, are decoded, cut and re-encoded. Time series
are refused (precomputed has no t axis), and so are channels stored as
separate grayscale chunks.

options:
  --quality N        JPEG quality of the re-encoded chunks (default: the level's)
  --workers N        threads (default ${DEFAULT_WORKERS})
  --overwrite        replace <out-folder> if it is a precomputed volume (info at its top)
  --quiet            no progress or summary
  --json             print the summary as JSON`;

/** Parses the arguments after `export`: { input, output, options, flags } or { error } / { help }. */
export function parseArgs(argv) {
  const positional = [];
  const options = {};
  const flags = {};
  let precomputed = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--help" || arg === "-h") return { help: true };
    if (arg === "--precomputed") precomputed = true;
    else if (arg === "--overwrite") options.overwrite = true;
    else if (arg === "--quiet" || arg === "--json") flags[arg.slice(2)] = true;
    else if (arg === "--quality" || arg === "--workers") {
      const value = argv[++i];
      if (value === undefined || !/^-?\d+$/.test(value)) return { error: `${arg} needs a whole number, got ${value ?? "nothing"}` };
      options[arg.slice(2)] = Number(value);
    } else if (arg.startsWith("-")) return { error: `unknown option ${arg}` };
    else positional.push(arg);
  }
  if (!precomputed) return { error: "say which format to write: --precomputed (the only one)" };
  if (positional.length !== 2) return { error: `expected <in.zarr> <out-folder>, got ${positional.length} argument(s)` };
  return { input: positional[0], output: positional[1], options, flags };
}

/** Runs `export` with the arguments after the subcommand; resolves to the exit code. */
export async function main(argv) {
  const args = parseArgs(argv);
  if (args.help) {
    console.log(USAGE);
    return 0;
  }
  if (args.error) {
    console.error(`zarr-jpeg export: ${args.error}\n\n${USAGE}`);
    return 2;
  }
  const quiet = Boolean(args.flags.quiet);
  const bar = progressBar(process.stderr);
  const say = (message) => message.replace(/^zarr-jpeg convert:/, "zarr-jpeg export:");
  try {
    const summary = await exportPrecomputed(args.input, args.output, {
      workers: DEFAULT_WORKERS,
      ...args.options,
      onWarning: (message) => console.error(`zarr-jpeg export: warning: ${message}`),
      onProgress: quiet || args.flags.json ? undefined : (event) => bar.update(event),
    });
    bar.done();
    if (args.flags.json) console.log(JSON.stringify(summary, null, 2));
    else if (!quiet) console.log(summary.text);
    return 0;
  } catch (error) {
    bar.done();
    if (error instanceof ConvertError) {
      console.error(say(error.message));
      return 1;
    }
    console.error(`zarr-jpeg export: failed: ${error?.stack ?? error}`);
    return 1;
  }
}
