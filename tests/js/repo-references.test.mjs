// The repository stands alone: no tracked file may point at something outside it, or at a
// file of the repository that does not exist. A fresh clone has nothing beside it, so a
// test or script that reads a sibling folder fails there, and a comment or doc that cites a
// missing file sends its reader nowhere.
// Run: node --test tests/js/repo-references.test.mjs
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const git = (...args) => execFileSync("git", args, { cwd: root, encoding: "utf8" });

// Tracked files plus new ones not yet committed (so the check runs before a commit, too).
const allFiles = git("ls-files", "-z", "--cached", "--others", "--exclude-standard").split("\0").filter(Boolean)
  .filter((file) => fs.existsSync(path.join(root, file)));
// Upstream sources copied under vendor/, and the patches to them (vendor/*.patch), cite their
// own crates' files; lockfiles are generated.
const checkedFiles = allFiles.filter((file) => !/^vendor\/[^/]+\//.test(file) && !/^vendor\/[^/]+\.patch$/.test(file) &&
  !/(^|\/)(package-lock\.json|Cargo\.lock)$/.test(file));
const markdownNames = new Set(allFiles.filter((file) => file.endsWith(".md")).map((file) => path.basename(file)));
// The repository's top-level folders, and the usual ones it may not have yet (a path into a
// folder that does not exist is missing too).
const topLevel = [...new Set(["docs", "src", "js", "tests", "bench", "scripts", "vendor", "www", "python", "samples", "fuzz",
  ...allFiles.filter((file) => file.includes("/")).map((file) => file.split("/")[0])])];

/** Text of each checked file (binary files skipped), with the line number of an offset. */
const texts = checkedFiles.flatMap((file) => {
  const bytes = fs.readFileSync(path.join(root, file));
  return bytes.includes(0) ? [] : [{ file, text: bytes.toString("utf8") }];
});
const lineOf = (text, index) => text.slice(0, index).split("\n").length;

/** Paths git ignores are build output or generated data (dist/, target/, bench/results/…): they may be absent. */
function isGenerated(repoPath) {
  try {
    git("check-ignore", "-q", "--no-index", repoPath);
    return true;
  } catch {
    return false;
  }
}

function report(problems) {
  return `${problems.length} reference(s) to missing or outside files:\n` + problems.join("\n");
}

test("no file refers to anything outside the repository (a sibling folder, an absolute machine path)", () => {
  const problems = [];
  const outside = /(?:\.\.\/)+shared\/|\/work\/|[\w-]*\/shared\/spec\//g;
  const relative = /(?<![\w.-])((?:\.\.\/)+[\w.@-][\w./@-]*)/g;
  for (const { file, text } of texts) {
    for (const match of text.matchAll(outside)) problems.push(`${file}:${lineOf(text, match.index)}: ${match[0]}`);
    for (const match of text.matchAll(relative)) {
      const resolved = path.relative(root, path.resolve(root, path.dirname(file), match[1]));
      if (resolved.startsWith("..")) problems.push(`${file}:${lineOf(text, match.index)}: ${match[1]} leads out of the repository`);
    }
  }
  assert.deepEqual(problems, [], report(problems));
});

test("every Markdown file named anywhere exists in the repository", () => {
  const problems = [];
  for (const { file, text } of texts) {
    for (const match of text.matchAll(/(?<![\w./-])([A-Z][A-Z0-9_-]*\.md)\b/g)) {
      if (!markdownNames.has(match[1])) problems.push(`${file}:${lineOf(text, match.index)}: ${match[1]}`);
    }
  }
  assert.deepEqual(problems, [], report(problems));
});

test("every repository path with a file extension (src/…, docs/…, tests/…) exists or is generated output", () => {
  const problems = [];
  const rooted = new RegExp(`(?<![\\w./@-])((?:${topLevel.map((dir) => dir.replace(".", "\\.")).join("|")})/[\\w./@-]*\\.[A-Za-z]{1,5})(?![\\w/*{-])`, "g");
  for (const { file, text } of texts) {
    for (const match of text.matchAll(rooted)) {
      const repoPath = match[1];
      if (fs.existsSync(path.join(root, repoPath)) || isGenerated(repoPath)) continue;
      problems.push(`${file}:${lineOf(text, match.index)}: ${repoPath}`);
    }
  }
  assert.deepEqual(problems, [], report(problems));
});

test("every relative link in the Markdown files leads to an existing file", () => {
  const problems = [];
  for (const { file, text } of texts.filter(({ file }) => file.endsWith(".md"))) {
    for (const match of text.matchAll(/\]\(([^)\s#]+)(?:#[^)\s]*)?\)/g)) {
      const target = match[1];
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
      const resolved = path.relative(root, path.resolve(root, path.dirname(file), target));
      if (resolved.startsWith("..") || !fs.existsSync(path.join(root, resolved))) {
        problems.push(`${file}:${lineOf(text, match.index)}: ${target}`);
      }
    }
  }
  assert.deepEqual(problems, [], report(problems));
});

test("the check sees the files it is meant to (this test, the README, the Rust sources)", () => {
  const seen = new Set(texts.map(({ file }) => file));
  for (const file of ["tests/js/repo-references.test.mjs", "README.md", "Cargo.toml", "scripts/test.sh"]) assert.ok(seen.has(file), file);
  assert.ok(texts.some(({ file }) => file.startsWith("src/") && file.endsWith(".rs")));
});
