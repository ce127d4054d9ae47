#!/usr/bin/env node
// zarr-jpeg command-line entry: dispatches to one module per subcommand.
const COMMANDS = {
  convert: () => import("./convert-cli.js"),
  check: () => import("./check-cli.js"),
  export: () => import("./export-cli.js"),
};

import fs from "node:fs";

const USAGE = `usage: zarr-jpeg <command> [options]

commands:
  convert <image> <out.zarr> [options]   write a JPEG-compressed OME-Zarr image (run with --help for options)
  export --precomputed <in.zarr> <out>   write a JPEG OME-Zarr volume as a neuroglancer precomputed volume
  check <path-or-url>                    check a Zarr/OME-Zarr dataset against the OME-Zarr RFC-16 allowlist
  help                                   show this help (also --help, -h)

options:
  --version                              print the version of zarr-jpeg`;

const [command, ...rest] = process.argv.slice(2);
if (!command || command === "--help" || command === "-h" || command === "help") {
  console.log(USAGE);
  process.exit(command ? 0 : 2);
}
if (command === "--version" || command === "-V") {
  // package.json is next to dist/ in the installed package (and in the repository)
  console.log(JSON.parse(fs.readFileSync(new URL("../package.json", import.meta.url), "utf8")).version);
  process.exit(0);
}
const load = COMMANDS[command];
if (!load) {
  console.error(`zarr-jpeg: unknown command "${command}"\n\n${USAGE}`);
  process.exit(2);
}
const { main } = await load();
process.exitCode = await main(rest);
