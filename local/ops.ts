import type { Attributes } from "@opentelemetry/api";
import type { DataPoint, Histogram, ResourceMetrics } from "@opentelemetry/sdk-metrics";
import { ATTRIBUTES, METRICS, SCOPE } from "../src/telemetry/names";
import type { OpsFigures } from "../src/telemetry/ops-figures";

export type { OpsFigures } from "../src/telemetry/ops-figures";

type Point = DataPoint<number | Histogram>;

/** The data points of one of the app's metrics. */
function pointsOf(metrics: ResourceMetrics, name: string): Point[] {
  return metrics.scopeMetrics
    .filter((scope) => scope.scope.name === SCOPE)
    .flatMap((scope) => scope.metrics.filter((m) => m.descriptor.name === name).flatMap((m) => m.dataPoints as Point[]));
}

const attribute = (attributes: Attributes, name: string) => String(attributes[name] ?? "");
const total = (points: Point[], where: (a: Attributes) => boolean = () => true) =>
  points.filter((p) => where(p.attributes)).reduce((sum, p) => sum + (typeof p.value === "number" ? p.value : (p.value.sum ?? 0)), 0);
const histogramCount = (points: Point[]) => points.reduce((sum, p) => sum + (typeof p.value === "number" ? 0 : p.value.count), 0);

/** Reads figures from collected metrics; `previous` (the last reading) gives the request rate. */
export function opsFigures(metrics: ResourceMetrics, previous?: { at: number; requests: number }, now = Date.now()): OpsFigures {
  const http = pointsOf(metrics, METRICS.httpRequests);
  const requests = total(http);
  const statusClasses: Record<string, number> = {};
  for (const point of http)
    statusClasses[attribute(point.attributes, ATTRIBUTES.statusClass)] =
      (statusClasses[attribute(point.attributes, ATTRIBUTES.statusClass)] ?? 0) + Number(point.value);
  const charges = pointsOf(metrics, METRICS.routeCharge);
  const durations = pointsOf(metrics, METRICS.httpDuration);
  const routeNames = [...new Set(charges.map((p) => attribute(p.attributes, ATTRIBUTES.route)))];
  const routes = routeNames
    .map((route) => {
      const ofRoute = (a: Attributes) => attribute(a, ATTRIBUTES.route) === route;
      const count = histogramCount(charges.filter((p) => ofRoute(p.attributes)));
      const requestUnits = total(charges, ofRoute);
      const ms = durations.filter((p) => ofRoute(p.attributes));
      return {
        route,
        requests: count,
        requestUnits,
        requestUnitsPerRequest: count ? requestUnits / count : 0,
        meanMs: histogramCount(ms) ? total(ms) / histogramCount(ms) : 0,
      };
    })
    .sort((a, b) => b.requestUnits - a.requestUnits);
  const cosmos = pointsOf(metrics, METRICS.cosmosRequests);
  const status = (code: number) => (a: Attributes) => Number(a[ATTRIBUTES.cosmosStatus]) === code;
  const lagSeconds = pointsOf(metrics, METRICS.changeFeedLagSeconds);
  const lagItems = pointsOf(metrics, METRICS.changeFeedLagItems);
  const lag = lagSeconds.map((p) => {
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
  const seconds = previous ? (now - previous.at) / 1000 : 0;
  return {
    at: new Date(now).toISOString(),
    requestsPerSecond: previous && seconds > 0 ? Math.max(0, requests - previous.requests) / seconds : 0,
    requests,
    statusClasses,
    routes,
    cosmos: {
      requests: total(cosmos),
      requestUnits: total(pointsOf(metrics, METRICS.requestCharge)),
      throttled: total(cosmos, status(429)),
      unavailable: total(cosmos, status(503)),
    },
    lag,
    orchestrations,
    instances,
    likeBatches: { calls: histogramCount(likes), likes: total(likes) },
    feedCache: { hits: total(cache, (a) => a[ATTRIBUTES.cacheResult] === "hit"), misses: total(cache, (a) => a[ATTRIBUTES.cacheResult] === "miss") },
  };
}
