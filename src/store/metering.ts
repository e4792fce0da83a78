import { AsyncLocalStorage } from "node:async_hooks";
import { createDefaultHttpClient, type HttpClient, type PipelineRequest } from "@azure/core-rest-pipeline";

/** One HTTP request the SDK sent to Cosmos DB on behalf of an API call. */
export interface CosmosRequest {
  method: string;
  path: string;
  status: number;
  /** The logical partition the request named (the SDK's partition key header), if any. */
  partitionKey?: string;
  isQueryPlan: boolean;
  isQuery: boolean;
  requestCharge: number;
  /** Items the query read, from Cosmos DB's query metrics (only when requested, see measureCosmos). */
  retrievedDocumentCount?: number;
}

export interface CosmosUsage {
  requests: CosmosRequest[];
  requestCharge: number;
  /** Wall-clock time with at least one request in flight: overlapping requests count once. */
  durationMs: number;
  /** Requests in flight now, and since when the current busy stretch began. */
  inFlight: number;
  busySince: number;
  /** An enclosing measurement (a test or benchmark around an API call) also sees these requests. */
  parent?: CosmosUsage;
  /** Ask Cosmos DB for query metrics on every query (the benchmark counts items read). */
  queryMetrics?: boolean;
}

const current = new AsyncLocalStorage<CosmosUsage>();

/**
 * Runs `work` and records every Cosmos DB request made on its behalf. This feeds the
 * Server-Timing header, the tests that count requests per API call, and the benchmark.
 */
export async function measureCosmos<T>(work: () => Promise<T>, options: { queryMetrics?: boolean } = {}): Promise<{ result: T; usage: CosmosUsage }> {
  const parent = current.getStore();
  const usage: CosmosUsage = {
    requests: [],
    requestCharge: 0,
    durationMs: 0,
    inFlight: 0,
    busySince: 0,
    parent,
    queryMetrics: options.queryMetrics ?? parent?.queryMetrics,
  };
  const result = await current.run(usage, work);
  return { result, usage };
}

/**
 * The SDK's own HTTP client (a public SDK option), wrapped: every request Cosmos DB answers is
 * counted, with its charge and time, for each measurement it runs in (telemetry wraps this
 * client in turn: `tracedHttpClient`).
 */
export function measuredHttpClient(inner: HttpClient = createDefaultHttpClient()): HttpClient {
  return { sendRequest: (request) => measured(inner, request) };
}

/** Sends `request`, counting it (and its charge and time) in every measurement it runs in. */
async function measured(inner: HttpClient, request: PipelineRequest) {
  const isQuery = request.headers.get("x-ms-documentdb-isquery")?.toLowerCase() === "true";
  if (isQuery && current.getStore()?.queryMetrics) request.headers.set("x-ms-documentdb-populatequerymetrics", "true");
  const usages: CosmosUsage[] = [];
  for (let usage = current.getStore(); usage; usage = usage.parent) usages.push(usage);
  const started = performance.now();
  for (const usage of usages) if (usage.inFlight++ === 0) usage.busySince = started;
  let response;
  let ended: number;
  try {
    response = await inner.sendRequest(request);
  } finally {
    ended = performance.now();
    for (const usage of usages) if (--usage.inFlight === 0) usage.durationMs += ended - usage.busySince;
  }
  // Outside any measurement (most requests in Azure) there is nothing to count.
  if (usages.length === 0) return response;
  const charge = Number(response.headers.get("x-ms-request-charge") ?? 0) || 0;
  const record: CosmosRequest = {
    method: request.method,
    path: new URL(request.url).pathname,
    status: response.status,
    partitionKey: request.headers.get("x-ms-documentdb-partitionkey") ?? undefined,
    isQueryPlan: request.headers.get("x-ms-cosmos-is-query-plan-request")?.toLowerCase() === "true",
    isQuery,
    requestCharge: charge,
    retrievedDocumentCount: retrievedDocuments(response.headers.get("x-ms-documentdb-query-metrics")),
  };
  for (const usage of usages) {
    usage.requestCharge += charge;
    usage.requests.push(record);
  }
  return response;
}

function retrievedDocuments(metrics: string | undefined): number | undefined {
  const match = metrics ? /(?:^|;)retrievedDocumentCount=(\d+)/.exec(metrics) : null;
  return match ? Number(match[1]) : undefined;
}
