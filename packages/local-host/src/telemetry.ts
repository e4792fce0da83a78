import { context } from "@opentelemetry/api";
import { logs, SeverityNumber } from "@opentelemetry/api-logs";
import { suppressTracing } from "@opentelemetry/core";
import { OTLPMetricExporter as GrpcMetricExporter } from "@opentelemetry/exporter-metrics-otlp-grpc";
import { OTLPMetricExporter as JsonMetricExporter } from "@opentelemetry/exporter-metrics-otlp-http";
import { OTLPMetricExporter as ProtobufMetricExporter } from "@opentelemetry/exporter-metrics-otlp-proto";
import { AggregationTemporality, ConsoleMetricExporter, MetricReader, PeriodicExportingMetricReader, type ResourceMetrics } from "@opentelemetry/sdk-metrics";
import { NodeSDK, resources } from "@opentelemetry/sdk-node";
import { OTLPTraceExporter as GrpcTraceExporter } from "@opentelemetry/exporter-trace-otlp-grpc";
import { OTLPTraceExporter as JsonTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtobufTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { BatchSpanProcessor, ConsoleSpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import type { ReadableSpan, SpanProcessor } from "@opentelemetry/sdk-trace-base";
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";

/**
 * Runs `work` with tracing suppressed: the host's own bookkeeping (change feed polls, lag
 * estimates) adds no spans, while the metrics its Cosmos DB requests record still count them.
 */
export const untraced = <T>(work: () => T): T => context.with(suppressTracing(context.active()), work);

/**
 * One line of the host's log as an OpenTelemetry log record (exported with the spans when an
 * OTLP endpoint is set), in the active context: a line written inside a request or an
 * invocation carries its trace and span ids.
 */
export function emitLog(line: string, severity: "INFO" | "WARN" | "ERROR" = "INFO"): void {
  const severityNumber = severity === "ERROR" ? SeverityNumber.ERROR : severity === "WARN" ? SeverityNumber.WARN : SeverityNumber.INFO;
  logs.getLogger("local-host").emit({ body: line, severityText: severity, severityNumber });
}

/** What the operations page reads: the process's metrics as they are now, on demand. */
class OnDemandReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

/** A trace worth opening for one kind of request: its id, how long it took, when it ended. */
export interface ExemplarTrace {
  traceId: string;
  ms: number;
  endedAt: number;
}

/** How long the slowest request of a kind stays its exemplar. */
const EXEMPLAR_MS = 60_000;

/**
 * Keeps, per server span name (`GET /api/posts/{postId}`), the slowest request of the last
 * minute and the last failed one: the traces an operator opens from the operations page.
 */
class ExemplarTraces implements SpanProcessor {
  readonly slowest = new Map<string, ExemplarTrace>();
  readonly failed = new Map<string, ExemplarTrace>();
  onStart(): void {}
  onEnd(span: ReadableSpan): void {
    if (span.kind !== SpanKind.SERVER) return;
    const ms = span.duration[0] * 1000 + span.duration[1] / 1e6;
    const endedAt = span.endTime[0] * 1000 + span.endTime[1] / 1e6;
    const exemplar = { traceId: span.spanContext().traceId, ms, endedAt };
    const slowest = this.slowest.get(span.name);
    if (!slowest || slowest.ms <= ms || slowest.endedAt < endedAt - EXEMPLAR_MS) this.slowest.set(span.name, exemplar);
    if (span.status.code === SpanStatusCode.ERROR) this.failed.set(span.name, exemplar);
  }
  async forceFlush(): Promise<void> {}
  async shutdown(): Promise<void> {}
}

export interface LocalTelemetry {
  /** Every metric as it stands (cumulative), for the operations page. */
  collect(): Promise<ResourceMetrics>;
  /** The slowest request of the last minute and the last failed one, per server span name. */
  exemplars(name: string): { slowest?: ExemplarTrace; failed?: ExemplarTrace };
  /** Where spans, metrics and logs are exported besides the page, for the start banner. */
  readonly exportsTo?: string;
  /** Exports what is pending and stops (Ctrl-C). */
  shutdown(): Promise<void>;
}

let installed: LocalTelemetry | undefined;

const SIGNAL_ENDPOINTS = ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT"];

/** Where OTLP goes, when the environment names an endpoint at all (the SDK's default, localhost:4318, is not assumed). */
function otlpDestination(env: NodeJS.ProcessEnv): string | undefined {
  return [env.OTEL_EXPORTER_OTLP_ENDPOINT, ...SIGNAL_ENDPOINTS.map((name) => env[name])].find((value) => value?.trim());
}

/** What a signal can be exported to here: OTLP, or the console (one line per span, per log record, per metric export). */
type Exporter = "otlp" | "console";

/**
 * The exporters OTEL_TRACES_EXPORTER, OTEL_METRICS_EXPORTER or OTEL_LOGS_EXPORTER names for its
 * signal, a comma-separated list of `otlp`, `console` and `none`. Unset, OTLP when an endpoint is
 * named and none otherwise: the specification's default, OTLP to localhost:4318, is not assumed
 * (an explicit `otlp` does send there).
 */
function exportersOf(env: NodeJS.ProcessEnv, signal: "TRACES" | "METRICS" | "LOGS"): Exporter[] {
  const setting = `OTEL_${signal}_EXPORTER`;
  const names = (env[setting] ?? "")
    .split(",")
    .map((name) => name.trim().toLowerCase())
    .filter(Boolean);
  if (names.length === 0) return otlpDestination(env) ? ["otlp"] : [];
  if (names.includes("none")) return [];
  const unknown = names.filter((name) => name !== "otlp" && name !== "console");
  if (unknown.length > 0) console.warn(`${setting}: ${unknown.join(", ")} is not an exporter this host has (otlp, console, none); ignored.`);
  return [...new Set(names.filter((name): name is Exporter => name === "otlp" || name === "console"))];
}

/** The service name when the settings give none (OTEL_SERVICE_NAME, or service.name in OTEL_RESOURCE_ATTRIBUTES, which the SDK reads itself). */
function defaultServiceName(env: NodeJS.ProcessEnv): string | undefined {
  const named = env.OTEL_SERVICE_NAME?.trim() || /(?:^|,)\s*service\.name\s*=/.test(env.OTEL_RESOURCE_ATTRIBUTES ?? "");
  return named ? undefined : "blog-backend-local";
}

/**
 * The metrics exporter the OTLP settings ask for. The SDK would make it from the environment
 * only when given no readers, and the operations page has one, so it is made here the same way:
 * protocol, then interval (OTEL_METRIC_EXPORT_INTERVAL, 60 s).
 */
function otlpMetricReader(env: NodeJS.ProcessEnv): MetricReader {
  const protocol = (env.OTEL_EXPORTER_OTLP_METRICS_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? "http/protobuf").trim();
  const exporter = protocol === "grpc" ? new GrpcMetricExporter() : protocol === "http/json" ? new JsonMetricExporter() : new ProtobufMetricExporter();
  return new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: exportInterval(env) });
}

/** How often metrics are exported (OTEL_METRIC_EXPORT_INTERVAL), 60 s by default. */
function exportInterval(env: NodeJS.ProcessEnv): number {
  const interval = Number(env.OTEL_METRIC_EXPORT_INTERVAL);
  return Number.isFinite(interval) && interval > 0 ? interval : 60_000;
}

/**
 * The span exporter the OTLP settings ask for, made as the SDK makes it from the environment
 * (which it does only when given no processors; the exemplars are one): protocol per signal,
 * then OTEL_EXPORTER_OTLP_PROTOCOL; each exporter reads its endpoint and headers itself.
 */
function otlpSpanProcessor(env: NodeJS.ProcessEnv): SpanProcessor {
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? "http/protobuf").trim();
  const exporter = protocol === "grpc" ? new GrpcTraceExporter() : protocol === "http/json" ? new JsonTraceExporter() : new ProtobufTraceExporter();
  return new BatchSpanProcessor(exporter);
}

/**
 * The local host's telemetry, chosen at start-up as the Functions host chooses Azure Monitor:
 * the OpenTelemetry SDK for Node.js (`NodeSDK`), configured by the standard OTEL_* settings
 * (endpoints, per signal too; OTEL_EXPORTER_OTLP_PROTOCOL http/json, http/protobuf or grpc;
 * OTEL_{TRACES,METRICS,LOGS}_EXPORTER otlp, console or none; OTEL_TRACES_SAMPLER;
 * OTEL_RESOURCE_ATTRIBUTES, OTEL_SERVICE_NAME, OTEL_METRIC_EXPORT_INTERVAL; OTEL_SDK_DISABLED),
 * exporting spans, metrics and logs over OTLP when an endpoint is named, and its metrics readable
 * on demand (the operations page). One per process: the first call installs it, later calls (other local
 * systems in one test process) share it. Tests install theirs first, with their in-memory
 * processors and readers.
 */
export function localTelemetry(options: { spanProcessors?: SpanProcessor[]; metricReaders?: MetricReader[] } = {}): LocalTelemetry {
  if (installed) return installed;
  const env = process.env;
  const [traces, metrics, logs] = (["TRACES", "METRICS", "LOGS"] as const).map((signal) => exportersOf(env, signal));
  const otlpUsed = [traces, metrics, logs].some((exporters) => exporters.includes("otlp"));
  const exportsTo = otlpUsed ? (otlpDestination(env) ?? "the OTLP default endpoint (localhost)") : undefined;
  const onDemand = new OnDemandReader();
  const exemplars = new ExemplarTraces();
  const sdk = new NodeSDK({
    serviceName: defaultServiceName(env),
    // Given processors (a test's), or those OTEL_TRACES_EXPORTER names; the exemplars always. (The SDK
    // reads that setting only when it is given no processors.)
    spanProcessors: [
      ...(options.spanProcessors ??
        traces.map((exporter) => (exporter === "otlp" ? otlpSpanProcessor(env) : new SimpleSpanProcessor(new ConsoleSpanExporter())))),
      exemplars,
    ],
    // The SDK makes the log processors from OTEL_LOGS_EXPORTER itself, unless there are none to make.
    logRecordProcessors: logs.length > 0 ? undefined : [],
    metricReaders: [
      onDemand,
      ...(options.metricReaders ?? []),
      ...metrics.map((exporter) =>
        exporter === "otlp"
          ? otlpMetricReader(env)
          : new PeriodicExportingMetricReader({ exporter: new ConsoleMetricExporter(), exportIntervalMillis: exportInterval(env) }),
      ),
    ],
    // The SDK's own instrumentations stay off: the app and the host record what they do themselves.
    instrumentations: [],
  });
  // With OTEL_SDK_DISABLED=true the SDK installs nothing: the API stays a no-op and nothing is recorded or sent.
  const disabled = env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true";
  sdk.start();
  installed = {
    exportsTo: disabled ? undefined : exportsTo,
    async collect() {
      if (disabled) return { resource: resources.emptyResource(), scopeMetrics: [] };
      const { resourceMetrics, errors } = await onDemand.collect();
      if (errors.length > 0) throw new Error(`metrics could not be read: ${errors.map(String).join("; ")}`);
      return resourceMetrics;
    },
    exemplars: (name) => {
      const slowest = exemplars.slowest.get(name);
      return { slowest: slowest && slowest.endedAt >= Date.now() - EXEMPLAR_MS ? slowest : undefined, failed: exemplars.failed.get(name) };
    },
    async shutdown() {
      await sdk.shutdown().catch(() => {});
    },
  };
  return installed;
}
