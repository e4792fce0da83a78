import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runChaos } from "../../chaos/run";
import { bundleWeb } from "../../scripts/bundle-web";

/**
 * The operations page while `npm run chaos` runs: the figures an operator watches move with the
 * workload and its faults, live, in a real browser (Debian's Chromium), on the chaos run's host.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
let browser: Browser;

beforeAll(async () => {
  bundleWeb(join(__dirname, "../.."));
  browser = await chromium.launch({ executablePath: CHROMIUM });
});
afterAll(() => browser?.close());

/** Waits until the number a tile of the page shows passes `above`, without reloading; returns it. */
async function tileAbove(page: Page, test: string, above: number): Promise<number> {
  const value = await page.waitForFunction(
    ([name, floor]) => {
      const shown = Number(document.querySelector(`[data-test=${name}] .tile-value`)?.textContent?.replace(/,/g, ""));
      return shown > floor && shown;
    },
    [test, above] as const,
    { timeout: 30_000 },
  );
  return (await value.jsonValue()) as number;
}

describe("the operations page during npm run chaos", () => {
  it("shows the workload's requests, request units and throttling, updated as the run goes on", async () => {
    let hostUrl!: (url: string) => void;
    const firstHost = new Promise<string>((resolve) => (hostUrl = resolve));
    // One incarnation for the whole workload (no restart), so the page watches one host throughout.
    const chaos = runChaos({ seconds: 30, seed: 139, users: 4, restartEverySeconds: 3600, sabotageEverySeconds: 5, onHost: (url) => hostUrl(url) });
    const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
    try {
      await page.goto(`${(await firstHost).replace(/\/api$/, "/")}#/ops`);
      await tileAbove(page, "rate", 0);
      const ru = await tileAbove(page, "ru", 0);
      // Live: without a reload, the request units grow as the workload goes on, and the injected 429s show.
      await tileAbove(page, "ru", ru);
      await tileAbove(page, "throttled", 0);
      await expect(page.locator("table[data-test=routes] tr", { hasText: "/api/posts" }).count()).resolves.toBeGreaterThan(0);
    } finally {
      await page.close();
    }
    expect((await chaos).violations).toEqual([]);
  }, 240_000);
});
