import type { HttpRequest } from "@azure/functions";
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { measureCosmos, type CosmosUsage } from "../store/metering";
import type { ApiHandler } from "./endpoint";
import { ATTRIBUTES, inSpan, recordHttpRequest } from "../telemetry";

/**
 * `Server-Timing`: how many Cosmos DB requests the call made, and for how long. Their request
 * charge goes to telemetry, not to every anonymous client.
 */
function serverTiming(usage: CosmosUsage, totalMs: number): string {
  return [
    `cosmos;desc="${usage.requests.length} requests";dur=${usage.durationMs.toFixed(1)}`,
    `cosmos-requests;desc="${usage.requests.length}"`,
    `total;dur=${totalMs.toFixed(1)}`,
  ].join(", ");
}

/**
 * The response headers a browser on another origin may read: App Service's CORS in front of a
 * function app exposes none, so the functions name them on every response (the front end reads
 * Retry-After, ETag and Location).
 */
const EXPOSED_HEADERS = "ETag, Location, Retry-After, Idempotent-Replayed, Content-Disposition, Server-Timing";

/** What each request's Cosmos DB calls cost, measured once by `instrumented`; a host reads it for its own log line. */
const usageByRequest = new WeakMap<HttpRequest, CosmosUsage>();

/** The Cosmos DB usage of a request that `instrumented` ran (undefined for one it did not). */
export const cosmosUsageOf = (request: HttpRequest): CosmosUsage | undefined => usageByRequest.get(request);

/**
 * A route's handler as both hosts run it: its Cosmos DB requests measured once, for one span per
 * request (route template, status, the caller pseudonymized, request units), the API's metrics,
 * and the `Server-Timing` header, computed the same way everywhere.
 */
export function instrumented(route: { route: string }, handler: ApiHandler): ApiHandler {
  const template = `/api/${route.route}`;
  return (request, context, services) =>
    inSpan(
      `${request.method} ${template}`,
      { kind: SpanKind.SERVER, attributes: { [ATTRIBUTES.method]: request.method, [ATTRIBUTES.route]: template } },
      async (span) => {
        const started = performance.now();
        const { result, usage } = await measureCosmos(async () => handler(request, context, services));
        usageByRequest.set(request, usage);
        const status = result.status ?? 200;
        const durationMs = performance.now() - started;
        span.setAttributes({ [ATTRIBUTES.status]: status, [ATTRIBUTES.requestCharge]: usage.requestCharge });
        if (status >= 500) {
          span.setStatus({ code: SpanStatusCode.ERROR, message: `answered ${status}` });
          span.setAttribute(ATTRIBUTES.errorType, String(status));
        }
        recordHttpRequest({
          route: template,
          method: request.method,
          scheme: request.url.slice(0, request.url.indexOf(":")),
          status,
          seconds: durationMs / 1000,
          charge: usage.requestCharge,
        });
        return {
          ...result,
          headers: {
            ...(result.headers as Record<string, string>),
            "server-timing": serverTiming(usage, durationMs),
            "access-control-expose-headers": EXPOSED_HEADERS,
          },
        };
      },
    );
}
