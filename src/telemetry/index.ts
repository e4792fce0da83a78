import { createHash } from "node:crypto";
import type { HttpClient, PipelineRequest, PipelineResponse } from "@azure/core-rest-pipeline";
import {
  context,
  metrics,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Link,
  type Meter,
  type Span,
  type SpanContext,
} from "@opentelemetry/api";
import { suppressTracing } from "./opentelemetry-core";
import { ATTRIBUTES, METRICS, SCOPE } from "./names";

export { ATTRIBUTES, METRICS, SCOPE } from "./names";

/**
 * Telemetry through the OpenTelemetry API only: api, store and pipeline record here, and each
 * host decides at start-up where it goes (Azure Monitor in Azure, OTLP and the operations page
 * locally). Until a host registers providers, every call is a no-op.
 */
export function tracer() {
  return trace.getTracer(SCOPE);
}

/**
 * Runs `work` in a new active span (a child of `parent`, or of the active span); an error marks
 * the span and is rethrown (it is logged where it is handled, once).
 */
export async function inSpan<T>(
  name: string,
  { parent, ...options }: { kind?: SpanKind; attributes?: Attributes; links?: Link[]; parent?: Context },
  work: (span: Span) => Promise<T>,
): Promise<T> {
  return tracer().startActiveSpan(name, options, parent ?? context.active(), async (span) => {
    try {
      return await work(span);
    } catch (error) {
      span.recordException(error as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** The trace id of the active span, for log lines (undefined outside a trace). */
export function traceId(): string | undefined {
  const context = trace.getActiveSpan()?.spanContext();
  return context && trace.isSpanContextValid(context) ? context.traceId : undefined;
}

/**
 * The item with the trace context of the write that stores it (its W3C `traceparent`), so the
 * change feed batch the write causes joins that trace: a document is the only thing that travels
 * from a request to the change feed. Outside a trace, a stale context is dropped.
 */
export function withTraceOrigin<T extends object>(item: T): T {
  const { traceparent: _stale, ...rest } = item as T & { traceparent?: unknown };
  const traceparent = activeTraceparent();
  return (traceparent ? { ...rest, traceparent } : rest) as T;
}

/** The W3C `traceparent` of the active span (undefined outside a trace, or when no host installed telemetry). */
export function activeTraceparent(): string | undefined {
  const carrier: { traceparent?: string } = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent;
}

/** The span context a document was written in, from the `traceparent` it carries (undefined when none or malformed). */
export function traceOriginOf(document: unknown): SpanContext | undefined {
  const traceparent = (document as { traceparent?: unknown } | null)?.traceparent;
  if (typeof traceparent !== "string") return undefined;
  const origin = trace.getSpanContext(propagation.extract(ROOT_CONTEXT, { traceparent }));
  return origin && trace.isSpanContextValid(origin) ? origin : undefined;
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
 * A Cosmos DB answer that is a failure of the call (throttled, timed out, unavailable, refused),
 * not an outcome the app asks about: a point read's 404, a create's 409 and a condition's 412
 * are answers it acts on.
 */
const failed = (status: number) => status >= 400 && status !== 404 && status !== 409 && status !== 412;

/**
 * The SDK's HTTP client (a public SDK option), wrapped: every request Cosmos DB answers is a
 * span and two metric records (container, operation, status, request charge). A retry after a
 * 429 or 503 is a request of its own, a sibling span.
 */
export function tracedHttpClient(inner: HttpClient): HttpClient {
  return {
    sendRequest(request) {
      const { namespace, container, operation } = cosmosOperation(request);
      const attributes = {
        [ATTRIBUTES.dbSystem]: "azure.cosmosdb",
        [ATTRIBUTES.dbNamespace]: namespace,
        [ATTRIBUTES.container]: container,
        [ATTRIBUTES.operation]: operation,
      };
      // Not made active: nothing under the SDK's HTTP call starts spans, and an active span costs a context switch per request.
      const span = tracer().startSpan(`${operation} ${container}`, { kind: SpanKind.CLIENT, attributes });
      const started = performance.now();
      return inner.sendRequest(request).then(
        (response) => {
          const charge = Number(response.headers.get("x-ms-request-charge") ?? 0) || 0;
          const status = String(response.status);
          const errorType = failed(response.status) ? status : undefined;
          if (span.isRecording()) describeCosmosAnswer(span, request, response, status, charge, errorType);
          span.end();
          recordCosmosRequest(attributes, { status, errorType, seconds: (performance.now() - started) / 1000, charge });
          return response;
        },
        (error: unknown) => {
          span.recordException(error as Error);
          span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
          span.end();
          throw error;
        },
      );
    },
  };
}

/** A Cosmos DB request's span, told what the service answered (only for a span that is recorded). */
function describeCosmosAnswer(span: Span, request: PipelineRequest, response: PipelineResponse, status: string, charge: number, errorType?: string): void {
  // A partition key is a user id (or holds one, `username:<name>`): pseudonymized as the caller is; the same key, the same pseudonym.
  const partitionKey = request.headers.get("x-ms-documentdb-partitionkey");
  if (partitionKey) span.setAttribute(ATTRIBUTES.partitionKey, pseudonymOf(partitionKey));
  span.setAttributes({
    [ATTRIBUTES.cosmosStatus]: status,
    [ATTRIBUTES.requestCharge]: charge,
    [ATTRIBUTES.subStatus]: Number(response.headers.get("x-ms-substatus") ?? 0),
    [ATTRIBUTES.activityId]: response.headers.get("x-ms-activity-id") ?? "",
  });
  if (errorType) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: `Cosmos DB answered ${status}` });
    span.setAttribute(ATTRIBUTES.errorType, errorType);
  }
}

/** Pseudonyms already worked out: the same few callers and keys come again and again. */
const pseudonyms = new Map<string, string>();
const PSEUDONYMS_KEPT = 10_000;

/** A caller's id as telemetry may carry it: hashed, so traces never hold who it was. */
export function pseudonymOf(userId: string): string {
  let pseudonym = pseudonyms.get(userId);
  if (pseudonym === undefined) {
    if (pseudonyms.size >= PSEUDONYMS_KEPT) pseudonyms.clear();
    pseudonym = createHash("sha256").update(`blog-caller:${userId}`).digest("hex").slice(0, 16);
    pseudonyms.set(userId, pseudonym);
  }
  return pseudonym;
}

/** A change feed consumer's position on one lease, as the estimator measures it. */
export interface LagReading {
  consumer: string;
  lease: string;
  /** How long the oldest change not yet handed to the consumer has waited. */
  seconds: number;
  /** Changes not yet handed to it (an estimate from the range's LSNs, as the .NET estimator makes it). */
  items: number;
}

/**
 * Runs `work` with tracing suppressed: measurements (the change feed estimator) add no spans,
 * while the metrics their Cosmos DB requests record still count them.
 */
export function untraced<T>(work: () => T): T {
  return context.with(suppressTracing(context.active()), work);
}

/** The HTTP and database conventions' bucket boundaries for durations in seconds. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

function createInstruments(meter: Meter) {
  return {
    requestCharge: meter.createHistogram(METRICS.requestCharge, { unit: "{request_unit}", description: "Request units of each Cosmos DB request" }),
    cosmosDuration: meter.createHistogram(METRICS.cosmosDuration, {
      unit: "s",
      description: "Duration of each Cosmos DB request",
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    }),
    routeCharge: meter.createHistogram(METRICS.routeCharge, { unit: "{request_unit}", description: "Request units of each API request" }),
    httpDuration: meter.createHistogram(METRICS.httpDuration, {
      unit: "s",
      description: "Duration of each API request",
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    }),
    changeFeedItems: meter.createCounter(METRICS.changeFeedItems, { unit: "{item}", description: "Documents handed to change feed consumers" }),
    orchestrations: meter.createCounter(METRICS.orchestrations, { unit: "{instance}", description: "Orchestrations by outcome" }),
    likeBatchSize: meter.createHistogram(METRICS.likeBatchSize, { unit: "{like}", description: "Likes and unlikes per stored procedure call" }),
    feedCache: meter.createCounter(METRICS.feedCache, { unit: "{lookup}", description: "Q6 micro-cache lookups" }),
    lagSeconds: meter.createGauge(METRICS.changeFeedLagSeconds, {
      unit: "s",
      description: "How long the oldest change not yet handed to a change feed consumer has waited",
    }),
    longRunning: meter.createGauge(METRICS.longRunningOrchestrations, { unit: "{instance}", description: "Orchestrations running for more than 30 minutes" }),
    lagItems: meter.createGauge(METRICS.changeFeedLagItems, { unit: "{item}", description: "Changes not yet handed to a change feed consumer" }),
  };
}

let bound: { provider: unknown; instruments: ReturnType<typeof createInstruments> } | undefined;

/** The instruments of the meter provider registered now (a host registers one at start-up; tests register their own). */
function instruments() {
  const provider = metrics.getMeterProvider();
  if (bound?.provider !== provider) bound = { provider, instruments: createInstruments(provider.getMeter(SCOPE)) };
  return bound.instruments;
}

/** One Cosmos DB request: `operation` is its span's attributes (system, database, container, operation). */
export function recordCosmosRequest(operation: Attributes, outcome: { status: string; errorType?: string; seconds: number; charge: number }): void {
  const attributes = { ...operation, [ATTRIBUTES.cosmosStatus]: outcome.status, ...(outcome.errorType ? { [ATTRIBUTES.errorType]: outcome.errorType } : {}) };
  instruments().requestCharge.record(outcome.charge, attributes);
  instruments().cosmosDuration.record(outcome.seconds, attributes);
}

/** One API request, with the HTTP conventions' attributes (a 5xx is an error: `error.type` is its status). */
export function recordHttpRequest(request: { route: string; method: string; scheme: string; status: number; seconds: number; charge: number }): void {
  const route = { [ATTRIBUTES.route]: request.route, [ATTRIBUTES.method]: request.method };
  instruments().httpDuration.record(request.seconds, {
    ...route,
    [ATTRIBUTES.scheme]: request.scheme,
    [ATTRIBUTES.status]: request.status,
    ...(request.status >= 500 ? { [ATTRIBUTES.errorType]: String(request.status) } : {}),
  });
  instruments().routeCharge.record(request.charge, route);
}

export function recordChangeFeedItems(consumer: string, items: number): void {
  instruments().changeFeedItems.add(items, { [ATTRIBUTES.consumer]: consumer });
}

export type OrchestrationOutcome = "started" | "restarted" | "completed" | "failed" | "retrying";

export function recordOrchestration(name: string, outcome: OrchestrationOutcome): void {
  instruments().orchestrations.add(1, { [ATTRIBUTES.orchestration]: name, [ATTRIBUTES.outcome]: outcome });
}

/** The estimator's readings: the lag gauges, per consumer and lease. */
export function recordChangeFeedLag(readings: readonly LagReading[]): void {
  for (const reading of readings) {
    const attributes = { [ATTRIBUTES.consumer]: reading.consumer, [ATTRIBUTES.lease]: reading.lease };
    instruments().lagSeconds.record(reading.seconds, attributes);
    instruments().lagItems.record(reading.items, attributes);
  }
}

/** The backlog timer's count of orchestrations running too long, per name. */
export function recordLongRunningOrchestrations(counts: Readonly<Record<string, number>>): void {
  for (const [name, count] of Object.entries(counts)) instruments().longRunning.record(count, { [ATTRIBUTES.orchestration]: name });
}

export function recordLikeBatch(size: number): void {
  instruments().likeBatchSize.record(size);
}

export function recordFeedCache(hit: boolean): void {
  instruments().feedCache.add(1, { [ATTRIBUTES.cacheResult]: hit ? "hit" : "miss" });
}
