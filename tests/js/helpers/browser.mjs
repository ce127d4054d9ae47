// Headless Chromium (Debian's package) driven by playwright-core; never downloads a browser.
import { chromium } from "playwright-core";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** `extraArgs`: more Chromium flags (the benchmark adds `--js-flags=--expose-gc`). */
export async function launchBrowser({ extraArgs = [] } = {}) {
  if (!fs.existsSync(CHROMIUM_PATH)) {
    throw new Error(`Chromium not found at ${CHROMIUM_PATH}; run \`npm run setup\` (installs Debian's chromium)`);
  }
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), "zarr-jpeg-chromium-"));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [...FLAGS, ...extraArgs],
  });
  return {
    context,
    async newPage() {
      const page = await context.newPage();
      const consoleErrors = [];
      page.on("console", (msg) => {
        if (msg.type() === "error") consoleErrors.push(msg.text());
      });
      page.on("pageerror", (err) => consoleErrors.push(String(err)));
      page.consoleErrors = consoleErrors;
      return page;
    },
    async close() {
      await context.close();
      fs.rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}
