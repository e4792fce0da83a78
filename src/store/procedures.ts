import type { Container } from "@azure/cosmos";

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
