#!/usr/bin/env node
// Runs the cargo-fuzz targets (fuzz/fuzz_targets/) one after another, each for
// --seconds N (default 60), single process and niced, so it can share a small machine.
//
//   npm run fuzz -- --seconds 600                 # every target, 10 min each
//   npm run fuzz -- --seconds 60 --targets decode,config
//
// The corpus (fuzz/corpus/<target>, gitignored) is seeded from fuzz/seeds/<target>,
// and for decode also from every tests/fixtures/*.jpg with each matching
// configuration. Crashes land in fuzz/artifacts/<target>/ (gitignored): turn each
// into a regression test in tests/hostile.rs. Needs nightly (`rustup toolchain
// install nightly`) and cargo-fuzz (`cargo install cargo-fuzz`).
// Exit status: 0 when no target crashed.
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const fuzzDir = path.join(root, "fuzz");
const ALL = ["decode", "encode", "config", "layout", "tile_stream", "convert", "dicom"];

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : fallback;
};
const seconds = Number(opt("seconds", "60"));
const targets = opt("targets", ALL.join(",")).split(",").filter(Boolean);
if (!Number.isFinite(seconds) || seconds <= 0 || targets.some((t) => !ALL.includes(t))) {
  console.error(`usage: node scripts/fuzz.mjs [--seconds N] [--targets ${ALL.join(",")}]`);
  process.exit(2);
}

// Without nightly or cargo-fuzz every target would "crash" at once (exit 101): say so instead.
const probe = spawnSync("cargo", ["+nightly", "fuzz", "--version"], { cwd: fuzzDir, encoding: "utf8" });
if (probe.status !== 0) {
  console.error(
    `cargo +nightly fuzz does not run here (${`${probe.stderr ?? ""}`.trim().split("\n")[0] || probe.error}).\n` +
      "The fuzz targets need the nightly toolchain and cargo-fuzz: rustup toolchain install nightly; cargo install cargo-fuzz",
  );
  process.exit(2);
}

// libFuzzer options per target: input size cap, dictionary.
const OPTIONS = {
  decode: ["-max_len=65536", `-dict=${path.join(fuzzDir, "jpeg.dict")}`],
  encode: ["-max_len=4096"],
  config: ["-max_len=1024", `-dict=${path.join(fuzzDir, "config.dict")}`],
  layout: ["-max_len=128"],
  tile_stream: ["-max_len=65536", `-dict=${path.join(fuzzDir, "jpeg.dict")}`],
  // (whole-image decodes are capped at 4 GiB with the file, by design: the limit is above that)
  convert: ["-max_len=65536", "-rss_limit_mb=6144", "-malloc_limit_mb=6144", "-timeout=30"],
  dicom: ["-max_len=65536", "-rss_limit_mb=6144", "-malloc_limit_mb=6144", "-timeout=30", `-dict=${path.join(fuzzDir, "dicom.dict")}`],
};

// Config indices of fuzz_targets/common.rs::CONFIGS that fit a fixture's component count.
const DECODE_CONFIGS = { 1: [0], 3: [1, 2, 7] };

function seedCorpus(target) {
  const corpus = path.join(fuzzDir, "corpus", target);
  fs.mkdirSync(corpus, { recursive: true });
  const seeds = path.join(fuzzDir, "seeds", target);
  if (fs.existsSync(seeds)) {
    for (const f of fs.readdirSync(seeds)) fs.copyFileSync(path.join(seeds, f), path.join(corpus, `seed_${f}`));
  }
  if (target === "tile_stream") {
    // [declared colour space by component count, no separate tables] + each fixture
    const manifest = JSON.parse(fs.readFileSync(path.join(root, "tests/fixtures/manifest.json"), "utf8"));
    for (const entry of manifest) {
      const jpg = fs.readFileSync(path.join(root, "tests/fixtures", entry.file));
      const declared = entry.components === 1 ? 1 : 2;
      fs.writeFileSync(path.join(corpus, `fixture_${entry.file}`), Buffer.concat([Buffer.from([declared, 0, 0]), jpg]));
    }
  }
  if (target === "decode") {
    const manifest = JSON.parse(fs.readFileSync(path.join(root, "tests/fixtures/manifest.json"), "utf8"));
    for (const entry of manifest) {
      const jpg = fs.readFileSync(path.join(root, "tests/fixtures", entry.file));
      for (const index of DECODE_CONFIGS[entry.components] ?? [0]) {
        // [config index, shape mode 1 = the stream's own dimensions, unused h, w]
        const prefix = Buffer.from([index, 1, 0, 0, 0, 0]);
        fs.writeFileSync(path.join(corpus, `fixture_${index}_${entry.file}`), Buffer.concat([prefix, jpg]));
      }
    }
  }
  return corpus;
}

function run(target) {
  const corpus = seedCorpus(target);
  const cmd = [
    "-n", "10", "cargo", "+nightly", "fuzz", "run", "--release", target, corpus, "--",
    `-max_total_time=${seconds}`, "-timeout=30", "-rss_limit_mb=2048", "-print_final_stats=1",
    ...OPTIONS[target],
  ];
  console.log(`\n=== ${target}: ${seconds} s ===\n$ nice ${cmd.join(" ")}`);
  return new Promise((resolve) => {
    const child = spawn("nice", cmd, { cwd: fuzzDir, stdio: ["ignore", "inherit", "pipe"] });
    let last = "";
    let tail = "";
    child.stderr.on("data", (chunk) => {
      const text = chunk.toString();
      process.stderr.write(text);
      tail = (tail + text).slice(-20000);
      for (const line of text.split("\n")) if (/^#\d+\s/.test(line)) last = line.trim();
    });
    child.on("close", (code) => {
      const stat = (name) => (tail.match(new RegExp(`stat::${name}:\\s*(\\d+)`)) ?? [])[1];
      const crashed = code !== 0;
      resolve({
        target,
        status: crashed ? `CRASH (exit ${code})` : "ok",
        executions: stat("number_of_executed_units") ?? (last.match(/^#(\d+)/) ?? [])[1],
        cov: (last.match(/cov: (\d+)/) ?? [])[1],
        ft: (last.match(/ft: (\d+)/) ?? [])[1],
        corpus: (last.match(/corp: (\S+)/) ?? [])[1],
        peakRssMb: stat("peak_rss_mb"),
        artifact: (tail.match(/Test unit written to (\S+)/) ?? [])[1],
      });
    });
  });
}

const results = [];
for (const target of targets) results.push(await run(target));
console.log("\n=== summary ===");
console.table(results);
process.exit(results.some((r) => r.status !== "ok") ? 1 : 0);
