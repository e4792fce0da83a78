import { context } from "@opentelemetry/api";
import { logs, SeverityNumber } from "@opentelemetry/api-logs";
import { suppressTracing } from "@opentelemetry/core";
import { OTLPMetricExporter as GrpcMetricExporter } from "@opentelemetry/exporter-metrics-otlp-grpc";
import { OTLPMetricExporter as JsonMetricExporter } from "@opentelemetry/exporter-metrics-otlp-http";
import { OTLPMetricExporter as ProtobufMetricExporter } from "@opentelemetry/exporter-metrics-otlp-proto";
import { AggregationTemporality, MetricReader, PeriodicExportingMetricReader, type ResourceMetrics } from "@opentelemetry/sdk-metrics";
import { NodeSDK } from "@opentelemetry/sdk-node";
import type { SpanProcessor } from "@opentelemetry/sdk-trace-base";

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

export interface LocalTelemetry {
  /** Every metric as it stands (cumulative), for the operations page. */
  collect(): Promise<ResourceMetrics>;
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

/**
 * The metrics exporter the OTLP settings ask for. The SDK builds the trace and log exporters
 * from the environment itself; its metric reader would replace the operations page's, so this
 * one is made here, the same way: protocol, then interval (OTEL_METRIC_EXPORT_INTERVAL, 60 s).
 */
function otlpMetricReader(env: NodeJS.ProcessEnv): MetricReader {
  const protocol = (env.OTEL_EXPORTER_OTLP_METRICS_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? "http/protobuf").trim();
  const exporter = protocol === "grpc" ? new GrpcMetricExporter() : protocol === "http/json" ? new JsonMetricExporter() : new ProtobufMetricExporter();
  const interval = Number(env.OTEL_METRIC_EXPORT_INTERVAL);
  return new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: Number.isFinite(interval) && interval > 0 ? interval : 60_000 });
}

/**
 * The local host's telemetry, chosen at start-up as the Functions host chooses Azure Monitor:
 * the OpenTelemetry SDK for Node.js (`NodeSDK`), configured by the standard OTEL_* settings
 * (endpoints, per signal too; OTEL_EXPORTER_OTLP_PROTOCOL http/json, http/protobuf or grpc;
 * OTEL_RESOURCE_ATTRIBUTES, OTEL_SERVICE_NAME, OTEL_METRIC_EXPORT_INTERVAL...), exporting spans,
 * metrics and logs over OTLP when an endpoint is named, and its metrics readable on demand (the
 * operations page). One per process: the first call installs it, later calls (other local
 * systems in one test process) share it. Tests install theirs first, with their in-memory
 * processors and readers.
 */
export function localTelemetry(options: { spanProcessors?: SpanProcessor[]; metricReaders?: MetricReader[] } = {}): LocalTelemetry {
  if (installed) return installed;
  const exportsTo = otlpDestination(process.env);
  const onDemand = new OnDemandReader();
  const sdk = new NodeSDK({
    serviceName: process.env.OTEL_SERVICE_NAME?.trim() ? undefined : "blog-backend-local",
    // Given processors (a test's) are all there is; otherwise the environment's exporters, or none without an endpoint.
    spanProcessors: options.spanProcessors ?? (exportsTo ? undefined : []),
    logRecordProcessors: exportsTo ? undefined : [],
    metricReaders: [onDemand, ...(options.metricReaders ?? []), ...(exportsTo ? [otlpMetricReader(process.env)] : [])],
    // The SDK's own instrumentations stay off: the app and the host record what they do themselves.
    instrumentations: [],
  });
  sdk.start();
  installed = {
    exportsTo,
    async collect() {
      const { resourceMetrics, errors } = await onDemand.collect();
      if (errors.length > 0) throw new Error(`metrics could not be read: ${errors.map(String).join("; ")}`);
      return resourceMetrics;
    },
    async shutdown() {
      await sdk.shutdown().catch(() => {});
    },
  };
  return installed;
}
