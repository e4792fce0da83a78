import type { HttpResponseInit } from "@azure/functions";
import { DomainError, IssuerUnavailableError, MalformedItemError, type ProblemKind } from "../model/errors";
import { cosmosStatus, identityFailure, isStoreUnavailable } from "../store/failures";

const STATUS: Record<ProblemKind, { status: number; title: string }> = {
  invalid: { status: 400, title: "Bad Request" },
  unauthenticated: { status: 401, title: "Unauthorized" },
  unauthorized: { status: 401, title: "Unauthorized" },
  forbidden: { status: 403, title: "Forbidden" },
  notFound: { status: 404, title: "Not Found" },
  conflict: { status: 409, title: "Conflict" },
  preconditionFailed: { status: 412, title: "Precondition Failed" },
  tooLarge: { status: 413, title: "Payload Too Large" },
  unsupportedMediaType: { status: 415, title: "Unsupported Media Type" },
  unprocessable: { status: 422, title: "Unprocessable Content" },
};

/** A 401's challenge (RFC 6750 3): an error code only when the client sent credentials that failed. */
const CHALLENGES: Partial<Record<ProblemKind, Record<string, string>>> = {
  unauthenticated: { "www-authenticate": "Bearer" },
  unauthorized: { "www-authenticate": 'Bearer error="invalid_token"' },
};

/** What a 503 for the app's identity asks the client to wait: a role assignment propagates in minutes. */
const IDENTITY_RETRY_AFTER_SECONDS = 30;

/** Each reason is logged once per instance: every request would otherwise repeat it while the role propagates. */
const logged = new Set<string>();
function logOnce(reason: string, write: () => void): void {
  if (logged.has(reason)) return;
  logged.add(reason);
  write();
}

/** What a 503 for the token issuer asks the client to wait: its discovery is tried again then. */
const ISSUER_RETRY_AFTER_SECONDS = 5;

/** What a 503 asks the client to wait: long enough for a timed-out partition or a restarting store. */
const STORE_RETRY_AFTER_SECONDS = 2;

/**
 * One RFC 9457 problem answer: the shape every error of the API, and of the local host itself,
 * takes. Its type is about:blank (the status and its title say it all, RFC 9457 4.2.1) unless
 * the API has a type of its own for it (PROBLEM_TYPES).
 */
export function problemAnswer(
  status: number,
  title: string,
  detail: string,
  extra: { headers?: Record<string, string>; errors?: unknown[]; type?: string } = {},
): HttpResponseInit & { status: number; headers: Record<string, string> } {
  return {
    status,
    headers: { "content-type": "application/problem+json", ...extra.headers },
    jsonBody: { type: extra.type ?? "about:blank", title, status, detail, ...(extra.errors ? { errors: extra.errors } : {}) },
  };
}

/** RFC 9457 problem details: the one place errors become HTTP responses. */
export function problemResponse(error: unknown, log: (message: string, error: unknown) => void): HttpResponseInit {
  if (error instanceof DomainError) {
    const { status, title } = STATUS[error.kind];
    const headers: Record<string, string> = { ...CHALLENGES[error.kind] };
    return problemAnswer(status, title, error.detail, { headers, errors: error.errors, type: error.problemType });
  }
  if (isThrottled(error)) {
    // Cosmos DB is out of request units for this partition even after the SDK's retries: the
    // client may try again, after the wait Cosmos DB asked for (at least a second).
    const seconds = Math.max(1, Math.ceil((error.retryAfterInMs ?? 1000) / 1000));
    return retryLater(429, "Too Many Requests", seconds, `Too many requests for this resource right now; retry after ${seconds} s.`);
  }
  const identity = identityFailure(error);
  if (identity) {
    // The app's identity, not the client and not a defect: unavailable until the operator (or the role propagation) mends it.
    logOnce(identity, () => log(`${identity}; answering 503 until it is mended`, error));
    return retryLater(
      503,
      "Service Unavailable",
      IDENTITY_RETRY_AFTER_SECONDS,
      `The data store refuses this app right now; retry after ${IDENTITY_RETRY_AFTER_SECONDS} s.`,
    );
  }
  if (error instanceof IssuerUnavailableError) {
    // The issuer's trouble, not the token's: the client may retry with the same token.
    logOnce(error.message, () => log("token issuer unavailable", error));
    return retryLater(
      503,
      "Service Unavailable",
      ISSUER_RETRY_AFTER_SECONDS,
      `The token issuer cannot be reached to check the token; retry after ${ISSUER_RETRY_AFTER_SECONDS} s.`,
    );
  }
  if (isStoreUnavailable(error)) {
    // Cosmos DB timed out, was unavailable or unreachable: nothing the client did; it may retry.
    log("store unavailable", error);
    return retryLater(
      503,
      "Service Unavailable",
      STORE_RETRY_AFTER_SECONDS,
      `The data store is unavailable right now; retry after ${STORE_RETRY_AFTER_SECONDS} s.`,
    );
  }
  if (error instanceof MalformedItemError) {
    // Data written behind the API's back: ours to fix, so a 500, but one that says what it is.
    log("malformed item", error);
    return problemAnswer(
      500,
      "Internal Server Error",
      `The stored ${error.container} item '${error.itemId}' is malformed and cannot be served; the reason is logged for the operator.`,
    );
  }
  // Anything else is our fault, never the client's: log it, reveal nothing.
  log("unhandled error", error);
  return problemAnswer(500, "Internal Server Error", "The request could not be completed.");
}

/** A problem the client may retry after `seconds` (429, 503), saying so in `Retry-After`. */
function retryLater(status: 429 | 503, title: string, seconds: number, detail: string): HttpResponseInit {
  return problemAnswer(status, title, detail, { headers: { "retry-after": String(seconds) } });
}

/** A Cosmos DB ErrorResponse for a throttled request (429) that the SDK stopped retrying. */
const isThrottled = (error: unknown): error is { code: 429; retryAfterInMs?: number } => cosmosStatus(error) === 429;
