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

/** An item's operations by method, named as the Cosmos DB semantic conventions (and the .NET SDK's spans) name them. */
const ITEM_OPERATIONS: Record<string, string> = { GET: "read_item", PUT: "replace_item", DELETE: "delete_item", PATCH: "patch_item" };

/** Other resources' operations by method and resource type, named the same way. */
const RESOURCE_OPERATIONS: Record<string, string> = {
  "GET colls": "read_container",
  "POST colls": "create_container",
  "PUT colls": "replace_container",
  "DELETE colls": "delete_container",
  "GET dbs": "read_database",
  "POST dbs": "create_database",
  "GET pkranges": "read_partition_key_ranges",
  "GET sprocs": "read_stored_procedure",
  "POST sprocs": "create_stored_procedure",
  "PUT sprocs": "replace_stored_procedure",
  "GET triggers": "read_trigger",
  "POST triggers": "create_trigger",
  "PUT triggers": "replace_trigger",
  "GET offers": "read_throughput",
  "POST offers": "read_throughput",
  "PUT offers": "replace_throughput",
  "GET account": "read_account",
};

/**
 * What a request to Cosmos DB does, named as the Cosmos DB semantic conventions name it
 * (`read_item`, `query_items`, `execute_stored_procedure`...), and what it addresses: the
 * database (`db.namespace`) and the container.
 */
function cosmosOperation(request: PipelineRequest): { namespace: string; container: string; operation: string } {
  const segments = new URL(request.url).pathname.split("/").filter(Boolean);
  const namespace = segments[0] === "dbs" && segments[1] ? decodeURIComponent(segments[1]) : "";
  const container = segments[2] === "colls" && segments[3] ? decodeURIComponent(segments[3]) : "(account)";
  const named = (operation: string) => ({ namespace, container, operation });
  const resource = segments[4];
  const header = (name: string) => request.headers.get(name)?.toLowerCase() === "true";
  if (resource === "sprocs" && request.method === "POST" && segments[5]) return named("execute_stored_procedure");
  if (resource !== "docs") {
    const type = resource ?? (segments.length % 2 === 1 ? segments[segments.length - 1] : segments[segments.length - 2]) ?? "account";
    return named(RESOURCE_OPERATIONS[`${request.method} ${type}`] ?? `${request.method.toLowerCase()}_${type}`);
  }
  if (segments[5]) return named(ITEM_OPERATIONS[request.method] ?? `${request.method.toLowerCase()}_item`);
  if (request.method === "GET") return named(request.headers.get("a-im") ? "query_change_feed" : "read_all_items");
  // The query plan is a request of its own (no request units): named apart so its count does not double the queries'.
  if (header("x-ms-cosmos-is-query-plan-request")) return named("query_plan");
  if (header("x-ms-documentdb-isquery")) return named("query_items");
  if (header("x-ms-cosmos-is-batch-request")) return named(header("x-ms-cosmos-batch-atomic") ? "execute_batch" : "bulk");
  return named(header("x-ms-documentdb-is-upsert") ? "upsert_item" : "create_item");
}

/**
 * The SDK's own HTTP client (a public SDK option), wrapped: every request Cosmos DB answers is
 * a span and a metric (container, operation, status, request charge), and is counted for the
 * measurement it runs in. A retry after a 429 or 503 is a request of its own, a sibling span.
 */
export function meteredHttpClient(inner: HttpClient = createDefaultHttpClient()): HttpClient {
  return {
    sendRequest(request) {
      const { namespace, container, operation } = cosmosOperation(request);
      const attributes = {
        [ATTRIBUTES.dbSystem]: "azure.cosmosdb",
        [ATTRIBUTES.dbNamespace]: namespace,
        [ATTRIBUTES.container]: container,
        [ATTRIBUTES.operation]: operation,
      };
      return inSpan(`${operation} ${container}`, { kind: SpanKind.CLIENT, attributes }, async (span) => {
        const { response, record, seconds } = await measured(inner, request);
        // A partition key is a user id (or holds one, `username:<name>`): pseudonymized as the caller is; the same key, the same pseudonym.
        if (record.partitionKey) span.setAttribute(ATTRIBUTES.partitionKey, pseudonymOf(record.partitionKey));
        const status = String(response.status);
        span.setAttributes({
          [ATTRIBUTES.cosmosStatus]: status,
          [ATTRIBUTES.requestCharge]: record.requestCharge,
          [ATTRIBUTES.subStatus]: Number(response.headers.get("x-ms-substatus") ?? 0),
          [ATTRIBUTES.activityId]: response.headers.get("x-ms-activity-id") ?? "",
        });
        const errorType = failed(response.status) ? status : undefined;
        if (errorType) {
          span.setStatus({ code: SpanStatusCode.ERROR, message: `Cosmos DB answered ${status}` });
          span.setAttribute(ATTRIBUTES.errorType, errorType);
        }
        recordCosmosRequest(attributes, { status, errorType, seconds, charge: record.requestCharge });
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
  let ended: number;
  try {
    response = await inner.sendRequest(request);
  } finally {
    ended = performance.now();
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
  return { response, record, seconds: (ended - started) / 1000 };
}

function retrievedDocuments(metrics: string | undefined): number | undefined {
  const match = metrics ? /(?:^|;)retrievedDocumentCount=(\d+)/.exec(metrics) : null;
  return match ? Number(match[1]) : undefined;
}
