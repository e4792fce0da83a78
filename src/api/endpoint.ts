import { createHash } from "node:crypto";
import type { HttpRequest, HttpResponseInit, InvocationContext } from "@azure/functions";
import type { z, ZodTypeAny } from "zod";
import { forbidden, invalid, preconditionFailed, tooLarge, unsupportedMediaType } from "../model/errors";
import { LIMITS } from "../model/limits";
import { trace } from "@opentelemetry/api";
import type { AuthSettings } from "../config";
import type { AppServices } from "../app-services";
import type { BlogStore } from "../store/client";
import { ATTRIBUTES, pseudonymOf } from "../telemetry";
import { authenticate } from "./auth";
import { problemResponse } from "./problems";
import { id, idempotencyKey } from "./schemas";

export interface ApiResult {
  status: number;
  body?: unknown;
  /** `body` already serialized, for an answer kept and served to many readers: sent as it is. */
  json?: string;
  etag?: string;
  location?: string;
  headers?: Record<string, string>;
  /** Repeats the result of an earlier request with the same Idempotency-Key (`Idempotent-Replayed: true`). */
  replayed?: boolean;
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

/** Who made the request: their user id, and whether their token carries an admin role (AUTH_ADMIN_ROLES). */
export interface Caller {
  userId: string;
  admin: boolean;
}

/**
 * What a route takes from the request, declared once: `endpoint` validates it before the
 * handler runs, and the route table documents it (OpenAPI) from the same declaration.
 */
export interface Declared {
  /**
   * Needs a bearer token (401 without a valid one): any caller, or only the owner of the
   * account the `userId` path parameter names (403 for anyone else), or its owner or an admin.
   */
  auth?: "caller" | "owner" | "owner or admin";
  query?: ZodTypeAny;
  /** The JSON body's schema; a body is optional where `{}` is valid (an absent body counts as `{}`). */
  body?: ZodTypeAny;
  /** Honours an `Idempotency-Key` header. */
  idempotencyKey?: boolean;
  /** Creates a resource: the client's preconditions are checked against "no current version" first. */
  creates?: boolean;
}

type Parsed<S> = S extends ZodTypeAny ? z.infer<S> : undefined;

/** The request's declared inputs, validated. */
interface Resolved {
  /** The store the app works on, handed in by the host's composition root. */
  store: BlogStore;
  caller?: Caller;
  /** The path parameters, each a well-formed id. */
  params: Readonly<Record<string, string>>;
  query?: unknown;
  body?: unknown;
  idempotencyKey?: string;
  /** The client's preconditions on the version a write replaces (If-Match, If-None-Match). */
  preconditions: Preconditions;
  /** Whether the client sent preconditions at all (a route reads the version they are about only then). */
  hasPreconditions: boolean;
  /** 412 unless the client's preconditions hold for the resource's current version (`undefined`: it has none yet). */
  requirePreconditions(etag: string | undefined): void;
  warn(message: string): void;
}

/** What the handler gets: the inputs its route declared, typed by the declaration. */
export type ApiInput<D extends Declared> = Omit<Resolved, "caller" | "query" | "body" | "idempotencyKey"> & {
  caller: D["auth"] extends string ? Caller : undefined;
  query: Parsed<D["query"]>;
  body: Parsed<D["body"]>;
  idempotencyKey: D["idempotencyKey"] extends true ? string | undefined : undefined;
};

export type Preconditions = (etag: string | undefined) => boolean | undefined;

/** A route's handler: a Functions HTTP handler that also takes the app's services (the host passes them). */
export type ApiHandler = (request: HttpRequest, context: InvocationContext, services: AppServices) => Promise<HttpResponseInit>;

/** A route's handler with what it declared it takes from the request. */
export interface Endpoint {
  declared: Declared;
  handler: ApiHandler;
}

/** A path parameter must be a well-formed id. */
function validParams(params: Record<string, string>): Record<string, string> {
  for (const [name, value] of Object.entries(params))
    if (!id.safeParse(value).success) throw invalid(`Path parameter '${name}' is not a valid id.`, [{ path: name, message: "is not a valid id" }]);
  return params;
}

/** The query parameters, validated by `schema`; a parameter given twice is a 400, not "the last one wins". */
function parsedQuery<S extends ZodTypeAny>(request: HttpRequest, schema: S): z.infer<S> {
  const repeated = [...new Set(request.query.keys())].filter((name) => request.query.getAll(name).length > 1);
  if (repeated.length > 0)
    throw invalid(
      `Query parameters may be given once: ${repeated.join(", ")}.`,
      repeated.map((name) => ({ path: name, message: "is given more than once" })),
    );
  const parsed = schema.safeParse(Object.fromEntries(request.query.entries()));
  if (!parsed.success) throw validationError("query", parsed.error);
  return parsed.data;
}

/** The JSON body, at most 64 KiB of UTF-8, validated by `schema`; an absent body counts as `{}`. */
async function parsedBody<S extends ZodTypeAny>(request: HttpRequest, schema: S): Promise<z.infer<S>> {
  const declared = Number(request.headers.get("content-length") ?? 0);
  if (declared > LIMITS.bodyBytes) throw tooLarge(`The request body must be at most ${LIMITS.bodyBytes} bytes.`);
  const bytes = Buffer.from(await request.arrayBuffer());
  if (bytes.length > LIMITS.bodyBytes) throw tooLarge(`The request body must be at most ${LIMITS.bodyBytes} bytes.`);
  let json: unknown = {};
  if (bytes.length > 0) {
    const text = bodyText(request, bytes);
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
function bodyText(request: HttpRequest, bytes: Buffer): string {
  const type = request.headers.get("content-type");
  if (type !== null && !JSON_MEDIA_TYPE.test(type)) throw unsupportedMediaType(`Send the body as application/json, not ${type}.`);
  const charset = type === null ? undefined : charsetOf(type);
  if (charset !== undefined && !/^utf-?8$/i.test(charset)) throw unsupportedMediaType(`Send the body in UTF-8, not ${charset}.`);
  try {
    return UTF8.decode(bytes);
  } catch {
    throw invalid("The request body is not valid UTF-8.", [{ path: "body", message: "is not valid UTF-8" }]);
  }
}

/** The `Idempotency-Key` header, validated; undefined when the client sent none. */
function idempotencyKeyOf(request: HttpRequest): string | undefined {
  const value = request.headers.get("idempotency-key");
  if (value === null) return undefined;
  const parsed = idempotencyKey.safeParse(value);
  if (!parsed.success) throw validationError("Idempotency-Key", parsed.error);
  return parsed.data;
}

/** The authenticated caller (401 without a valid token). */
async function callerOf(request: HttpRequest, auth: AuthSettings): Promise<Caller> {
  const caller = await authenticate(request.headers.get("authorization"), auth);
  trace.getActiveSpan()?.setAttribute(ATTRIBUTES.caller, pseudonymOf(caller.userId));
  return caller;
}

/** 403 unless the caller owns the account the route names (`userId`), or is an admin where the route lets one act. */
function requireOwner(caller: Caller, auth: Declared["auth"], params: Record<string, string>): void {
  if (auth !== "owner" && auth !== "owner or admin") return;
  if (caller.userId !== params.userId && !(auth === "owner or admin" && caller.admin)) throw forbidden("Only the account's owner may do this.");
}

/** The request's declared inputs, validated: caller, path (then the account's owner), Idempotency-Key, query, body, then a creation's preconditions. */
async function inputOf(declared: Declared, request: HttpRequest, context: InvocationContext, services: AppServices): Promise<Resolved> {
  const caller = declared.auth ? await callerOf(request, services.store.settings.auth) : undefined;
  const params = validParams(request.params);
  if (caller) requireOwner(caller, declared.auth, params);
  const key = declared.idempotencyKey ? idempotencyKeyOf(request) : undefined;
  const query = declared.query ? parsedQuery(request, declared.query) : undefined;
  const body = declared.body ? await parsedBody(request, declared.body) : undefined;
  const header = (name: string) => request.headers.get(name) ?? undefined;
  const preconditions = writePreconditions(header("if-match"), header("if-none-match"));
  const requirePreconditions = (etag: string | undefined) => {
    if (preconditions(etag) === false) throw preconditionFailed();
  };
  if (declared.creates) requirePreconditions(undefined);
  return {
    // Read when the handler asks: a route that needs no store (the OpenAPI document) never opens one.
    get store() {
      return services.store;
    },
    caller,
    params,
    query,
    body,
    idempotencyKey: key,
    preconditions,
    hasPreconditions: header("if-match") !== undefined || header("if-none-match") !== undefined,
    requirePreconditions,
    warn: (message) => context.warn(message),
  };
}

/**
 * Conditional requests (RFC 9110 section 13): entity tags parsed from If-None-Match and
 * If-Match, compared weakly for GET (304) and strongly for writes (412).
 */
const ENTITY_TAG = /(W\/)?("[^"]*")/g;

/** The entity tags of a header value, each with whether it was weak (`W/"..."`). */
function entityTags(header: string): { weak: boolean; opaque: string }[] {
  return [...header.matchAll(ENTITY_TAG)].map((match) => ({ weak: match[1] !== undefined, opaque: match[2] }));
}

/** `If-None-Match`: `*`, or any listed tag equal to `etag` by weak comparison (W/ ignored). */
function noneMatchHits(header: string | undefined, etag: string | undefined): boolean {
  if (header === undefined || etag === undefined) return false;
  if (header.trim() === "*") return true;
  const current = etag.replace(/^W\//, "");
  return entityTags(header).some((tag) => tag.opaque === current);
}

/**
 * `If-Match`: `*`, or any listed strong tag equal to `etag` (strong comparison: a weak tag
 * never matches). Returns undefined when the client sent no If-Match at all.
 */
function ifMatchHolds(header: string | undefined, etag: string): boolean | undefined {
  if (header === undefined) return undefined;
  if (header.trim() === "*") return true;
  return entityTags(header).some((tag) => !tag.weak && tag.opaque === etag);
}

/**
 * The preconditions of a write (RFC 9110 13.1), evaluated against the current version before
 * anything is written: false when they fail (412, nothing written); true when the client named
 * this version (If-Match), so the write must still find it; undefined when the client set none.
 * `If-None-Match: *` fails on any existing resource; a listed tag fails by weak comparison.
 * A resource with no current version (`undefined`: one about to be created, or gone) fails any
 * If-Match, `*` included, and passes any If-None-Match.
 */
function writePreconditions(ifMatch: string | undefined, ifNoneMatch: string | undefined): (etag: string | undefined) => boolean | undefined {
  return (etag) => {
    if (etag === undefined) return ifMatch === undefined ? undefined : false;
    if (noneMatchHits(ifNoneMatch, etag)) return false;
    return ifMatchHolds(ifMatch, etag);
  };
}

/** A strong entity tag for a JSON body that has none of its own (a list): the same items in the same order, the same tag. */
export const entityTagOf = (body: unknown) => tagOfJson(JSON.stringify(body));

const tagOfJson = (json: string) => `"${createHash("sha256").update(json).digest("base64url").slice(0, 27)}"`;

/** A 200 kept and served to many readers (`json`): its body serialized once, and tagged from that. */
export function keptAnswer(body: unknown, headers: Record<string, string>): ApiResult {
  const json = JSON.stringify(body);
  return { status: 200, body, json, etag: tagOfJson(json), headers };
}

/** GET and HEAD read; If-None-Match makes them 304 (writes evaluate it before writing instead: `writePreconditions`). */
const isRead = (method: string) => method === "GET" || method === "HEAD";

function toResponse(request: HttpRequest, result: ApiResult): HttpResponseInit {
  const headers: Record<string, string> = { ...result.headers };
  if (result.etag) headers.etag = result.etag;
  if (result.location) headers.location = result.location;
  if (result.replayed) headers["idempotent-replayed"] = "true";
  // A read's If-Match (RFC 9110 13.1.1): a representation the client does not name is 412, before If-None-Match (13.2.2).
  if (isRead(request.method) && result.status === 200 && ifMatchHolds(request.headers.get("if-match") ?? undefined, result.etag ?? "") === false)
    throw preconditionFailed("The resource's current ETag is not one If-Match names.");
  if (isRead(request.method) && result.status === 200 && noneMatchHits(request.headers.get("if-none-match") ?? undefined, result.etag))
    return { status: 304, headers };
  if (result.body === undefined) return { status: result.status, headers };
  const jsonHeaders = { ...headers, "content-type": "application/json" };
  return result.json === undefined
    ? { status: result.status, headers: jsonHeaders, jsonBody: result.body }
    : { status: result.status, headers: jsonHeaders, body: result.json };
}

/**
 * A route's handler as `work` on its declared inputs (validated first): problem+json for every
 * error, ETag/Location headers, HEAD as GET without a body.
 */
export function endpoint<const D extends Declared>(declared: D, work: (input: ApiInput<D>) => Promise<ApiResult>): Endpoint {
  const handler = async (request: HttpRequest, context: InvocationContext, services: AppServices): Promise<HttpResponseInit> => {
    let response: HttpResponseInit;
    try {
      const input = (await inputOf(declared, request, context, services)) as ApiInput<D>;
      response = toResponse(request, await work(input));
    } catch (error) {
      response = problemResponse(error, (message, cause) => context.error(message, cause));
      // The request's span (instrumented's) records what made it a 5xx: caught here, it would otherwise never see it.
      if ((response.status ?? 500) >= 500) trace.getActiveSpan()?.recordException(error as Error);
    }
    // HEAD: GET's status and headers, no body (RFC 9110 9.3.2).
    if (request.method === "HEAD") return { status: response.status, headers: response.headers };
    return response;
  };
  return { declared, handler };
}
