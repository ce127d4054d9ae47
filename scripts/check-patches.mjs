#!/usr/bin/env node
// Checks that each vendored crate is exactly its crates.io release plus its patch:
// vendor/<crate>/ == (the published <crate>-<version>.crate) + vendor/<crate>.patch.
// The release comes through cargo from the registry (a throwaway manifest under target/
// depending on the exact version, `cargo fetch`), so nothing is downloaded from elsewhere.
// Fails, listing the differing files, when someone edits vendor/ without regenerating the
// patch, or the patch without vendor/ (vendor/PATCHES.md says how to regenerate it).
//
//   node scripts/check-patches.mjs            # every crate in vendor/ with a .patch
//   node scripts/check-patches.mjs zune-jpeg  # one crate
//   node scripts/check-patches.mjs --write    # after editing vendor/: regenerate the .patch files
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const vendor = path.join(root, "vendor");
const cargoHome = process.env.CARGO_HOME ?? path.join(os.homedir(), ".cargo");

// Files the vendored copy may lack or add without the patch saying so: VCS metadata cargo
// writes into a package, upstream's CI configuration, and the .gitignore files that keep
// build output of a crate's own `cargo test` (scripts/test.sh runs the vendored
// jpeg-encoder's unit tests) out of git.
const IGNORED = new Set([".cargo_vcs_info.json", ".github", ".gitignore", "Cargo.lock", "target"]);

function crateVersion(dir) {
  const manifest = fs.readFileSync(path.join(dir, "Cargo.toml"), "utf8");
  const match = manifest.match(/^\[package\][^[]*?^version\s*=\s*"([^"]+)"/m);
  if (!match) throw new Error(`${path.relative(root, dir)}/Cargo.toml names no [package] version`);
  return match[1];
}

/** Fetches the exact releases through cargo and returns the path of each .crate file. */
function fetchReleases(crates) {
  const work = path.join(root, "target", "vendor-check");
  fs.mkdirSync(work, { recursive: true });
  const deps = crates.map(({ name, version }) => `${name} = "=${version}"`).join("\n");
  // Its own [workspace], so the project's workspace and its [patch.crates-io] do not apply.
  fs.writeFileSync(path.join(work, "Cargo.toml"),
    `[package]\nname = "vendor-check"\nversion = "0.0.0"\nedition = "2021"\npublish = false\n\n[lib]\npath = "lib.rs"\n\n[dependencies]\n${deps}\n\n[workspace]\n`);
  fs.writeFileSync(path.join(work, "lib.rs"), "");
  const fetched = spawnSync("cargo", ["fetch", "--manifest-path", path.join(work, "Cargo.toml")], { encoding: "utf8" });
  if (fetched.status !== 0) throw new Error(`cargo fetch of the pinned releases failed:\n${fetched.stderr}`);
  const caches = fs.readdirSync(path.join(cargoHome, "registry", "cache")).map((d) => path.join(cargoHome, "registry", "cache", d));
  return crates.map((crate) => {
    const file = caches.map((dir) => path.join(dir, `${crate.name}-${crate.version}.crate`)).find((f) => fs.existsSync(f));
    if (!file) throw new Error(`cargo fetch left no ${crate.name}-${crate.version}.crate in ${path.join(cargoHome, "registry", "cache")}`);
    return { ...crate, file };
  });
}

/** Every file under dir, as paths relative to it, minus the ignored names. */
function listFiles(dir, prefix = "") {
  return fs.readdirSync(path.join(dir, prefix), { withFileTypes: true }).flatMap((entry) => {
    if (IGNORED.has(entry.name)) return [];
    const rel = path.join(prefix, entry.name);
    return entry.isDirectory() ? listFiles(dir, rel) : [rel];
  });
}

/** Rewrites vendor/<name>.patch as the diff from the release to vendor/<name>/. */
function writePatch({ name, version, file, patch }, scratch) {
  const work = fs.mkdtempSync(path.join(scratch, `${name}-`));
  execFileSync("tar", ["-xzf", file, "-C", work]);
  fs.renameSync(path.join(work, `${name}-${version}`), path.join(work, "a"));
  fs.cpSync(path.join(vendor, name), path.join(work, "b"), { recursive: true });
  const excluded = [...IGNORED].flatMap((entry) => ["-x", entry]);
  const diff = spawnSync("diff", ["-ruN", ...excluded, "a", "b"], { cwd: work, encoding: "utf8", maxBuffer: 1 << 28 });
  if (diff.status > 1) throw new Error(`diff failed: ${diff.stderr}`);
  // Without diff's command lines and timestamps, so the file changes only when the code does.
  const text = diff.stdout.split("\n").filter((line) => !line.startsWith("diff -ruN "))
    .map((line) => (/^(---|\+\+\+) /.test(line) ? line.replace(/\t.*$/, "") : line)).join("\n");
  fs.writeFileSync(patch, text);
  console.log(`${name} ${version}: wrote ${path.relative(root, patch)}`);
}

function checkCrate({ name, version, file, patch }, scratch) {
  execFileSync("tar", ["-xzf", file, "-C", scratch]);
  const patched = path.join(scratch, `${name}-${version}`);
  // git apply works outside a repository too, and git is there wherever the project is cloned.
  const applied = spawnSync("git", ["apply", "-p1", "--whitespace=nowarn", patch], { cwd: patched, encoding: "utf8" });
  if (applied.status !== 0) return [`${path.relative(root, patch)} does not apply to ${name} ${version}:\n${applied.stdout}${applied.stderr}`];
  const vendored = path.join(vendor, name);
  const want = new Set(listFiles(patched));
  const have = new Set(listFiles(vendored));
  const problems = [];
  for (const rel of [...new Set([...want, ...have])].sort()) {
    if (!have.has(rel)) problems.push(`vendor/${name}/${rel}: missing (the release + patch has it)`);
    else if (!want.has(rel)) problems.push(`vendor/${name}/${rel}: not in the release + patch`);
    else if (!fs.readFileSync(path.join(patched, rel)).equals(fs.readFileSync(path.join(vendored, rel)))) {
      problems.push(`vendor/${name}/${rel}: differs from the release + patch`);
    }
  }
  return problems;
}

const write = process.argv.includes("--write");
const only = process.argv.slice(2).filter((arg) => arg !== "--write");
const crates = fs.readdirSync(vendor)
  .filter((file) => file.endsWith(".patch"))
  .map((file) => file.slice(0, -".patch".length))
  .filter((name) => only.length === 0 || only.includes(name))
  .map((name) => ({ name, version: crateVersion(path.join(vendor, name)), patch: path.join(vendor, `${name}.patch`) }));
if (crates.length === 0) {
  console.error(`no vendor/*.patch${only.length ? ` for ${only.join(", ")}` : ""}`);
  process.exit(2);
}

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "zarr-jpeg-vendor-check-"));
let failed = false;
try {
  for (const crate of fetchReleases(crates)) {
    if (write) writePatch(crate, scratch);
    const problems = checkCrate(crate, scratch);
    if (problems.length) {
      failed = true;
      console.error(`${crate.name} ${crate.version}: vendor/${crate.name} is not the release + vendor/${crate.name}.patch:\n  ${problems.join("\n  ")}`);
    } else {
      console.log(`${crate.name} ${crate.version}: vendor/${crate.name} = the crates.io release + vendor/${crate.name}.patch`);
    }
  }
} finally {
  fs.rmSync(scratch, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
