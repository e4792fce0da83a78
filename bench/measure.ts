import { setTimeout as sleep } from "node:timers/promises";
import { measureCosmos, type CosmosRequest } from "../src/store/metering";

/** What one call cost, from the requests the SDK sent (counted by the metered HTTP client). */
export interface CallCost {
  ms: number;
  requests: number;
  queryPlans: number;
  partitions: number;
  itemsRead: number;
  requestCharge: number;
}

export interface Summary {
  calls: number;
  p50: number;
  p95: number;
  p99: number;
  /** Means per call. */
  requests: number;
  queryPlans: number;
  partitions: number;
  itemsRead: number;
  requestCharge: number;
}

/** Logical partitions per container, so a cross-partition query counts as touching all of them. */
export type PartitionCounts = Record<string, number>;

const containerOf = (path: string) => /\/colls\/([^/]+)/.exec(path)?.[1] ?? "?";

export function costOf(requests: CosmosRequest[], ms: number, partitionCounts: PartitionCounts): CallCost {
  const data = requests.filter((r) => !r.isQueryPlan);
  const touched = new Set<string>();
  let crossPartition = 0;
  for (const request of data) {
    const container = containerOf(request.path);
    if (request.partitionKey !== undefined) touched.add(`${container}|${request.partitionKey}`);
    else if (request.isQuery && !touched.has(`${container}|*`)) {
      touched.add(`${container}|*`);
      crossPartition += partitionCounts[container] ?? 1;
    }
  }
  const pointReads = data.filter((r) => r.method === "GET" && /\/docs\/[^/]+$/.test(r.path) && r.status === 200).length;
  return {
    ms,
    requests: requests.length,
    queryPlans: requests.length - data.length,
    partitions: [...touched].filter((key) => !key.endsWith("|*")).length + crossPartition,
    itemsRead: pointReads + data.reduce((sum, r) => sum + (r.retrievedDocumentCount ?? 0), 0),
    requestCharge: requests.reduce((sum, r) => sum + r.requestCharge, 0),
  };
}

/** Runs `call` once and measures it. */
export async function measureCall(call: () => Promise<unknown>, partitionCounts: PartitionCounts): Promise<CallCost> {
  const started = performance.now();
  const { usage } = await measureCosmos(call, { queryMetrics: true });
  return costOf(usage.requests, performance.now() - started, partitionCounts);
}

/** Rounds a ratio between two alternating systems is judged on: one short round is a glimpse, not a figure. */
export const JUDGED_ROUNDS = 3;

/** The middle value of a few rounds' figures (the upper middle one of an even count). */
export const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** A figure for a table: fixed decimals, "inf" for what is not finite (a ratio over 0). */
export const fixed = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : "inf");

/** Nearest-rank percentile of sorted values. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

export function summarize(costs: CallCost[]): Summary {
  const sorted = costs.map((c) => c.ms).sort((a, b) => a - b);
  const mean = (pick: (c: CallCost) => number) => costs.reduce((sum, c) => sum + pick(c), 0) / Math.max(1, costs.length);
  return {
    calls: costs.length,
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    requests: mean((c) => c.requests),
    queryPlans: mean((c) => c.queryPlans),
    partitions: mean((c) => c.partitions),
    itemsRead: mean((c) => c.itemsRead),
    requestCharge: mean((c) => c.requestCharge),
  };
}

/** Milliseconds until `check` holds, asked every `everyMs`; throws `what` did not happen after `limitMs`. */
export async function msUntil(check: () => Promise<boolean>, options: { everyMs: number; limitMs: number; what: string }): Promise<number> {
  const started = performance.now();
  while (!(await check())) {
    if (performance.now() - started > options.limitMs) throw new Error(`${options.what} not within ${options.limitMs} ms`);
    await sleep(options.everyMs);
  }
  return performance.now() - started;
}
