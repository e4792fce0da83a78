import type { PostItem } from "../model/items";
import { LIMITS } from "../model/limits";
import type { ShortPost } from "../model/short-form";
import { recordFeedCache } from "../telemetry";
import { store, type BlogStore } from "./client";

/** The feed container's only partition key value: every item is a post. */
export const FEED_PARTITION = "post";

/** Q6: the `limit` newest live posts in short form, from the single `feed` partition. */
export async function readFeed(limit: number): Promise<ShortPost[]> {
  const { resources } = await store()
    .feed.items.query<ShortPost>(
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
}

/** One micro-cache per store, so each process (a function instance) keeps its own. */
const feedCaches = new WeakMap<BlogStore, FeedCache>();

/**
 * Q6 through the instance's micro-cache: the 100 newest, read at most once per `feedCacheMs`
 * however many readers come at once (single flight: concurrent misses share one request), so
 * the feed's single partition sees a request rate per instance, not per reader. The feed is
 * fed by the change feed, so it is already a moment behind; a second more is the price.
 */
export async function readFeedCached(limit: number): Promise<ShortPost[]> {
  const current = store();
  const ttlMs = current.settings.feedCacheMs;
  if (ttlMs <= 0) return readFeed(limit);
  let cache = feedCaches.get(current);
  if (!cache) feedCaches.set(current, (cache = { readAt: 0 }));
  const hit = cache.items !== undefined && current.now() - cache.readAt < ttlMs;
  recordFeedCache(hit);
  if (hit) return cache.items!.slice(0, limit);
  const entry = cache;
  entry.refresh ??= (async () => {
    const startedAt = current.now();
    try {
      const items = await readFeed(LIMITS.feedSize);
      entry.items = items;
      entry.readAt = startedAt;
      return items;
    } finally {
      entry.refresh = undefined;
    }
  })();
  return (await entry.refresh).slice(0, limit);
}

/** What the pipeline needs to know of one feed entry (a live copy or a tombstone). */
export interface FeedEntry {
  id: string;
  creationDate: string;
  sourceLsn: number;
  deleted?: boolean;
  userUsername?: string;
  title?: string;
  content?: string;
  commentCount?: number;
  likeCount?: number;
  /** When the copy was last written (seconds): a counter-only change waits until FEED_REFRESH_SECONDS after it. */
  _ts?: number;
}

/** Every entry of the feed partition, newest first: at most 100 live copies plus recent tombstones. */
export async function readFeedEntries(): Promise<FeedEntry[]> {
  const { resources } = await store()
    .feed.items.query<FeedEntry>(
      {
        query:
          "SELECT f.id, f.creationDate, f.sourceLsn, f.deleted, f.userUsername, f.title, f.content, f.commentCount, f.likeCount, f._ts " +
          "FROM f WHERE f.type = @type ORDER BY f.type DESC, f.creationDate DESC, f.id DESC",
        parameters: [{ name: "@type", value: FEED_PARTITION }],
      },
      { partitionKey: FEED_PARTITION },
    )
    .fetchAll();
  return resources;
}

/**
 * The newest live posts at the source (`posts`), newest first by (creationDate, id), for
 * refilling the feed after deletions: a cross-partition query, run only by the pipeline and only
 * when a deletion left a gap.
 */
export async function newestLivePosts(count: number = LIMITS.feedSize): Promise<(PostItem & { _lsn?: number })[]> {
  const { resources } = await store()
    .posts.items.query<PostItem & { _lsn?: number }>({
      // Feed order, ties broken by id as everywhere else; the posts composite index (type DESC,
      // creationDate ASC, id ASC) serves this order reversed.
      query: "SELECT TOP @count * FROM p WHERE p.type = @type AND NOT IS_DEFINED(p.deleted) ORDER BY p.type ASC, p.creationDate DESC, p.id DESC",
      parameters: [
        { name: "@count", value: count },
        { name: "@type", value: "post" },
      ],
    })
    .fetchAll();
  return resources;
}
