import { withoutSystemFields } from "../model/items";
import { invalid } from "../model/errors";
import type { Page } from "../store/requests";
import type { ApiCall, ApiResult } from "./http";
import { listQuery } from "./schemas";

/**
 * Continuation tokens are opaque to clients: the Cosmos DB token, wrapped and base64url
 * encoded, bound to the list it came from so it cannot be replayed against another.
 */
function encodeContinuation(list: string, cosmosToken: string | undefined): string | null {
  if (!cosmosToken) return null;
  return Buffer.from(JSON.stringify({ l: list, t: cosmosToken }), "utf8").toString("base64url");
}

function decodeContinuation(list: string, token: string | undefined): string | undefined {
  if (token === undefined) return undefined;
  try {
    const parsed = JSON.parse(Buffer.from(token, "base64url").toString("utf8")) as { l?: unknown; t?: unknown };
    if (parsed.l === list && typeof parsed.t === "string" && parsed.t.length > 0) return parsed.t;
  } catch {
    // fall through to the same answer as a well-formed token for another list
  }
  throw invalid("continuationToken is not valid for this list.");
}

/**
 * A paged list response: validates `limit` and `continuationToken`, fetches one page of the
 * list named `list`, and returns `{items, continuationToken}` with system fields removed.
 */
export async function pagedList<T extends object>(call: ApiCall, list: string, fetchPage: (limit: number, cosmosToken?: string) => Promise<Page<T>>): Promise<ApiResult> {
  const { limit, continuationToken } = call.query(listQuery);
  const page = await fetchPage(limit, decodeContinuation(list, continuationToken));
  return { status: 200, body: { items: page.items.map(withoutSystemFields), continuationToken: encodeContinuation(list, page.continuationToken) } };
}
