import { metrics } from "@opentelemetry/api";
import { AggregationTemporality, MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import { describe, expect, it } from "vitest";
import { currentFigures, OpsHistory, quantileMs, STEP_MS } from "../../local/ops";
import { recordCosmosRequest, recordHttpRequest } from "../../src/telemetry";

/** The process's metrics read on demand, cumulative, as the local host's page reads them. */
class Reader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}
const reader = new Reader();
metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
const collect = async () => (await reader.collect()).resourceMetrics;

/** An API request and the Cosmos DB request it made (its request units are in both: the API's are part of all). */
function request(route: string, method: string, seconds: number, status = 200, charge = 1): void {
  recordCosmosRequest({ "db.collection.name": "posts" }, { status: "200", seconds: seconds / 2, charge });
  recordHttpRequest({ route, method, scheme: "http", status, seconds, charge });
}

describe("the operations figures over the last one and five minutes", () => {
  it("reads percentiles from a histogram's buckets, interpolated within the bucket", () => {
    const boundaries = [0.01, 0.1, 1];
    expect(quantileMs(boundaries, [0, 0, 0, 0], 0.5)).toBeNull();
    expect(quantileMs(boundaries, [0, 10, 0, 0], 0.5)).toBeCloseTo(55); // halfway through 10-100 ms
    expect(quantileMs(boundaries, [90, 0, 10, 0], 0.95)).toBeCloseTo(550);
    expect(quantileMs(boundaries, [0, 0, 0, 3], 0.99)).toBe(1000); // past the last boundary: its bound
  });

  it("gives each route and method its rate, percentiles and error rate per window, a time series, and API and background RU apart", async () => {
    const history = new OpsHistory();
    const start = 1_000_000;
    // Six minutes of readings: GET /a slow and failing in the first minutes, fast and sound in the last one.
    for (let step = 0; step <= 36; step++) {
      const at = start + step * STEP_MS;
      if (step > 0 && step <= 30) for (let i = 0; i < 10; i++) request("/a", "GET", 0.4, i === 0 ? 500 : 200, 2);
      if (step > 30) for (let i = 0; i < 20; i++) request("/a", "GET", 0.004, 200, 2);
      if (step > 0) request("/a", "POST", 0.02, 201, 10);
      recordCosmosRequest({ "db.collection.name": "posts" }, { status: "200", seconds: 0.01, charge: 5 }); // background work of the step
      history.keep(await collect(), at);
    }
    const at = start + 36 * STEP_MS;
    const now = history.figures(await collect(), at);
    const get = now.routes.find((r) => r.method === "GET" && r.route === "/a")!;
    const post = now.routes.find((r) => r.method === "POST" && r.route === "/a")!;
    // The last minute: 6 steps of 20 fast requests.
    expect(get.last1m).toMatchObject({ requests: 120, perSecond: 2, errorRate: 0 });
    expect(get.last1m.p99Ms!).toBeLessThan(5);
    // The last five minutes: 24 steps of the slow kind (one in ten failed), then the fast ones.
    expect(get.last5m.requests).toBe(240 + 120);
    expect(get.last5m.errorRate).toBeCloseTo(24 / 360);
    expect(get.last5m.p95Ms!).toBeGreaterThan(250);
    expect(post.last1m).toMatchObject({ requests: 6, errorRate: 0 });
    expect(get.series).toHaveLength(30);
    expect(get.series.slice(-6)).toEqual([2, 2, 2, 2, 2, 2]);
    expect(get.series[0]).toBe(1);
    expect(now.routes[0].method).toBe("GET"); // busiest first
    expect(now.requestsPerSecond).toBeCloseTo(2 + 0.1);
    expect(get.requestUnitsPerRequest).toBe(2);
    expect(now.requestUnits.api).toBe(30 * 10 * 2 + 6 * 20 * 2 + 36 * 10);
    expect(now.requestUnits.background).toBe(37 * 5);
    expect(now.requestUnits.backgroundLast5m).toBe(30 * 5);
    expect(currentFigures(await collect()).statusClasses).toEqual({ "2xx": 30 * 9 + 6 * 20 + 36, "5xx": 30 });
  });
});
