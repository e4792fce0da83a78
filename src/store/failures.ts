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

/** True when Cosmos DB could not be reached or could not serve the request: worth retrying later, not the caller's fault. */
export const isStoreUnavailable = (error: unknown): boolean => {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === "number" ? UNAVAILABLE_STATUSES.has(code) : typeof code === "string" && NETWORK_ERROR_CODES.has(code);
};
