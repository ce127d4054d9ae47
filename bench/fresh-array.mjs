#!/usr/bin/env node
// What a fresh output array costs in headless Chromium: per size (the bench's chunk sizes as
// RGB and gray), the time to allocate a Uint8Array and write every byte once (`fill`), against
// the same write into one reused array. Every decoder that returns a new array pays the
// difference (page faults on first touch), so it bounds how far decode() ratios can go.
//   node bench/fresh-array.mjs [--ms N]
import { chromium } from "playwright-core";

const msArg = process.argv.indexOf("--ms");
const ms = msArg > 0 ? Number(process.argv[msArg + 1]) : 700;
const sizes = [256 * 256, 256 * 256 * 3, 512 * 512, 512 * 512 * 3, 2048 * 2048, 2048 * 2048 * 3];

const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"],
});
try {
  const page = await browser.newPage();
  const rows = await page.evaluate(
    ({ sizes, ms }) => {
      const perCall = (f) => {
        for (let i = 0; i < 10; i++) f();
        const t0 = performance.now();
        let calls = 0;
        while (performance.now() - t0 < ms) {
          f();
          calls++;
        }
        return ((performance.now() - t0) / calls) * 1000;
      };
      return sizes.map((n) => {
        const reused = new Uint8Array(n);
        const fresh = perCall(() => new Uint8Array(n).fill(1));
        const again = perCall(() => reused.fill(1));
        return { n, fresh, reused: again };
      });
    },
    { sizes, ms },
  );
  console.log(`headless Chromium ${browser.version()}; µs per call, ≥ ${ms} ms each\n`);
  console.log("| bytes | new Uint8Array + fill | fill of a reused array | difference per KB |");
  console.log("|---:|---:|---:|---:|");
  for (const r of rows) {
    const perKb = (r.fresh - r.reused) / (r.n / 1024);
    console.log(`| ${r.n} | ${r.fresh.toFixed(1)} | ${r.reused.toFixed(1)} | ${perKb.toFixed(2)} |`);
  }
} finally {
  await browser.close();
}
