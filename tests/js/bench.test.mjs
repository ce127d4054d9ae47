// Smoke test for the benchmark harness: `node bench/run.mjs --quick` must finish and report a
// figure for every candidate it lists. No timing assertions (the machines are noisy); the point
// is that a candidate never silently drops out of the comparison.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

test("bench --quick reports every candidate", { timeout: 180_000 }, () => {
  // Its own output directory, so a full run's bench/results/ is left alone.
  const out = fs.mkdtempSync(path.join(os.tmpdir(), "zarr-jpeg-bench-"));
  execFileSync(process.execPath, ["bench/run.mjs", "--quick", "--out", out], { cwd: root, stdio: ["ignore", "pipe", "pipe"], timeout: 170_000 });
  const r = JSON.parse(fs.readFileSync(path.join(out, "results.json"), "utf8"));
  assert.equal(r.meta.quick, true);
  assert.ok(r.cases.length >= 4, "colour 4:2:0, 4:4:4, rgb and grayscale cases");
  assert.deepEqual(new Set(r.cases.map((c) => c.mode)), new Set(["420", "444", "rgb", "gray"]));

  for (const kind of ["decode", "encode"]) {
    const names = r.candidates[kind];
    assert.ok(names.includes("ours") && names.includes("cornerstone") && names.includes("tjbench"));
    for (const name of names) {
      let figures = 0;
      for (const c of r.cases) {
        const e = c[kind][name];
        assert.ok(e, `${c.id} ${kind}: no entry for ${name}`);
        assert.ok(!e.error, `${c.id} ${kind} ${name} failed: ${e.error}`);
        if (e.unsupported) {
          assert.equal(typeof e.unsupported, "string");
          continue;
        }
        assert.ok(Number.isFinite(e.mps) && e.mps > 0, `${c.id} ${kind} ${name}: no MP/s figure`);
        figures++;
      }
      assert.ok(figures > 0, `${kind} ${name}: no figure in any case`);
    }
    // ours must cover every case
    for (const c of r.cases) assert.ok(c[kind].ours.mps > 0, `${c.id}: ours ${kind}`);
  }
  for (const c of r.cases) {
    for (const [name, e] of Object.entries(c.decode)) {
      if (name !== "tjbench" && name !== "jpeg-js" && e.mps) assert.ok(!e.mismatch, `${c.id}: ${name} decoded differently from ours (${e.meanAbsDiffVsOurs})`);
    }
  }

  // Our 256² streams carry restart intervals: each of these decoders also timed on the same
  // stream without them (jpegtran), so the intervals' effect on it is reported.
  assert.deepEqual(r.candidates.plainDecode, ["ours", "cornerstone", "ImageDecoder", "tjbench"]);
  for (const c of r.cases) {
    assert.ok(c.plainJpegBytes > 0, `${c.id}: no stream without restart intervals (${JSON.stringify(c.plainJpeg)})`);
    for (const name of r.candidates.plainDecode) {
      assert.ok(c.restartIntervalEffect[name] > 0, `${c.id}: no restart-interval figure for ${name}`);
    }
  }

  const payloadCandidates = new Set(r.payload.map((p) => p.candidate));
  for (const name of ["ours", "cornerstone", "jsquash", "jpeg-js"]) assert.ok(payloadCandidates.has(name), `payload: ${name}`);
  for (const p of r.payload) assert.ok(!p.error && p.raw > 0 && p.gzip9 > 0, `payload ${p.candidate} ${p.what}: ${p.error}`);

  for (const name of ["ours", "ours (trellis)", "pillow", "pillow (optimize)", "mozjpeg (defaults)", "mozjpeg (baseline)", "mozjpeg (baseline, annex-k)"]) {
    const curve = r.rd.curves?.[name];
    assert.ok(curve?.length > 0, `rate–distortion: ${name} (${JSON.stringify(r.rd).slice(0, 200)})`);
    for (const p of curve) assert.ok(p.bytes > 0 && p.psnr > 20, `${name} q${p.q}`);
    if (name !== "pillow (optimize)") assert.equal(typeof r.rd.bdRate?.[name]?.percent, "number", `BD-rate of ${name}`);
  }
  assert.ok(r.zarrita, "zarrita section present (result or reason it was skipped)");
  assert.ok(fs.readFileSync(path.join(out, "chart.svg"), "utf8").startsWith("<svg"));
  fs.rmSync(out, { recursive: true, force: true });
});
