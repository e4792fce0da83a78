import { LIMITS } from "../model/limits";
import type { ShortPost } from "../model/short-form";
import { recordFeedCache } from "../telemetry";
import { perStore, type BlogStore } from "./client";

/** The feed container's only partition key value: every item is a post. */
export const FEED_PARTITION = "post";

/** Q6: the `limit` newest live posts in short form, from the single `feed` partition. */
export async function readFeed(store: BlogStore, limit: number): Promise<ShortPost[]> {
  const { resources } = await store.feed.items
    .query<ShortPost>(
      {
        query: "SELECT TOP @limit * FROM f WHERE f.type = @type AND NOT IS_DEFINED(f.deleted) ORDER BY f.type DESC, f.creationDate DESC, f.id DESC",
        parameters: [
          { name: "@limit", value: limit },
          { name: "@type", value: FEED_PARTITION },
        ],
      },
      { partitionKey: FEED_PARTITION, maxItemCount: limit },
    )
    .fetchNext();
  return resources;
}

interface FeedCache {
  items?: ShortPost[];
  readAt: number;
  refresh?: Promise<ShortPost[]>;
  /** The first `limit` items of this turn, by limit: one array each, so what a reader makes of it can be kept with it. */
  pages: Map<number, readonly ShortPost[]>;
}

/** The first `limit` of a turn's items, the same array for every reader of the turn. */
function pageOf(cache: FeedCache, items: ShortPost[], limit: number): readonly ShortPost[] {
  if (cache.items !== items) return items.slice(0, limit); // a turn already replaced: this reader's alone
  let page = cache.pages.get(limit);
  if (!page) cache.pages.set(limit, (page = items.slice(0, limit)));
  return page;
}

/** One micro-cache per store, so each process (a function instance) keeps its own. */
const feedCacheOf = perStore<FeedCache>(() => ({ readAt: 0, pages: new Map() }));

/**
 * Q6 through the instance's micro-cache: the 100 newest, read at most once per `feedCacheMs`
 * however many readers come at once (single flight: concurrent misses share one request), so
 * the feed's single partition sees a request rate per instance, not per reader. The feed is
 * fed by the change feed, so it is already a moment behind; a second more is the price.
 */
export async function readFeedCached(store: BlogStore, limit: number): Promise<readonly ShortPost[]> {
  const ttlMs = store.settings.feedCacheMs;
  if (ttlMs <= 0) return readFeed(store, limit);
  const cache = feedCacheOf(store);
  const hit = cache.items !== undefined && store.now() - cache.readAt < ttlMs;
  recordFeedCache(hit);
  if (hit) return pageOf(cache, cache.items!, limit);
  cache.refresh ??= (async () => {
    const startedAt = store.now();
    try {
      const items = await readFeed(store, LIMITS.feedSize);
      cache.items = items;
      cache.pages = new Map();
      cache.readAt = startedAt;
      return items;
    } finally {
      cache.refresh = undefined;
    }
  })();
  return pageOf(cache, await cache.refresh, limit);
}
