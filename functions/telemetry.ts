import { app, type LogLevel } from "@azure/functions";
import { context, propagation } from "@opentelemetry/api";
import { logs, SeverityNumber } from "@opentelemetry/api-logs";

// The Function App's telemetry, chosen at start-up (index.ts imports this first): OpenTelemetry
// to Application Insights, authenticated with the app's managed identity (the component accepts
// Entra ID only). Without a connection string (func start without one), or with the SDK turned
// off as the OpenTelemetry specification says (OTEL_SDK_DISABLED=true), nothing is exported.
const disabled = process.env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true";
const connectionString = disabled ? undefined : process.env.APPLICATIONINSIGHTS_CONNECTION_STRING;

const SEVERITY: Record<LogLevel, SeverityNumber> = {
  trace: SeverityNumber.TRACE,
  debug: SeverityNumber.DEBUG,
  information: SeverityNumber.INFO,
  warning: SeverityNumber.WARN,
  error: SeverityNumber.ERROR,
  critical: SeverityNumber.FATAL,
  none: SeverityNumber.UNSPECIFIED,
};

if (connectionString) {
  // Loaded only here, from a file of its own (lazy/splits.ts): an app without a connection string never reads the providers.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { startAzureMonitor } = require("./azure-monitor/providers") as typeof import("./azure-monitor/providers");
  const stopTelemetry = startAzureMonitor(connectionString);
  // The batches still held go out before the worker stops (scale-in, a new deployment).
  app.hook.appTerminate(() => stopTelemetry());
  // What @azure/functions-opentelemetry-instrumentation does, through the same public hooks: that
  // package patches @azure/functions as Node loads it, which a bundled app never does. The host
  // (host.json telemetryMode OpenTelemetry) leaves the worker's logs to it; each invocation runs
  // in the host's trace; and its log lines are OpenTelemetry logs, so they carry the trace id.
  app.setup({ capabilities: { WorkerOpenTelemetryEnabled: true } });
  app.hook.preInvocation((hook) => {
    const trace = hook.invocationContext.traceContext;
    if (trace?.traceParent)
      hook.functionHandler = context.bind(
        propagation.extract(context.active(), { traceparent: trace.traceParent, tracestate: trace.traceState }),
        hook.functionHandler,
      );
  });
  const logger = logs.getLogger("blog-backend");
  app.hook.log((hook) => logger.emit({ body: hook.message, severityNumber: SEVERITY[hook.level], severityText: hook.level }));
}
