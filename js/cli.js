#!/usr/bin/env node
// zarr-jpeg command-line entry: dispatches to one module per subcommand.
const COMMANDS = {
  convert: () => import("./convert-cli.js"),
  check: () => import("./check-cli.js"),
};

const USAGE = `usage: zarr-jpeg <command> [options]

commands:
  convert <image> <out.zarr> [options]   write a JPEG-compressed OME-Zarr image (run with --help for options)
  check <path-or-url>                    check a Zarr/OME-Zarr dataset against the OME-Zarr RFC-16 allowlist`;

const [command, ...rest] = process.argv.slice(2);
if (!command || command === "--help" || command === "-h") {
  console.log(USAGE);
  process.exit(command ? 0 : 2);
}
const load = COMMANDS[command];
if (!load) {
  console.error(`zarr-jpeg: unknown command "${command}"\n\n${USAGE}`);
  process.exit(2);
}
const { main } = await load();
process.exitCode = await main(rest);
