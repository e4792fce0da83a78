// Telemetry to Application Insights, loaded only when the Function App has a connection string
// (functions/telemetry.ts), from a file of its own (lazy/splits.ts). It is the OpenTelemetry
// SDK's three providers with Azure Monitor's own exporters, the pieces Azure Monitor's distro
// assembles, without what this app never uses and every cold start would read: the distro brings
// the Node SDK with every OTLP and Prometheus exporter, gRPC, protobuf, YAML configuration and
// instrumentations of other libraries (about 9 MiB, most of a cold start). docs/operations.md says what the distro's extras would add.
// The exporters themselves load with the first batch (exporters.ts, a split too).
import { metrics } from "@opentelemetry/api";
import { logs } from "@opentelemetry/api-logs";
import { ExportResultCode, type ExportResult } from "@opentelemetry/core";
import { azureFunctionsDetector } from "@opentelemetry/resource-detector-azure";
import { detectResources, envDetector } from "@opentelemetry/resources";
import { BatchLogRecordProcessor, LoggerProvider, type LogRecordExporter } from "@opentelemetry/sdk-logs";
import { AggregationTemporality, InstrumentType, MeterProvider, PeriodicExportingMetricReader, type PushMetricExporter } from "@opentelemetry/sdk-metrics";
import { BatchSpanProcessor, NodeTracerProvider, type SpanExporter } from "@opentelemetry/sdk-trace-node";
import type { Exporters } from "./exporters";
import { tracesSampler } from "./sampling";

/** Stops the providers after exporting what they hold (the worker's appTerminate hook). */
export type StopTelemetry = () => Promise<void>;

/**
 * Installs the global tracer, meter and logger providers, exporting to the Application Insights
 * resource of `connectionString` with Entra ID (the resource accepts no key). The resource is
 * the Function App as Azure Monitor names it (the Functions detector: service name, instance),
 * unless the operator says otherwise: OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (the
 * environment detector, merged last) win over what is detected.
 */
export function startAzureMonitor(connectionString: string, env: NodeJS.ProcessEnv = process.env): StopTelemetry {
  const exporters = exportersOnFirstBatch(connectionString);
  const resource = detectResources({ detectors: [azureFunctionsDetector, envDetector] });
  const tracerProvider = new NodeTracerProvider({
    resource,
    // Each sampler Azure Monitor offers decides by the trace id, so the spans of one trace are kept or dropped together, across processes too.
    sampler: tracesSampler(env),
    spanProcessors: [new BatchSpanProcessor(exporters.traces)],
  });
  // The W3C trace context propagator and the async context manager, as the distro registers them.
  tracerProvider.register();
  const meterProvider = new MeterProvider({ resource, readers: [new PeriodicExportingMetricReader({ exporter: exporters.metrics })] });
  metrics.setGlobalMeterProvider(meterProvider);
  const loggerProvider = new LoggerProvider({ resource, processors: [new BatchLogRecordProcessor({ exporter: exporters.logs })] });
  logs.setGlobalLoggerProvider(loggerProvider);
  return async () => {
    await Promise.allSettled([tracerProvider.shutdown(), meterProvider.shutdown(), loggerProvider.shutdown()]);
  };
}

/**
 * Azure Monitor's metric exporter's temporality, which the reader asks for when it is made, before
 * the exporter is loaded: delta, except up-down counters, which are cumulative (a test holds it to
 * the exporter's own answer for every instrument type).
 */
export function azureMonitorTemporality(type: InstrumentType): AggregationTemporality {
  return type === InstrumentType.UP_DOWN_COUNTER || type === InstrumentType.OBSERVABLE_UP_DOWN_COUNTER
    ? AggregationTemporality.CUMULATIVE
    : AggregationTemporality.DELTA;
}

/**
 * The processors' exporters, each handing its batches to Azure Monitor's, which are loaded (and
 * their credential made) when the first batch of any kind leaves. A shutdown or flush before that
 * has nothing to send and loads nothing. Exporters that cannot be made (a connection string
 * Azure Monitor refuses) fail each batch with the reason, said once on the worker's log; the app
 * serves on.
 */
export function exportersOnFirstBatch(connectionString: string): { traces: SpanExporter; metrics: PushMetricExporter; logs: LogRecordExporter } {
  let loaded: Exporters | undefined;
  let refused: Error | undefined;
  const send = (done: (result: ExportResult) => void, use: (exporters: Exporters) => void) => {
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      loaded ??= (require("./exporters") as typeof import("./exporters")).azureMonitorExporters(connectionString);
    } catch (error) {
      if (!refused) console.error(`Application Insights: the exporters could not be made, telemetry is not sent: ${String(error)}`);
      refused = error instanceof Error ? error : new Error(String(error));
      return done({ code: ExportResultCode.FAILED, error: refused });
    }
    use(loaded);
  };
  return {
    traces: { export: (batch, done) => send(done, (e) => e.traces.export(batch, done)), shutdown: async () => loaded?.traces.shutdown() },
    metrics: {
      export: (batch, done) => send(done, (e) => void e.metrics.export(batch, done)),
      selectAggregationTemporality: azureMonitorTemporality,
      forceFlush: async () => loaded?.metrics.forceFlush(),
      shutdown: async () => loaded?.metrics.shutdown(),
    },
    logs: {
      export: (batch, done) => send(done, (e) => e.logs.export(batch, done)),
      forceFlush: async () => loaded?.logs.forceFlush(),
      shutdown: async () => loaded?.logs.shutdown(),
    },
  };
}
