// Azure Monitor's OpenTelemetry distro and the credential it exports with: loaded only when the
// Function App has a connection string (functions/telemetry.ts), and bundled into a file of its
// own (dist/deploy/azure-monitor.js, scripts/bundle.ts), so an app without one never reads it.
export { useAzureMonitor } from "@azure/monitor-opentelemetry";
export { DefaultAzureCredential } from "@azure/identity";
