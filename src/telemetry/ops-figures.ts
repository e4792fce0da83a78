// The operations figures the local host serves at /local/ops and the front end's #/ops page shows:
// one shape for both.

/** What the operations page shows: the same metrics telemetry exports, read at one moment. */
export interface OpsFigures {
  at: string;
  /** API requests per second since the previous reading (0 on the first). */
  requestsPerSecond: number;
  requests: number;
  statusClasses: Record<string, number>;
  /** Per route: requests, request units in all and per request, mean duration. */
  routes: { route: string; requests: number; requestUnits: number; requestUnitsPerRequest: number; meanMs: number }[];
  cosmos: { requests: number; requestUnits: number; throttled: number; unavailable: number };
  /** Per consumer and lease: how far behind the newest change. */
  lag: { consumer: string; lease: string; seconds: number; items?: number }[];
  orchestrations: Record<string, number>;
  /** Orchestration instances the host holds, by runtime status. */
  instances: Record<string, number>;
  likeBatches: { calls: number; likes: number };
  feedCache: { hits: number; misses: number };
}
