import { context, metrics } from "@opentelemetry/api";
import { suppressTracing } from "@opentelemetry/core";
import { OTLPMetricExporter } from "@opentelemetry/exporter-metrics-otlp-http";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { AggregationTemporality, MeterProvider, MetricReader, PeriodicExportingMetricReader, type ResourceMetrics } from "@opentelemetry/sdk-metrics";
import { BatchSpanProcessor, NodeTracerProvider, type SpanProcessor } from "@opentelemetry/sdk-trace-node";
import { ATTR_SERVICE_NAME } from "@opentelemetry/semantic-conventions";

/**
 * Runs `work` with tracing suppressed: the host's own bookkeeping (change feed polls, lag
 * estimates) adds no spans, while the metrics its Cosmos DB requests record still count them.
 */
export const untraced = <T>(work: () => T): T => context.with(suppressTracing(context.active()), work);

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
  /** Where spans and metrics are exported besides the page, for the start banner. */
  readonly exportsTo?: string;
  shutdown(): Promise<void>;
}

let installed: LocalTelemetry | undefined;

/**
 * The local host's telemetry, chosen at start-up as the Functions host chooses Azure Monitor:
 * the OpenTelemetry SDK for this process, its metrics readable on demand (the operations page),
 * spans and metrics exported over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set (Jaeger, the
 * Aspire dashboard, any collector). One per process: the first call installs it, later calls
 * (other local systems in one test process) share it. Tests install theirs first, with their
 * in-memory processors and readers.
 */
export function localTelemetry(
  options: { otlpEndpoint?: string; spanProcessors?: SpanProcessor[]; metricReaders?: MetricReader[]; exportIntervalMs?: number } = {},
): LocalTelemetry {
  if (installed) return installed;
  const otlpEndpoint = options.otlpEndpoint ?? process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  const resource = resourceFromAttributes({ [ATTR_SERVICE_NAME]: process.env.OTEL_SERVICE_NAME ?? "blog-backend-local" });
  // The exporters read the endpoint (and headers) from the OTEL_EXPORTER_OTLP_* settings, as every OpenTelemetry SDK does.
  const spanProcessors = [...(options.spanProcessors ?? []), ...(otlpEndpoint ? [new BatchSpanProcessor(new OTLPTraceExporter())] : [])];
  const tracing = new NodeTracerProvider({ resource, spanProcessors });
  tracing.register();
  const onDemand = new OnDemandReader();
  const readers: MetricReader[] = [onDemand, ...(options.metricReaders ?? [])];
  if (otlpEndpoint)
    readers.push(new PeriodicExportingMetricReader({ exporter: new OTLPMetricExporter(), exportIntervalMillis: options.exportIntervalMs ?? 15_000 }));
  const meters = new MeterProvider({ resource, readers });
  metrics.setGlobalMeterProvider(meters);
  installed = {
    exportsTo: otlpEndpoint,
    async collect() {
      const { resourceMetrics, errors } = await onDemand.collect();
      if (errors.length > 0) throw new Error(`metrics could not be read: ${errors.map(String).join("; ")}`);
      return resourceMetrics;
    },
    async shutdown() {
      await Promise.allSettled([tracing.shutdown(), meters.shutdown()]);
    },
  };
  return installed;
}
