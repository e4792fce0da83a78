/**
 * A local Azure Functions host for Node.js v4 programming-model apps, in one process: it loads
 * the app through the worker's `@azure/functions-core` API and serves what the app registers
 * (HTTP routes, Cosmos DB triggers with their leases, Durable Functions orchestrations,
 * activities, entities and clients). It knows nothing of any one app. The one public entry.
 */

// The app, as the Node.js worker loads it.
export {
  loadFunctionApp,
  type CosmosDBTriggerFunction,
  type DurableFunctions,
  type FunctionApp,
  type FunctionAppOptions,
  type HttpFunction,
  type TriggeredFunction,
} from "./worker/function-app";

// HTTP: the app's routes, the Durable Functions HTTP API, the front end and the local-only routes.
export { createHttpServer, drainHttp, type HttpServerOptions } from "./http-server";
export { Router } from "./http/router";
export { WEB_SECURITY_HEADERS, type WebOptions } from "./web";
export type { DevSignIn } from "./local-routes";

// The Cosmos DB trigger: leases, the change feed, and the lag the scale controller reads.
export { ChangeFeedPump, DEFAULT_LEASE_TIMING, type LeaseTiming } from "./change-feed/pump";
export { lagEstimator, type LagReading } from "./change-feed/lag";

// Durable Functions: the host, its state, its HTTP API and client binding.
export { DurableHost, type DurableHostOptions } from "./durable/host";
export { fileInstanceStore, memoryInstanceStore } from "./durable/store";
export { announceHostName, clientBindingData, DURABLE_API_PATH, durableClient, durableInvocation } from "./durable/http-api";
export { DEFAULT_SPAN_NAMING, type InstanceSpanNaming } from "./durable/tracing";

// The process's OpenTelemetry SDK, and time.
export { emitLog, localTelemetry, untraced, type LocalTelemetry } from "./telemetry";
export { ManualClock, systemClock, type Clock } from "./clock";
