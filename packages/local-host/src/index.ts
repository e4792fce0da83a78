/**
 * A local Azure Functions host for Node.js v4 programming-model apps, in one process: it loads
 * the app through the worker's `@azure/functions-core` API and serves what the app registers
 * (HTTP routes, change feed triggers with their leases, timer triggers, Durable Functions orchestrations,
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
  type TimerFunction,
  type TimerInfo,
  type TriggeredFunction,
} from "./worker/function-app";

// Timer triggers, on their NCRONTAB schedules.
export { TimerHost } from "./timer/timers";

// HTTP: the app's routes, the Durable Functions HTTP API, the front end and the local-only routes.
export { createHttpServer, drainHttp, type HttpServerOptions } from "./http-server";
export { Router } from "./http/router";
export { WEB_SECURITY_HEADERS, type WebOptions } from "./web";
export type { DevSignIn } from "./local-routes";

// The change feed trigger: leases and the change feed.
export { ChangeFeedPump, DEFAULT_LEASE_TIMING, type LeaseTiming } from "./change-feed/pump";

// Durable Functions: the host, its state, its HTTP API and client binding.
export { DurableHost, type DurableHostOptions } from "./durable/host";
export { DEFAULT_HUB_TIMING, type TaskHubOptions, type TaskHubTiming } from "./durable/hub";
export { fileInstanceStore, memoryInstanceStore } from "./durable/store";
export { announceHostName, clientBindingData, DURABLE_API_PATH, durableClient, durableInvocation } from "./durable/http-api";
export { DEFAULT_SPAN_NAMING, type InstanceSpanNaming } from "./durable/tracing";

// The process's OpenTelemetry SDK, and time.
export { emitLog, localTelemetry, untraced, type LocalTelemetry } from "./telemetry";
export { ManualClock, systemClock, type Clock } from "./clock";
