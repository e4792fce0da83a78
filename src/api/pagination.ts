import * as z from "zod";
import { invalid, notFound } from "../model/errors";
import type { ItemContainer } from "../model/item-schemas";
import type { ListPosition, Page } from "../store/lists";
import { entityTagOf } from "./endpoint";
import type { ApiResult } from "./endpoint";
import type { listQuery } from "./schemas";
import { servedItems } from "./served";

/**
 * Continuation tokens are opaque to clients: the sort key of the last item served (keyset
 * pagination), bound to the list it came from and base64url encoded. The store turns them
 * into query parameters, never into a Cosmos DB continuation, so no client string ever
 * reaches the SDK's headers.
 */
const position = z.object({
  l: z.string(),
  d: z
    .string()
    .max(64)
    .regex(/^[0-9TZ:.+-]*$/),
  i: z
    .string()
    .min(1)
    .max(300)
    .regex(/^[\x21-\x7e]+$/),
});

function encodeContinuation(list: string, next: ListPosition | undefined): string | null {
  if (!next) return null;
  return Buffer.from(JSON.stringify({ l: list, d: next.date, i: next.id }), "utf8").toString("base64url");
}

function decodeContinuation(list: string, token: string | undefined): ListPosition | undefined {
  if (token === undefined) return undefined;
  try {
    const parsed = position.safeParse(JSON.parse(Buffer.from(token, "base64url").toString("utf8")));
    if (parsed.success && parsed.data.l === list) return { date: parsed.data.d, id: parsed.data.i };
  } catch {
    // not JSON: the same answer as a well-formed token for another list
  }
  throw invalid("continuationToken is not valid for this list.", [{ path: "continuationToken", message: "is not valid for this list" }]);
}

/**
 * A paged list response: from the list's `limit` and `continuationToken` (validated by the
 * endpoint), fetches one page of the
 * list named `list` (undefined when its owner does not exist: 404), and returns
 * `{items, continuationToken}` with system fields removed (and malformed items of `container` left out).
 */
export async function pagedList<T extends object>(
  query: z.infer<typeof listQuery>,
  warn: (message: string) => void,
  container: ItemContainer,
  list: string,
  missing: string,
  fetchPage: (limit: number, after?: ListPosition) => Promise<Page<T> | undefined>,
): Promise<ApiResult> {
  const { limit, continuationToken } = query;
  const page = await fetchPage(limit, decodeContinuation(list, continuationToken));
  if (!page) throw notFound(missing);
  const body = { items: servedItems(container, page.items, warn), continuationToken: encodeContinuation(list, page.next) };
  return { status: 200, body, etag: entityTagOf(body) };
}

/** Where a ranked list (search) goes on: how many results came before, bound to the list (the query) it came from. */
const offsetPosition = z.object({ l: z.string(), o: z.number().int().min(0).max(10_000) });

export function encodeOffset(list: string, offset: number | undefined): string | null {
  return offset === undefined ? null : Buffer.from(JSON.stringify({ l: list, o: offset }), "utf8").toString("base64url");
}

export function decodeOffset(list: string, token: string | undefined): number {
  if (token === undefined) return 0;
  try {
    const parsed = offsetPosition.safeParse(JSON.parse(Buffer.from(token, "base64url").toString("utf8")));
    if (parsed.success && parsed.data.l === list) return parsed.data.o;
  } catch {
    // not JSON: the same answer as a well-formed token for another list
  }
  throw invalid("continuationToken is not valid for this search.", [{ path: "continuationToken", message: "is not valid for this search" }]);
}
