/**
 * What a failed Cosmos DB call says, as the change feed host reads it: its status, and whether
 * the account could not answer right now (so the host waits and polls again, as the trigger does).
 */

/** The HTTP status of a failed @azure/cosmos call, when it got an answer. */
export const cosmosStatus = (error: unknown): number | undefined => {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === "number" ? code : undefined;
};

/** Statuses Cosmos DB answers when it could not serve a request right now (timeout, unavailable, retry with). */
const UNAVAILABLE_STATUSES = new Set([408, 449, 503]);
/** Network failures reaching the account: the request never got an answer. */
const NETWORK_ERROR_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "ENOTFOUND", "EAI_AGAIN", "EPIPE", "REQUEST_SEND_ERROR", "TimeoutError"]);

/** Whether the account could not answer right now: try again later, nothing is wrong with the request. */
export const isStoreUnavailable = (error: unknown): boolean => {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === "number" ? UNAVAILABLE_STATUSES.has(code) : typeof code === "string" && NETWORK_ERROR_CODES.has(code);
};

/** Whether a request may succeed if sent again: the account could not answer, or asked to wait (429). */
export const isTransient = (error: unknown): boolean => isStoreUnavailable(error) || cosmosStatus(error) === 429;
