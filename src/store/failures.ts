// How a failed Cosmos DB request is classified: its status, and whether it is worth retrying later.
/** The HTTP status of a failed SDK call, if it has one. */
export const cosmosStatus = (error: unknown): number | undefined => {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === "number" ? code : undefined;
};

/** Statuses Cosmos DB answers when it could not serve a request right now (timeout, unavailable, retry with). */
const UNAVAILABLE_STATUSES = new Set([408, 449, 503]);
/** Network failures reaching the account: the request never got an answer. */
const NETWORK_ERROR_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "ENOTFOUND", "EAI_AGAIN", "EPIPE", "REQUEST_SEND_ERROR", "TimeoutError"]);

/**
 * Why the app's own identity could not use Cosmos DB, when that is the failure: Cosmos DB's 403
 * with the RBAC sub-status 5301 (a role assignment missing, or still propagating, which takes
 * minutes after a deploy), or a credential that could not get a token (no managed identity).
 * Not the caller's fault and, for a propagating role, gone soon: worth a 503, with the reason
 * logged for the operator.
 */
export function identityFailure(error: unknown): string | undefined {
  const failure = error as { substatus?: unknown; name?: unknown; message?: unknown } | undefined;
  if (cosmosStatus(error) === 403 && failure?.substatus === 5301)
    return "Cosmos DB refused the app's identity (403/5301): its data-plane role assignment is missing or still propagating";
  if (failure?.name === "CredentialUnavailableError" || failure?.name === "AuthenticationError" || failure?.name === "AggregateAuthenticationError")
    return `the app's credential could not get a token for Cosmos DB (${String(failure.name)}): ${String(failure.message ?? "").split("\n")[0]}`;
  return undefined;
}

/** True when Cosmos DB could not be reached or could not serve the request: worth retrying later, not the caller's fault. */
export const isStoreUnavailable = (error: unknown): boolean => {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === "number" ? UNAVAILABLE_STATUSES.has(code) : typeof code === "string" && NETWORK_ERROR_CODES.has(code);
};
