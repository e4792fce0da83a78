// The operations figures the local host serves at /local/ops and the front end's #/ops page shows:
// one shape for both.

/** One route and method over a window: how many, how fast, how often it failed. */
export interface RouteWindow {
  requests: number;
  perSecond: number;
  /** Percentiles of the duration, ms, from the histogram's buckets (null without requests). */
  p50Ms: number | null;
  p95Ms: number | null;
  p99Ms: number | null;
  /** Share of the requests answered 5xx (0 to 1). */
  errorRate: number;
}

export interface RouteFigures {
  method: string;
  route: string;
  last1m: RouteWindow;
  last5m: RouteWindow;
  /** Requests per second in each step of the last five minutes, oldest first. */
  series: number[];
  /** Request units per request, over the last five minutes. */
  requestUnitsPerRequest: number;
  /** The slowest request of the last minute (and the last 5xx), as a trace, when an OTLP UI is configured. */
  slowestTraceUrl?: string;
  errorTraceUrl?: string;
}

/** An orchestration instance to look at: retrying an activity that keeps failing, or running long. */
export interface OrchestrationAttention {
  name: string;
  /** Pseudonymized, as telemetry carries it: instance ids are made of user ids. */
  instance: string;
  state: "retrying" | "long-running";
  reason: string;
  since: string;
  traceUrl?: string;
}

/** What the operations page shows: the metrics telemetry exports, over the last one and five minutes. */
export interface OpsFigures {
  at: string;
  /** API requests per second over the last minute. */
  requestsPerSecond: number;
  /** Since the host started. */
  requests: number;
  statusClasses: Record<string, number>;
  /** Per route and method, busiest first. */
  routes: RouteFigures[];
  /** Request units since the host started: the API's requests, and everything else (change feed, orchestrations, the estimator). */
  requestUnits: { api: number; background: number; apiLast5m: number; backgroundLast5m: number };
  cosmos: { requests: number; throttled: number; unavailable: number };
  /** Per consumer and lease: how far behind the newest change. */
  lag: { consumer: string; lease: string; seconds: number; items?: number }[];
  orchestrations: Record<string, number>;
  /** Orchestration instances the host holds, by runtime status. */
  instances: Record<string, number>;
  attention: OrchestrationAttention[];
  likeBatches: { calls: number; likes: number };
  feedCache: { hits: number; misses: number };
}
