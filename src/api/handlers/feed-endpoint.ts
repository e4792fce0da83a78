import { readFeedCached } from "../../store/feed";
import type { ShortPost } from "../../model/short-form";
import { endpoint, keptAnswer, type ApiResult } from "../endpoint";
import { feedQuery } from "../schemas";
import { servedItems } from "../served";

/** A CDN or browser may serve the feed for a second, and a stale one while it fetches anew. */
const FEED_CACHE_CONTROL = "public, max-age=1, stale-while-revalidate=5";

/**
 * The answer made of each page of the micro-cache, kept with it: every reader of a turn gets the
 * same body, so it is checked, serialized and tagged once a turn, not once a request.
 */
const answers = new WeakMap<readonly ShortPost[], ApiResult>();

/** GET /feed — Q6: the newest posts in short form, from the single feed partition (through the instance's micro-cache). */
export const getFeed = endpoint({ query: feedQuery }, async ({ store, query, warn }) => {
  const page = await readFeedCached(store, query.limit);
  let answer = answers.get(page);
  if (!answer) {
    answer = keptAnswer({ items: servedItems("feed", page, warn) }, { "cache-control": FEED_CACHE_CONTROL });
    answers.set(page, answer);
  }
  return answer;
});
