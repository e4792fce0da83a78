import type { Attributes } from "@opentelemetry/api";
import type { DataPoint, Histogram, ResourceMetrics } from "@opentelemetry/sdk-metrics";
import { ATTRIBUTES, METRICS, SCOPE } from "../src/telemetry/names";
import type { OpsFigures, RouteFigures, RouteWindow } from "../src/telemetry/ops-figures";

export type { OpsFigures } from "../src/telemetry/ops-figures";

type Point = DataPoint<number | Histogram>;

/** How often the history takes a reading, and how much of it is kept: five minutes. */
export const STEP_MS = 10_000;
const KEPT_MS = 5 * 60_000;

/** The data points of one of the app's metrics. */
function pointsOf(metrics: ResourceMetrics, name: string): Point[] {
  return metrics.scopeMetrics
    .filter((scope) => scope.scope.name === SCOPE)
    .flatMap((scope) => scope.metrics.filter((m) => m.descriptor.name === name).flatMap((m) => m.dataPoints as Point[]));
}

const attribute = (attributes: Attributes, name: string) => String(attributes[name] ?? "");
const sumOf = (point: Point) => (typeof point.value === "number" ? point.value : (point.value.sum ?? 0));
const countOf = (point: Point) => (typeof point.value === "number" ? 0 : point.value.count);
const total = (points: Point[], where: (a: Attributes) => boolean = () => true) =>
  points.filter((p) => where(p.attributes)).reduce((sum, p) => sum + sumOf(p), 0);
const histogramCount = (points: Point[], where: (a: Attributes) => boolean = () => true) =>
  points.filter((p) => where(p.attributes)).reduce((sum, p) => sum + countOf(p), 0);

/** One route and method's duration histogram, cumulative: its bucket counts and how many were 5xx. */
interface RouteReading {
  boundaries: number[];
  counts: number[];
  requests: number;
  errors: number;
  requestUnits: number;
}

/** What one reading keeps of the cumulative metrics: enough to subtract two readings. */
interface Reading {
  at: number;
  routes: Map<string, RouteReading>;
  apiRequestUnits: number;
  allRequestUnits: number;
}

const routeKey = (method: string, route: string) => `${method} ${route}`;

function readingOf(metrics: ResourceMetrics, at: number): Reading {
  const routes = new Map<string, RouteReading>();
  for (const point of pointsOf(metrics, METRICS.httpDuration)) {
    if (typeof point.value === "number") continue;
    const key = routeKey(attribute(point.attributes, ATTRIBUTES.method), attribute(point.attributes, ATTRIBUTES.route));
    const { boundaries, counts } = point.value.buckets;
    const reading = routes.get(key) ?? { boundaries, counts: counts.map(() => 0), requests: 0, errors: 0, requestUnits: 0 };
    counts.forEach((count, i) => (reading.counts[i] += count));
    reading.requests += point.value.count;
    if (Number(point.attributes[ATTRIBUTES.status]) >= 500) reading.errors += point.value.count;
    routes.set(key, reading);
  }
  for (const point of pointsOf(metrics, METRICS.routeCharge)) {
    const reading = routes.get(routeKey(attribute(point.attributes, ATTRIBUTES.method), attribute(point.attributes, ATTRIBUTES.route)));
    if (reading) reading.requestUnits += sumOf(point);
  }
  return { at, routes, apiRequestUnits: total(pointsOf(metrics, METRICS.routeCharge)), allRequestUnits: total(pointsOf(metrics, METRICS.requestCharge)) };
}

/** The `q` quantile of a histogram's bucket counts, in ms, interpolated within its bucket (null when empty). */
export function quantileMs(boundaries: number[], counts: number[], q: number): number | null {
  const all = counts.reduce((sum, count) => sum + count, 0);
  if (all === 0) return null;
  const rank = q * all;
  let below = 0;
  for (let i = 0; i < counts.length; i++) {
    if (counts[i] > 0 && below + counts[i] >= rank) {
      // The overflow bucket has no upper bound: its lower bound is the most that can be said.
      if (i >= boundaries.length) return boundaries[boundaries.length - 1] * 1000;
      const low = i === 0 ? 0 : boundaries[i - 1];
      return (low + ((boundaries[i] - low) * (rank - below)) / counts[i]) * 1000;
    }
    below += counts[i];
  }
  return boundaries[boundaries.length - 1] * 1000;
}

/** One route between two readings (`before` may lack it: it had no requests then). */
function windowOf(now: RouteReading, before: RouteReading | undefined, seconds: number): RouteWindow {
  const counts = now.counts.map((count, i) => count - (before?.counts[i] ?? 0));
  const requests = now.requests - (before?.requests ?? 0);
  const errors = now.errors - (before?.errors ?? 0);
  return {
    requests,
    perSecond: seconds > 0 ? requests / seconds : 0,
    p50Ms: quantileMs(now.boundaries, counts, 0.5),
    p95Ms: quantileMs(now.boundaries, counts, 0.95),
    p99Ms: quantileMs(now.boundaries, counts, 0.99),
    errorRate: requests > 0 ? errors / requests : 0,
  };
}

/**
 * The operations page's memory: a reading of the cumulative metrics every STEP_MS for the last
 * five minutes, so the page shows rates, percentiles and error rates over the last one and five
 * minutes, and a small time series, instead of totals since the start.
 */
export class OpsHistory {
  private readonly readings: Reading[] = [];

  /** Keeps a reading taken at `at` (ms), and drops those older than five minutes and a step. */
  keep(metrics: ResourceMetrics, at: number): void {
    this.readings.push(readingOf(metrics, at));
    while (this.readings.length > 0 && this.readings[0].at < at - KEPT_MS - STEP_MS) this.readings.shift();
  }

  /** The oldest reading no older than `ms` before `at` (the start, while the history is shorter). */
  private since(at: number, ms: number): Reading | undefined {
    return this.readings.find((reading) => reading.at >= at - ms - STEP_MS / 2);
  }

  /** The figures now: `metrics` read at `at`, against the history. */
  figures(metrics: ResourceMetrics, at: number): Pick<OpsFigures, "routes" | "requestUnits" | "requestsPerSecond"> {
    const now = readingOf(metrics, at);
    const minuteAgo = this.since(at, 60_000);
    const fiveAgo = this.since(at, KEPT_MS);
    const seconds = (from: Reading | undefined) => (from ? (at - from.at) / 1000 : 0);
    // The time series: one point per step of the last five minutes, and the step under way once it is half done.
    const steps = this.readings.filter((reading) => reading.at >= at - KEPT_MS - STEP_MS / 2);
    const last = steps[steps.length - 1];
    const points = (last && at - last.at >= STEP_MS / 2 ? [...steps, now] : steps).slice(-(KEPT_MS / STEP_MS + 1));
    const routes: RouteFigures[] = [...now.routes].map(([key, route]) => {
      const [method, path] = [key.slice(0, key.indexOf(" ")), key.slice(key.indexOf(" ") + 1)];
      const last5m = windowOf(route, fiveAgo?.routes.get(key), seconds(fiveAgo));
      const units = route.requestUnits - (fiveAgo?.routes.get(key)?.requestUnits ?? 0);
      const series = points.slice(1).map((reading, i) => {
        const [later, earlier] = [reading.routes.get(key), points[i].routes.get(key)];
        return ((later?.requests ?? 0) - (earlier?.requests ?? 0)) / ((reading.at - points[i].at) / 1000);
      });
      return {
        method,
        route: path,
        last1m: windowOf(route, minuteAgo?.routes.get(key), seconds(minuteAgo)),
        last5m,
        series,
        requestUnitsPerRequest: last5m.requests > 0 ? units / last5m.requests : 0,
      };
    });
    routes.sort((a, b) => b.last5m.requests - a.last5m.requests || a.route.localeCompare(b.route));
    return {
      routes,
      requestsPerSecond: routes.reduce((sum, route) => sum + route.last1m.perSecond, 0),
      requestUnits: {
        api: now.apiRequestUnits,
        background: Math.max(0, now.allRequestUnits - now.apiRequestUnits),
        apiLast5m: now.apiRequestUnits - (fiveAgo?.apiRequestUnits ?? 0),
        backgroundLast5m: Math.max(0, now.allRequestUnits - now.apiRequestUnits - ((fiveAgo?.allRequestUnits ?? 0) - (fiveAgo?.apiRequestUnits ?? 0))),
      },
    };
  }
}

/** The figures that are totals or as they stand now: answers by status class, Cosmos DB, lag, orchestrations, likes, the cache. */
export function currentFigures(metrics: ResourceMetrics): Omit<OpsFigures, "at" | "routes" | "requestUnits" | "requestsPerSecond" | "attention"> {
  const http = pointsOf(metrics, METRICS.httpDuration);
  const statusClasses: Record<string, number> = {};
  for (const point of http) {
    const statusClass = `${attribute(point.attributes, ATTRIBUTES.status).charAt(0)}xx`;
    statusClasses[statusClass] = (statusClasses[statusClass] ?? 0) + countOf(point);
  }
  const cosmos = pointsOf(metrics, METRICS.cosmosDuration);
  const status = (code: string) => (a: Attributes) => attribute(a, ATTRIBUTES.cosmosStatus) === code;
  const lagItems = pointsOf(metrics, METRICS.changeFeedLagItems);
  const lag = pointsOf(metrics, METRICS.changeFeedLagSeconds).map((p) => {
    const same = lagItems.find(
      (q) => q.attributes[ATTRIBUTES.lease] === p.attributes[ATTRIBUTES.lease] && q.attributes[ATTRIBUTES.consumer] === p.attributes[ATTRIBUTES.consumer],
    );
    return {
      consumer: attribute(p.attributes, ATTRIBUTES.consumer),
      lease: attribute(p.attributes, ATTRIBUTES.lease),
      seconds: Number(p.value),
      items: same ? Number(same.value) : undefined,
    };
  });
  const orchestrations: Record<string, number> = {};
  for (const point of pointsOf(metrics, METRICS.orchestrations)) {
    const outcome = attribute(point.attributes, ATTRIBUTES.outcome);
    orchestrations[outcome] = (orchestrations[outcome] ?? 0) + Number(point.value);
  }
  // The instances by status, from the gauge the local host observes (the same reading telemetry exports).
  const instances: Record<string, number> = {};
  for (const point of pointsOf(metrics, METRICS.orchestrationInstances)) instances[attribute(point.attributes, "status")] = Number(point.value);
  const likes = pointsOf(metrics, METRICS.likeBatchSize);
  const cache = pointsOf(metrics, METRICS.feedCache);
  return {
    requests: histogramCount(http),
    statusClasses,
    cosmos: { requests: histogramCount(cosmos), throttled: histogramCount(cosmos, status("429")), unavailable: histogramCount(cosmos, status("503")) },
    lag,
    orchestrations,
    instances,
    likeBatches: { calls: histogramCount(likes), likes: total(likes) },
    feedCache: { hits: total(cache, (a) => a[ATTRIBUTES.cacheResult] === "hit"), misses: total(cache, (a) => a[ATTRIBUTES.cacheResult] === "miss") },
  };
}
