// Entra ID's credential (@azure/identity with MSAL, about a tenth of the app's code), bundled into
// a file of its own (dist/deploy/azure-identity.js, scripts/bundle.ts): only keyless access to Cosmos DB
// (src/store/client.ts) and telemetry with a connection string (functions/azure-monitor.ts) load it,
// so a cold start that needs neither never reads it.
export { DefaultAzureCredential } from "@azure/identity";
