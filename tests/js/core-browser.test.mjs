// The built package in headless Chromium, imported by a plain <script type="module">
// from a static server (no bundler): every spec example round-trips, and our decode
// agrees with Chromium's own JPEG decoder.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer } from "./helpers/server.mjs";
import { launchBrowser } from "./helpers/browser.mjs";
import { SPEC_EXAMPLES, rgbToYcbcr } from "./helpers/spec-examples.mjs";

// Largest difference between our decode and Chromium's, measured 2026-11-29 on these
// crops of ihc.png and cell.png: max 4, mean 0.33 (4:2:0), as against libjpeg-turbo's
// djpeg in tests/interop.rs: Chromium decodes with libjpeg-turbo.
const MAX_DIFF_VS_CHROMIUM = 4;

let server;
let browser;
before(async () => {
  server = await startServer(new URL("../..", import.meta.url).pathname);
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await server?.close();
});

test("spec examples round-trip in Chromium and match Chromium's decoder", async () => {
  const page = await browser.newPage();
  await page.goto(`${server.url}/tests/js/pages/core.html`);
  await page.waitForFunction(() => window.coreReady === true);
  await page.evaluate(`window.rgbToYcbcr = ${rgbToYcbcr.toString()}`);
  const { results, error } = await page.evaluate(([examples]) => window.runCore(examples, 83, 61), [SPEC_EXAMPLES]);
  assert.equal(results.length, SPEC_EXAMPLES.length);
  for (const r of results) {
    assert.equal(r.length, r.expected, JSON.stringify(r.config));
    assert.ok(r.psnr > 35, `${JSON.stringify(r.config)}: PSNR ${r.psnr}`);
    if (r.maxDiffVsChromium !== null) {
      console.log(`${JSON.stringify(r.config)}: max |ours - Chromium| = ${r.maxDiffVsChromium}, mean ${r.meanDiffVsChromium.toFixed(3)}`);
      assert.ok(r.maxDiffVsChromium <= MAX_DIFF_VS_CHROMIUM, `${JSON.stringify(r.config)}: ${r.maxDiffVsChromium}`);
    }
  }
  assert.deepEqual(error, {
    isError: true,
    kind: "InvalidConfiguration",
    message: "jpeg: invalid configuration: quality must be an integer from 1 to 100, got 0",
  });
  assert.deepEqual(page.consoleErrors, []);
});
