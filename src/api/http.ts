import type { HttpHandler, HttpRequest, HttpResponseInit, InvocationContext } from "@azure/functions";
import type { z, ZodTypeAny } from "zod";
import { invalid, preconditionFailed, tooLarge, unsupportedMediaType } from "../model/errors";
import { LIMITS } from "../model/limits";
import { SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { settings } from "../config";
import { ATTRIBUTES, inSpan, pseudonymOf, recordHttpRequest } from "../telemetry";
import { measureCosmos, type CosmosUsage } from "../store/metering";
import { authenticate } from "./auth";
import { ifMatchHolds, noneMatchHits, writePreconditions } from "./conditional";
import { problemResponse } from "./problems";
import { id, idempotencyKey } from "./schemas";

export interface ApiResult {
  status: number;
  body?: unknown;
  etag?: string;
  location?: string;
  headers?: Record<string, string>;
}

function validationError(where: string, error: z.ZodError): Error {
  const errors = error.issues.map((issue) => ({ path: issue.path.join(".") || where, message: issue.message }));
  return invalid(`Invalid ${where}: ${errors.map((e) => `${e.path} ${e.message}`).join("; ")}`, errors);
}

/** `application/json`, or any `+json` type, with or without parameters such as charset. */
const JSON_MEDIA_TYPE = /^application\/([\w.-]+\+)?json\s*(;|$)/i;
/** The charset parameter of a media type, unquoted; undefined when there is none. */
const charsetOf = (type: string) => /;\s*charset\s*=\s*"?([^";\s]*)"?/i.exec(type)?.[1];
/** JSON is UTF-8 (RFC 8259): bytes that are not are refused, never replaced by U+FFFD. */
const UTF8 = new TextDecoder("utf-8", { fatal: true });

/** What a handler may ask of the request: validated parameters, query, body and caller. */
export class ApiCall {
  constructor(
    readonly request: HttpRequest,
    readonly context: InvocationContext,
  ) {}

  /** A path parameter that must be a well-formed id. */
  param(name: string): string {
    const parsed = id.safeParse(this.request.params[name]);
    if (!parsed.success) throw invalid(`Path parameter '${name}' is not a valid id.`, [{ path: name, message: "is not a valid id" }]);
    return parsed.data;
  }

  /** The query parameters, validated by `schema`; a parameter given twice is a 400, not "the last one wins". */
  query<S extends ZodTypeAny>(schema: S): z.infer<S> {
    const repeated = [...new Set(this.request.query.keys())].filter((name) => this.request.query.getAll(name).length > 1);
    if (repeated.length > 0)
      throw invalid(
        `Query parameters may be given once: ${repeated.join(", ")}.`,
        repeated.map((name) => ({ path: name, message: "is given more than once" })),
      );
    const parsed = schema.safeParse(Object.fromEntries(this.request.query.entries()));
    if (!parsed.success) throw validationError("query", parsed.error);
    return parsed.data;
  }

  /** The JSON body, at most 64 KiB of UTF-8, validated by `schema`; an absent body counts as `{}`. */
  async body<S extends ZodTypeAny>(schema: S): Promise<z.infer<S>> {
    const declared = Number(this.request.headers.get("content-length") ?? 0);
    if (declared > LIMITS.bodyBytes) throw tooLarge(`The request body must be at most ${LIMITS.bodyBytes} bytes.`);
    const bytes = Buffer.from(await this.request.arrayBuffer());
    if (bytes.length > LIMITS.bodyBytes) throw tooLarge(`The request body must be at most ${LIMITS.bodyBytes} bytes.`);
    let json: unknown = {};
    if (bytes.length > 0) {
      const text = this.bodyText(bytes);
      if (text.trim().length > 0) {
        try {
          json = JSON.parse(text);
        } catch {
          throw invalid("The request body is not valid JSON.", [{ path: "body", message: "is not valid JSON" }]);
        }
      }
    }
    if (typeof json !== "object" || json === null || Array.isArray(json)) {
      throw invalid("The request body must be a JSON object.", [{ path: "body", message: "must be a JSON object" }]);
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) throw validationError("body", parsed.error);
    return parsed.data;
  }

  /** The body's text: JSON media types only (415 otherwise), UTF-8 only (415 for another charset, 400 for bytes that are not UTF-8). */
  private bodyText(bytes: Buffer): string {
    const type = this.request.headers.get("content-type");
    if (type !== null && !JSON_MEDIA_TYPE.test(type)) throw unsupportedMediaType(`Send the body as application/json, not ${type}.`);
    const charset = type === null ? undefined : charsetOf(type);
    if (charset !== undefined && !/^utf-?8$/i.test(charset)) throw unsupportedMediaType(`Send the body in UTF-8, not ${charset}.`);
    try {
      return UTF8.decode(bytes);
    } catch {
      throw invalid("The request body is not valid UTF-8.", [{ path: "body", message: "is not valid UTF-8" }]);
    }
  }

  /** The client's preconditions on the version this write replaces (If-Match, If-None-Match). */
  writePreconditions(): (etag: string | undefined) => boolean | undefined {
    return writePreconditions(this.header("if-match"), this.header("if-none-match"));
  }

  /** 412 unless the client's preconditions hold for the resource's current version (`undefined`: it has none yet). */
  requirePreconditions(etag: string | undefined): void {
    if (this.writePreconditions()(etag) === false) throw preconditionFailed();
  }

  /** Whether the client sent preconditions at all (a route reads the version they are about only then). */
  hasPreconditions(): boolean {
    return this.header("if-match") !== undefined || this.header("if-none-match") !== undefined;
  }

  /** The authenticated caller's user id (401 without a valid token). */
  async caller(): Promise<string> {
    return (await this.callerWithRoles()).userId;
  }

  /** The authenticated caller, and whether their token carries an admin role (AUTH_ADMIN_ROLES). */
  async callerWithRoles(): Promise<{ userId: string; admin: boolean }> {
    const caller = await authenticate(this.request.headers.get("authorization"), settings().auth);
    trace.getActiveSpan()?.setAttribute(ATTRIBUTES.caller, pseudonymOf(caller.userId));
    return caller;
  }

  header(name: string): string | undefined {
    return this.request.headers.get(name) ?? undefined;
  }

  /** The `Idempotency-Key` header, validated; undefined when the client sent none. */
  idempotencyKey(): string | undefined {
    const value = this.header("idempotency-key");
    if (value === undefined) return undefined;
    const parsed = idempotencyKey.safeParse(value);
    if (!parsed.success) throw validationError("Idempotency-Key", parsed.error);
    return parsed.data;
  }
}

/** Marks a response that repeats the result of an earlier request with the same Idempotency-Key. */
export const replayHeaders = (created: boolean): Record<string, string> => (created ? {} : { "idempotent-replayed": "true" });

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
export function instrumented(route: { route: string }, handler: HttpHandler): HttpHandler {
  const template = `/api/${route.route}`;
  return (request, context) =>
    inSpan(
      `${request.method} ${template}`,
      { kind: SpanKind.SERVER, attributes: { [ATTRIBUTES.method]: request.method, [ATTRIBUTES.route]: template } },
      async (span) => {
        const started = performance.now();
        const { result, usage } = await measureCosmos(async () => handler(request, context));
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

/** GET and HEAD read; If-None-Match makes them 304 (writes evaluate it before writing instead: `writePreconditions`). */
const isRead = (method: string) => method === "GET" || method === "HEAD";

function toResponse(request: HttpRequest, result: ApiResult): HttpResponseInit {
  const headers: Record<string, string> = { ...result.headers };
  if (result.etag) headers.etag = result.etag;
  if (result.location) headers.location = result.location;
  // A read's If-Match (RFC 9110 13.1.1): a representation the client does not name is 412, before If-None-Match (13.2.2).
  if (isRead(request.method) && result.status === 200 && ifMatchHolds(request.headers.get("if-match") ?? undefined, result.etag ?? "") === false)
    throw preconditionFailed("The resource's current ETag is not one If-Match names.");
  if (isRead(request.method) && result.status === 200 && noneMatchHits(request.headers.get("if-none-match") ?? undefined, result.etag))
    return { status: 304, headers };
  if (result.body === undefined) return { status: result.status, headers };
  return { status: result.status, headers: { ...headers, "content-type": "application/json" }, jsonBody: result.body };
}

/** Wraps a handler: problem+json for every error, ETag/Location headers, HEAD as GET without a body. */
export function endpoint(work: (call: ApiCall) => Promise<ApiResult>): HttpHandler {
  return async (request: HttpRequest, context: InvocationContext): Promise<HttpResponseInit> => {
    let response: HttpResponseInit;
    try {
      response = toResponse(request, await work(new ApiCall(request, context)));
    } catch (error) {
      response = problemResponse(error, (message, cause) => context.error(message, cause));
      // The request's span (instrumented's) records what made it a 5xx: caught here, it would otherwise never see it.
      if ((response.status ?? 500) >= 500) trace.getActiveSpan()?.recordException(error as Error);
    }
    // HEAD: GET's status and headers, no body (RFC 9110 9.3.2).
    if (request.method === "HEAD") return { status: response.status, headers: response.headers };
    return response;
  };
}
