import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { compareWithBaseline, ROUTES } from "../../bench/baseline";
import { formatTable, type Report } from "../../bench/report";

const root = join(__dirname, "../..");

describe("npm run bench -- --baseline <ref>", () => {
  it("loads the same requests on two whole systems in one run, warmed up, alternating, and reports each route beside the baseline's", async () => {
    // Today's code as its own baseline: the machinery without installing another checkout.
    const figures = await compareWithBaseline(root, {
      ref: "HEAD",
      directory: root,
      seconds: 1,
      rounds: 2,
      warmupSeconds: 1,
      connections: 8,
      only: ["Q6", "C3"],
    });
    expect(figures.routes.map((r) => r.request)).toEqual(["Q6 feed", "C3 comment"]);
    for (const route of figures.routes) {
      expect(route.current.requestsPerSecond, route.request).toBeGreaterThan(0);
      expect(route.baseline.requestsPerSecond, route.request).toBeGreaterThan(0);
      expect(route.ratio).toBeCloseTo(route.current.requestsPerSecond / route.baseline.requestsPerSecond, 9);
      // The warm-up's figures are kept apart from the rounds', never left out of the report.
      expect(route.warmup?.current, route.request).toBeGreaterThan(0);
      expect(route.warmup?.baseline, route.request).toBeGreaterThan(0);
    }
    expect(figures.warmupSeconds).toBe(1);
    const table = formatTable({ meta: {}, rows: [], apiOverhead: [], baseline: figures } as unknown as Report);
    expect(table).toContain(
      "| 8 connections, 2 x 1 s each after 1 s of warm-up | req/s | p99 ms | HEAD (HEAD): req/s | p99 ms | ratio (target >= 1.0) | warm-up: req/s, ratio |",
    );
    expect(table).toMatch(/\| C3 comment \| \d+ \| \d+ \| \d+ \| \d+ \| \d+\.\d\d \| \d+ against \d+, \d+\.\d\d \|/);
  }, 120_000);

  it("covers the article's ten requests", () => {
    expect(Object.keys(ROUTES).map((name) => name.split(" ")[0])).toEqual(["Q1", "Q2", "Q3", "Q4", "Q5", "Q6", "C1", "C2", "C3", "C4"]);
  });
});
