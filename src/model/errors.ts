/** Outcomes the API reports as client errors; mapped to problem+json in one place (api/problems.ts). */
export type ProblemKind =
  | "invalid"
  | "unauthenticated"
  | "unauthorized"
  | "forbidden"
  | "notFound"
  | "conflict"
  | "preconditionFailed"
  | "tooLarge"
  | "unsupportedMediaType"
  | "unprocessable";

/** One thing that was wrong with a request: where (a field, a header, a parameter) and what. */
export interface FieldError {
  path: string;
  message: string;
}

export class DomainError extends Error {
  constructor(
    readonly kind: ProblemKind,
    readonly detail: string,
    readonly errors?: FieldError[],
    /** A problem type of the API's own (RFC 9457 `type`), where the status alone does not say what happened. */
    readonly problemType?: string,
  ) {
    super(detail);
  }
}

/** The problem type of every write by an erased account: a client can tell it from other 403s and sign the user out. */
export const ACCOUNT_ERASED = "tag:blog-cosmos-functions,2026:account-erased";

/** The problem type of a write by a caller who has no profile yet: a client can send them to create one. */
export const PROFILE_REQUIRED = "tag:blog-cosmos-functions,2026:profile-required";

/**
 * Every problem type the API answers: about:blank for a problem its status describes, and the
 * API's own. Each own type is a tag URI (RFC 4151) minted by the project, so it names the
 * problem without pointing at a page anyone else controls; docs/api.md describes each.
 */
export const PROBLEM_TYPES = ["about:blank", ACCOUNT_ERASED, PROFILE_REQUIRED] as const;

export const profileRequired = () => new DomainError("forbidden", "Create your profile first (POST /api/users).", undefined, PROFILE_REQUIRED);
export const notFound = (detail: string) => new DomainError("notFound", detail);
export const conflict = (detail: string) => new DomainError("conflict", detail);
export const forbidden = (detail: string) => new DomainError("forbidden", detail);
export const accountErased = (userId: string) =>
  new DomainError(
    "forbidden",
    `The account '${userId}' was erased: it can no longer write, and its profile cannot be created again.`,
    undefined,
    ACCOUNT_ERASED,
  );
export const preconditionFailed = (detail = "The resource has changed since it was read (If-Match does not match).") =>
  new DomainError("preconditionFailed", detail);
/** A 400 always names what was wrong, so a client can show it next to the field. */
export const invalid = (detail: string, errors: FieldError[]) => new DomainError("invalid", detail, errors);
/** A request with credentials that do not hold (a bad, expired or foreign token). */
export const unauthorized = (detail: string) => new DomainError("unauthorized", detail);
/** A request with no credentials at all: also a 401, but with no error code in its challenge (RFC 6750 3.1). */
export const unauthenticated = (detail: string) => new DomainError("unauthenticated", detail);
export const tooLarge = (detail: string) => new DomainError("tooLarge", detail);
/** A well-formed request that contradicts an earlier one (an Idempotency-Key reused with another body). */
export const unprocessable = (detail: string) => new DomainError("unprocessable", detail);
export const unsupportedMediaType = (detail: string) => new DomainError("unsupportedMediaType", detail);

/**
 * A stored item that fails its schema (written behind the API's back). It is never served as
 * it is: the API answers a 500 problem naming it, and logs why.
 */
export class MalformedItemError extends Error {
  constructor(
    readonly container: string,
    readonly itemId: string,
    readonly reason: string,
  ) {
    super(`${container} item '${itemId}' is malformed: ${reason}`);
  }
}

/**
 * The token issuer's discovery document or signing keys could not be had (no answer in time, an
 * error, an oversized or malformed document). Nothing the client did: the API answers 503 with
 * Retry-After, never `invalid_token`, which would tell the client its token is bad.
 */
export class IssuerUnavailableError extends Error {
  constructor(
    readonly issuer: string,
    reason: string,
  ) {
    super(`The token issuer ${issuer} is unavailable: ${reason}`);
  }
}
