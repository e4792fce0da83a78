import { AsyncLocalStorage } from "node:async_hooks";
import { createDefaultHttpClient, type HttpClient, type PipelineRequest } from "@azure/core-rest-pipeline";
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { ATTRIBUTES, inSpan, pseudonymOf, recordCosmosRequest } from "../telemetry";

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

const ITEM_OPERATIONS: Record<string, string> = { GET: "read", PUT: "replace", DELETE: "delete", PATCH: "patch" };

/** What a request to Cosmos DB does, in the words of its REST API: read, query, create, upsert, execute, ... */
function cosmosOperation(request: PipelineRequest): { container: string; operation: string } {
  const segments = new URL(request.url).pathname.split("/").filter(Boolean);
  const container = segments[2] === "colls" && segments[3] ? decodeURIComponent(segments[3]) : "(account)";
  const resource = segments[4];
  const header = (name: string) => request.headers.get(name)?.toLowerCase() === "true";
  if (resource === "sprocs" && request.method === "POST" && segments[5]) return { container, operation: "execute" };
  if (resource !== "docs") return { container, operation: `${request.method.toLowerCase()} ${resource ?? segments[segments.length - 2] ?? "account"}` };
  if (segments[5]) return { container, operation: ITEM_OPERATIONS[request.method] ?? request.method.toLowerCase() };
  if (request.method === "GET") return { container, operation: request.headers.get("a-im") ? "change feed" : "read feed" };
  if (header("x-ms-cosmos-is-query-plan-request")) return { container, operation: "query plan" };
  if (header("x-ms-documentdb-isquery")) return { container, operation: "query" };
  if (header("x-ms-cosmos-is-batch-request")) return { container, operation: "batch" };
  return { container, operation: header("x-ms-documentdb-is-upsert") ? "upsert" : "create" };
}

/**
 * The SDK's own HTTP client (a public SDK option), wrapped: every request Cosmos DB answers is
 * a span and a metric (container, operation, status, request charge), and is counted for the
 * measurement it runs in. A retry after a 429 or 503 is a request of its own, a sibling span.
 */
export function meteredHttpClient(inner: HttpClient = createDefaultHttpClient()): HttpClient {
  return {
    sendRequest(request) {
      const { container, operation } = cosmosOperation(request);
      const attributes = { [ATTRIBUTES.dbSystem]: "azure.cosmosdb", [ATTRIBUTES.container]: container, [ATTRIBUTES.operation]: operation };
      return inSpan(`${operation} ${container}`, { kind: SpanKind.CLIENT, attributes }, async (span) => {
        const { response, record } = await measured(inner, request);
        // A partition key is a user id (or holds one, `username:<name>`): pseudonymized as the caller is; the same key, the same pseudonym.
        if (record.partitionKey) span.setAttribute(ATTRIBUTES.partitionKey, pseudonymOf(record.partitionKey));
        span.setAttributes({
          [ATTRIBUTES.cosmosStatus]: response.status,
          [ATTRIBUTES.requestCharge]: record.requestCharge,
          [ATTRIBUTES.subStatus]: Number(response.headers.get("x-ms-substatus") ?? 0),
          [ATTRIBUTES.activityId]: response.headers.get("x-ms-activity-id") ?? "",
        });
        if (failed(response.status)) {
          span.setStatus({ code: SpanStatusCode.ERROR, message: `Cosmos DB answered ${response.status}` });
          span.setAttribute(ATTRIBUTES.errorType, String(response.status));
        }
        recordCosmosRequest({ container, operation, status: response.status, charge: record.requestCharge });
        return response;
      });
    },
  };
}

/**
 * A Cosmos DB answer that is a failure of the call (throttled, timed out, unavailable, refused),
 * not an outcome the app asks about: a point read's 404, a create's 409 and a condition's 412
 * are answers it acts on.
 */
const failed = (status: number) => status >= 400 && status !== 404 && status !== 409 && status !== 412;

/** Sends `request`, counting it (and its charge and time) in every measurement it runs in; the response, and the request as counted. */
async function measured(inner: HttpClient, request: PipelineRequest) {
  const isQuery = request.headers.get("x-ms-documentdb-isquery")?.toLowerCase() === "true";
  if (isQuery && current.getStore()?.queryMetrics) request.headers.set("x-ms-documentdb-populatequerymetrics", "true");
  const usages: CosmosUsage[] = [];
  for (let usage = current.getStore(); usage; usage = usage.parent) usages.push(usage);
  const started = performance.now();
  for (const usage of usages) if (usage.inFlight++ === 0) usage.busySince = started;
  let response;
  try {
    response = await inner.sendRequest(request);
  } finally {
    const ended = performance.now();
    for (const usage of usages) if (--usage.inFlight === 0) usage.durationMs += ended - usage.busySince;
  }
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
  return { response, record };
}

function retrievedDocuments(metrics: string | undefined): number | undefined {
  const match = metrics ? /(?:^|;)retrievedDocumentCount=(\d+)/.exec(metrics) : null;
  return match ? Number(match[1]) : undefined;
}
