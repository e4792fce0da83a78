import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { measureColdStart } from "../../bench/cold-start";
import { formatTable, type Report } from "../../bench/report";
import { runAll } from "../../bench/run-all";

/**
 * The benchmark's figures taken from fresh processes: cold start (the deployable bundle loaded
 * in new processes), idle (npm start watched with no traffic) and one and two instances on one
 * account. Apart from bench.test.ts, so the two run side by side.
 */
describe("benchmark from fresh processes (a tiny run: it works and its figures agree with each other)", () => {
  it("reports cold start, idle CPU and one and two instances", async () => {
    // A settled host may do nothing at all for 2 s (its change feeds read every 30 s when idle):
    // the backlog timer every second puts work in the idle window, so a figure of 0 means the CPU
    // was not read.
    const schedule = process.env.BACKLOG_SCHEDULE;
    process.env.BACKLOG_SCHEDULE = "*/1 * * * * *";
    const report = await runAll({
      users: 2,
      seed: 3,
      iterations: 1,
      feedSize: 20,
      database: "benchtest",
      progress: false,
      pipeline: { posts: 3, renameItems: 0, renamePosts: 6 },
      serverCommentSeconds: 0,
      coldStartSamples: 2,
      idleSeconds: 2,
      idleSettleSeconds: 0,
      scaleSeconds: 0,
      stormLikers: 60,
      scanItems: 0,
      hostileSeconds: 0,
      peer: { seconds: 0, rounds: 1 },
      prioritySeconds: 0,
      // The floors: one short round, in fresh processes like the instances'.
      floors: { seconds: 1, rounds: 1, warmupSeconds: 0 },
      instances: { upTo: 2, seconds: 1, rebalance: false },
    }).finally(() => {
      if (schedule === undefined) delete process.env.BACKLOG_SCHEDULE;
      else process.env.BACKLOG_SCHEDULE = schedule;
    });
    const table = formatTable(report);
    // One and two instances on one account: load through both, a new post followed to every Q6.
    expect(report.instances?.map((figure) => figure.instances)).toEqual([1, 2]);
    for (const figure of report.instances!) {
      expect(figure.requestsPerSecond).toBeGreaterThan(0);
      expect(figure.visibleMs.p50).toBeLessThanOrEqual(figure.visibleMs.max);
      expect(figure.rebalanceSeconds).toBeUndefined();
    }
    expect(table).toMatch(/\| 2 \| \d+ \| \d+ ms \|/);
    // Cold start: fresh processes load the bundle and the tsc output.
    const cold = report.coldStart!;
    expect(cold.samples).toBe(2);
    expect(cold.bundled.p50).toBeGreaterThan(0);
    expect(cold.bundled.p50).toBeLessThanOrEqual(cold.bundled.p95);
    expect(cold.unbundled.p50).toBeGreaterThan(0);
    expect(cold.bundled.bytes).toBeGreaterThan(100_000);
    // With a connection string Azure Monitor's exporters load as well: never faster than without.
    expect(cold.withTelemetry.p50).toBeGreaterThan(0);
    expect(cold.withTelemetry.bytes).toBeGreaterThan(100_000);
    expect(table).toContain("Application Insights connection string");
    // Idle: the local system watched with no traffic uses some CPU, less than a whole core.
    expect(report.idle!.seconds).toBeGreaterThanOrEqual(1.9); // the watched window, as the clock measured it (1.99992 once)
    expect(report.idle!.percentOfCore).toBeGreaterThan(0);
    expect(report.idle!.percentOfCore).toBeLessThan(100);
    expect(table).toContain("idle: npm start with no traffic");
    expect(table).toContain("cold start");
    // Each route beside its floor, the writes too: both loaded, each request's CPU counted.
    expect(report.floors!.routes.map((route) => route.request)).toEqual([
      "Q1 get user",
      "Q2 get post",
      "Q3 user's posts",
      "Q4 comments",
      "Q5 likes",
      "Q6 feed",
      "C1 edit user",
      "C2 create post",
      "C3 comment",
      "C4 like",
    ]);
    for (const route of report.floors!.routes)
      for (const side of [route.app, route.floor]) {
        expect(side.requestsPerSecond, route.request).toBeGreaterThan(0);
        expect(side.cpuMsPerRequest, route.request).toBeGreaterThan(0);
      }
    expect(table).toContain("| Q6 feed |");
    expect(table).toContain("| C4 like |");
  }, 300_000);

  it("puts the cold start beside a baseline's bundle, built by the baseline's own bundler", async () => {
    // Today's checkout as its own baseline: the machinery without installing another one.
    const root = join(__dirname, "../..");
    const cold = await measureColdStart(root, 1, { ref: "HEAD", directory: root });
    expect(cold.baseline).toMatchObject({ ref: "HEAD" });
    expect(cold.baseline!.p50).toBeGreaterThan(0);
    expect(cold.baseline!.bytes).toBe(cold.bundled.bytes);
    const table = formatTable({ meta: {}, rows: [], apiOverhead: [], coldStart: cold } as unknown as Report);
    expect(table).toContain("| HEAD: p50 / p95 | ratio | target |");
    expect(table).toMatch(
      /beside HEAD's bundle \([\d.]+ MiB, azure-monitor\.js \d+ KiB against \d+\) with the same setting \| \d+ \/ \d+ ms \| \d+ \/ \d+ ms \| \d+\.\d\d \| under 150 ms/,
    );
  }, 120_000);
});
