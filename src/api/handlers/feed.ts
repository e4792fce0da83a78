import { readFeedCached } from "../../store/feed";
import { entityTagOf } from "../http";
import { endpoint } from "../http";
import { feedQuery } from "../schemas";
import { servedItems } from "../served";

/** A CDN or browser may serve the feed for a second, and a stale one while it fetches anew. */
const FEED_CACHE_CONTROL = "public, max-age=1, stale-while-revalidate=5";

/** GET /feed — Q6: the newest posts in short form, from the single feed partition (through the instance's micro-cache). */
export const getFeed = endpoint({ query: feedQuery }, async ({ query, warn }) => {
  const body = { items: servedItems("feed", await readFeedCached(query.limit), warn) };
  return { status: 200, body, etag: entityTagOf(body), headers: { "cache-control": FEED_CACHE_CONTROL } };
});
