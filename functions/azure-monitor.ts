// Telemetry to Application Insights, loaded only when the Function App has a connection string
// (functions/telemetry.ts), and bundled into a file of its own (dist/deploy/azure-monitor.js,
// scripts/bundle.ts). It is the OpenTelemetry SDK's three providers with Azure Monitor's own
// exporters, the pieces Azure Monitor's distro assembles, without what this app never uses and
// every cold start would read: the distro brings the Node SDK with every OTLP and Prometheus
// exporter, gRPC, protobuf, YAML configuration and instrumentations of other libraries (about
// 9 MiB, most of a cold start). docs/operations.md says what the distro's extras would add.
import { metrics } from "@opentelemetry/api";
import { logs } from "@opentelemetry/api-logs";
import { AzureMonitorLogExporter, AzureMonitorMetricExporter, AzureMonitorTraceExporter, RateLimitedSampler } from "@azure/monitor-opentelemetry-exporter";
import { DefaultAzureCredential } from "@azure/identity";
import { azureFunctionsDetector } from "@opentelemetry/resource-detector-azure";
import { detectResources, envDetector } from "@opentelemetry/resources";
import { BatchLogRecordProcessor, LoggerProvider } from "@opentelemetry/sdk-logs";
import { MeterProvider, PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics";
import { BatchSpanProcessor, NodeTracerProvider } from "@opentelemetry/sdk-trace-node";

/** Traces kept per second and instance, the distro's default: a busy instance sends a sample, each span carrying its rate, never a flood. */
const TRACES_PER_SECOND = 5;

/** Stops the providers after exporting what they hold (the worker's appTerminate hook). */
export type StopTelemetry = () => Promise<void>;

/**
 * Installs the global tracer, meter and logger providers, exporting to the Application Insights
 * resource of `connectionString` with Entra ID (the resource accepts no key). The resource is
 * the Function App as Azure Monitor names it (the Functions detector: service name, instance).
 */
export function startAzureMonitor(connectionString: string): StopTelemetry {
  const exporterOptions = { connectionString, credential: new DefaultAzureCredential() };
  const resource = detectResources({ detectors: [envDetector, azureFunctionsDetector] });
  const tracerProvider = new NodeTracerProvider({
    resource,
    // Its decision follows the trace id, so the spans of one trace are kept or dropped together, across processes too.
    sampler: new RateLimitedSampler(TRACES_PER_SECOND),
    spanProcessors: [new BatchSpanProcessor(new AzureMonitorTraceExporter(exporterOptions))],
  });
  // The W3C trace context propagator and the async context manager, as the distro registers them.
  tracerProvider.register();
  const meterProvider = new MeterProvider({
    resource,
    readers: [new PeriodicExportingMetricReader({ exporter: new AzureMonitorMetricExporter(exporterOptions) })],
  });
  metrics.setGlobalMeterProvider(meterProvider);
  const loggerProvider = new LoggerProvider({
    resource,
    processors: [new BatchLogRecordProcessor({ exporter: new AzureMonitorLogExporter(exporterOptions) })],
  });
  logs.setGlobalLoggerProvider(loggerProvider);
  return async () => {
    await Promise.allSettled([tracerProvider.shutdown(), meterProvider.shutdown(), loggerProvider.shutdown()]);
  };
}
