// One source for every figure: bench/README.md's tables are exactly what bench/tables.mjs
// generates from the committed bench/results.json (after a run: `node bench/tables.mjs --from
// bench/results/results.json`). A hand edit of a figure, or results committed without their
// tables, fails here.
// Run: node --test tests/js/bench-tables.test.mjs
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import { RESULTS, README, BEGIN, END, generatedSection, withTables } from "../../bench/tables.mjs";

const results = JSON.parse(fs.readFileSync(RESULTS, "utf8"));
const readme = fs.readFileSync(README, "utf8");

test("bench/README.md's generated section is that of bench/results.json", () => {
  assert.ok(readme.includes(BEGIN) && readme.includes(END), "the generated section's markers");
  assert.equal(withTables(readme, results), readme, "run `node bench/tables.mjs`");
});

test("the section names the run's date, machine and commit once, and holds the decode, encode and payload tables", () => {
  const section = generatedSection(results);
  assert.equal(section.split(results.meta.date.slice(0, 10)).length - 1, 1, "the date once");
  assert.ok(section.includes(`git ${results.meta.git}`));
  assert.ok(section.includes(`${results.meta.nproc} cores`));
  for (const table of ["| decode MP/s |", "| encode MP/s |", "| payload |"]) assert.ok(section.includes(table), table);
});

test("a figure changed by hand is caught", () => {
  const section = generatedSection(results);
  const edited = readme.replace(section, section.replace(/\| (\d+)\.(\d) \|/, (_, a, b) => `| ${a}.${(Number(b) + 1) % 10} |`));
  assert.notEqual(edited, readme, "the section has a figure to edit");
  assert.notEqual(withTables(edited, results), edited);
});

test("the converter table in bench/README.md and README.md is that of bench/convert-results.json", async () => {
  const { CONVERT_RESULTS, CONVERT_READMES, withConvertSection, convertSection } = await import("../../bench/lib/convert-table.mjs");
  const run = JSON.parse(fs.readFileSync(CONVERT_RESULTS, "utf8"));
  for (const file of CONVERT_READMES) {
    const text = fs.readFileSync(file, "utf8");
    assert.equal(withConvertSection(text, run), text, `${file}: run \`node bench/convert-wsi.mjs --publish\``);
  }
  const section = convertSection(run);
  for (const row of run.rows) assert.ok(section.includes(`| ${row.input} |`), row.input);
  const edited = readme.replace(section, section.replace(/\| (\d+)\.(\d) \| (\d+)\.(\d) \|/, (_, a, b, c, d) => `| ${a}.${(Number(b) + 1) % 10} | ${c}.${d} |`));
  assert.notEqual(edited, readme, "the section has a figure to edit");
  assert.notEqual(withConvertSection(edited, run), edited, "a figure edited by hand is caught");
});
