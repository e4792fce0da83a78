import type { Container, SqlQuerySpec } from "@azure/cosmos";
import { invalid } from "../model/errors";

/** The HTTP status of a failed SDK call, if it has one. */
export const cosmosStatus = (error: unknown): number | undefined => {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === "number" ? code : undefined;
};

export interface Page<T> {
  items: T[];
  continuationToken?: string;
}

/**
 * One page of a single-partition query: exactly one query request (plus the SDK's query
 * plan request). A continuation the service rejects is the caller's bad input.
 */
export async function queryPage<T>(container: Container, query: SqlQuerySpec, partitionKey: string, limit: number, continuationToken?: string): Promise<Page<T>> {
  try {
    const page = await container.items.query<T>(query, { partitionKey, maxItemCount: limit, continuationToken }).fetchNext();
    return { items: page.resources, continuationToken: page.continuationToken || undefined };
  } catch (error) {
    if (continuationToken !== undefined && cosmosStatus(error) === 400) throw invalid("continuationToken is not valid for this list.");
    throw error;
  }
}

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
