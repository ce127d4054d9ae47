// `zarr-jpeg check <path-or-url>`: checks a Zarr / OME-Zarr dataset against
// the OME-Zarr RFC-16 allowlist and prints a readable report.
// Exit codes: 0 conforms, 1 does not conform (or could not be read), 2 usage error.
import { stat } from "node:fs/promises";
import { checkDataset, formatReport } from "./allowlist.js";

const USAGE = `usage: zarr-jpeg check <path-or-url> [--json] [--verbose]

Checks every array of a Zarr v3 / OME-Zarr dataset (multiscales, labels,
plate wells) against the OME-Zarr RFC-16 allowlist of Zarr extensions and
lists the extensions a reader needs, with their reader levels.

options:
  --json      print the full result as JSON instead of the text report
  --verbose   also list the allowlisted extensions each array uses
  -h, --help  show this help

exit code: 0 conforms, 1 does not conform, 2 usage error`;

const OPTIONS = new Set(["--json", "--verbose", "--help", "-h"]);

function parseArgs(argv) {
  const flags = new Set(argv.filter((arg) => arg.startsWith("-")));
  const positional = argv.filter((arg) => !arg.startsWith("-"));
  const unknown = [...flags].filter((flag) => !OPTIONS.has(flag));
  if (unknown.length) return { error: `unknown option ${unknown.join(", ")}` };
  if (flags.has("--help") || flags.has("-h")) return { help: true };
  if (positional.length !== 1) {
    return { error: positional.length === 0 ? "missing <path-or-url>" : `expected one <path-or-url>, got ${positional.length}: ${positional.join(" ")}` };
  }
  return { target: positional[0], json: flags.has("--json"), verbose: flags.has("--verbose") };
}

async function openTarget(target) {
  if (/^https?:\/\//i.test(target)) return { storeOrUrl: target };
  const info = await stat(target).catch(() => undefined);
  if (!info?.isDirectory()) return { error: `${target} is not a directory or an http(s) URL` };
  const { default: FileSystemStore } = await import("@zarrita/storage/fs");
  return { storeOrUrl: new FileSystemStore(target) };
}

/** Runs `check` with the arguments after the subcommand; resolves to the exit code. */
export async function main(argv) {
  const args = parseArgs(argv);
  if (args.help) {
    console.log(USAGE);
    return 0;
  }
  if (args.error) {
    console.error(`zarr-jpeg check: ${args.error}\n\n${USAGE}`);
    return 2;
  }
  const opened = await openTarget(args.target);
  if (opened.error) {
    console.error(`zarr-jpeg check: ${opened.error}`);
    return 2;
  }
  let result;
  try {
    result = await checkDataset(opened.storeOrUrl);
  } catch (error) {
    console.error(`zarr-jpeg check: could not check ${args.target}: ${error?.message ?? error}`);
    return 1;
  }
  console.log(args.json ? JSON.stringify(result, null, 2) : formatReport(result, { source: args.target, verbose: args.verbose }));
  return result.ok ? 0 : 1;
}
