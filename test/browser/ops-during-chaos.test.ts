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
  await bundleWeb(join(__dirname, "../.."));
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
  it("shows the workload's requests per route and method with their percentiles, API and background request units and throttling, live, on a phone and a desktop", async () => {
    let hostUrl!: (url: string) => void;
    const firstHost = new Promise<string>((resolve) => (hostUrl = resolve));
    // One incarnation for the whole workload (no restart), so the page watches one host throughout.
    const chaos = runChaos({ seconds: 30, seed: 139, users: 4, restartEverySeconds: 3600, sabotageEverySeconds: 5, onHost: (url) => hostUrl(url) });
    const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
    try {
      await page.goto(`${(await firstHost).replace(/\/api$/, "/")}#/ops`);
      // On a desktop: one row per route and method, with the last minute's percentiles and its bar line of five minutes.
      const desktop = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      try {
        await desktop.goto(`${(await firstHost).replace(/\/api$/, "/")}#/ops`);
        const row = desktop.locator("table[data-test=routes] tbody tr", { hasText: "GET /api/posts/{postId}" }).first();
        await row.waitFor({ timeout: 30_000 });
        // The last minute's percentiles first, the last five minutes' under them, in one cell.
        const latency = row.locator('td[data-label="p50 / p95 / p99 ms (1 / 5 min)"] .windows > span');
        await expect(latency.nth(0).textContent()).resolves.toMatch(/^[\d.,]+ \/ [\d.,]+ \/ [\d.,]+$/);
        await expect(latency.nth(1).textContent()).resolves.toMatch(/^[\d.,]+ \/ [\d.,]+ \/ [\d.,]+$/);
        // The bar line fills as the history's readings (every 10 s) come in.
        await desktop.waitForFunction(() => /^[▁▂▃▄▅▆▇█]+$/.test(document.querySelector("table[data-test=routes] .sparkline")?.textContent ?? ""), null, {
          timeout: 30_000,
        });
        await expect(desktop.locator("table[data-test=routes] thead th").allTextContents()).resolves.toContain("p50 / p95 / p99 ms (1 / 5 min)");
      } finally {
        await desktop.close();
      }
      await tileAbove(page, "rate", 0);
      const ru = await tileAbove(page, "ru", 0);
      // Live: without a reload, the request units grow as the workload goes on, and the injected 429s show.
      await tileAbove(page, "ru", ru);
      await tileAbove(page, "throttled", 0);
      await tileAbove(page, "ru-background", 0); // the change feed's and orchestrations' request units, apart from the API's
      await expect(page.locator("table[data-test=routes] tr", { hasText: "/api/posts" }).count()).resolves.toBeGreaterThan(0);
      // On a phone each route is a card: every figure of it, request units included, is on screen without scrolling sideways.
      const card = page.locator("table[data-test=routes] tbody tr").first();
      for (const cell of await card.locator("td").all()) {
        const box = (await cell.boundingBox())!;
        expect(box.x + box.width, await cell.getAttribute("data-label")).toBeLessThanOrEqual(390);
      }
      await expect(card.locator("td[data-label='RU / request']").textContent()).resolves.toMatch(/^[\d.,]+$/);
    } finally {
      await page.close();
    }
    expect((await chaos).violations).toEqual([]);
  }, 240_000);
});
