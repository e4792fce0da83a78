import { invalid } from "../model/errors";

/**
 * Continuation tokens are opaque to clients: the Cosmos DB token, wrapped and base64url
 * encoded, bound to the list it came from so it cannot be replayed against another.
 */
export function encodeContinuation(list: string, cosmosToken: string | undefined): string | null {
  if (!cosmosToken) return null;
  return Buffer.from(JSON.stringify({ l: list, t: cosmosToken }), "utf8").toString("base64url");
}

export function decodeContinuation(list: string, token: string | undefined): string | undefined {
  if (token === undefined) return undefined;
  try {
    const parsed = JSON.parse(Buffer.from(token, "base64url").toString("utf8")) as { l?: unknown; t?: unknown };
    if (parsed.l === list && typeof parsed.t === "string" && parsed.t.length > 0) return parsed.t;
  } catch {
    // fall through to the same answer as a well-formed token for another list
  }
  throw invalid("continuationToken is not valid for this list.");
}
