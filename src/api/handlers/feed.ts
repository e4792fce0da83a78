import { createHash } from "node:crypto";
import { withoutSystemFields } from "../../model/items";
import { readFeedCached } from "../../store/feed";
import { endpoint } from "../http";
import { feedQuery } from "../schemas";

/** A CDN or browser may serve the feed for a second, and a stale one while it fetches anew. */
export const FEED_CACHE_CONTROL = "public, max-age=1, stale-while-revalidate=5";

/** A strong entity tag for a JSON body: the same items in the same order, the same tag. */
export const entityTagOf = (body: unknown) => `"${createHash("sha256").update(JSON.stringify(body)).digest("base64url").slice(0, 27)}"`;

/** GET /feed — Q6: the newest posts in short form, from the single feed partition (through the instance's micro-cache). */
export const getFeed = endpoint(async (call) => {
  const { limit } = call.query(feedQuery);
  const body = { items: (await readFeedCached(limit)).map(withoutSystemFields) };
  return { status: 200, body, etag: entityTagOf(body), headers: { "cache-control": FEED_CACHE_CONTROL } };
});
