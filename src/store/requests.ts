import type { Container } from "@azure/cosmos";

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

/**
 * Calls a bounded stored procedure until it returns no continuation, passing each call's
 * continuation to the next; every response body goes to `onResult`.
 */
export async function executeUntilDone<T extends { continuation?: string | null }>(
  container: Container,
  name: string,
  partitionKey: string,
  params: (continuation: string | null) => unknown[],
  onResult: (result: T) => void,
): Promise<void> {
  let continuation: string | null = null;
  do {
    const result: T = await executeProcedure<T>(container, name, partitionKey, params(continuation));
    onResult(result);
    continuation = result.continuation ?? null;
  } while (continuation !== null);
}

/** Runs a stored procedure in one logical partition and returns its response body. */
export async function executeProcedure<T>(container: Container, name: string, partitionKey: string, params: unknown[]): Promise<T> {
  const { resource } = await container.scripts.storedProcedure(name).execute<T>(partitionKey, params);
  return resource as T;
}
