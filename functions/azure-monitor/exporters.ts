// Azure Monitor's three exporters with the app's managed identity, in a file of their own
// (lazy/splits.ts): providers.ts loads it when the first batch of telemetry leaves. The
// exporters, their HTTP pipeline and Entra ID's credential are most of what telemetry costs a
// cold start, and nothing needs them before there is something to send.
import { AzureMonitorLogExporter, AzureMonitorMetricExporter, AzureMonitorTraceExporter } from "@azure/monitor-opentelemetry-exporter";
import { DefaultAzureCredential } from "@azure/identity";

export interface Exporters {
  traces: AzureMonitorTraceExporter;
  metrics: AzureMonitorMetricExporter;
  logs: AzureMonitorLogExporter;
}

/** The exporters to the Application Insights resource of `connectionString`, authenticated with Entra ID (the resource accepts no key). */
export function azureMonitorExporters(connectionString: string): Exporters {
  const options = { connectionString, credential: new DefaultAzureCredential() };
  return { traces: new AzureMonitorTraceExporter(options), metrics: new AzureMonitorMetricExporter(options), logs: new AzureMonitorLogExporter(options) };
}
