import type { Container, ItemDefinition } from "@azure/cosmos";
import type { PostItem } from "../model/items";
import { LIMITS } from "../model/limits";
import { toShortForm, type ShortPost } from "../model/short-form";
import type { BlogStore } from "./client";
import { POST_TRIGGERS } from "./definitions";
import { FEED_PARTITION } from "./feed";
import { cosmosStatus } from "./failures";

/** A short-form copy remembers which version of the post it was made from. */
export type PostCopy = ShortPost & { sourceLsn: number };

/**
 * What a deleted post leaves in place of its copy: the version it was deleted at, so a late
 * or redelivered older version can never bring the copy back, and a TTL. Q3 and Q6 skip it.
 */
export type Tombstone = Pick<PostItem, "id" | "type" | "postId" | "userId" | "creationDate"> & {
  deleted: true;
  deletedDate: string;
  ttl: number;
  sourceLsn: number;
};

/** A post as the change feed delivers it: with its log sequence number. */
export type PostChange = PostItem & { _lsn: number };

export interface CopyTarget {
  container: Container;
  partitionKey: string;
  triggers?: string[];
}

/** Where a user's posts (Q3, listUserPosts) keep their copies: the author's partition of users. */
export const userPosts = (store: BlogStore, post: { userId: string }): CopyTarget => ({ container: store.users, partitionKey: post.userId });

/** The feed (Q6); every live copy written there runs the truncating trigger in its transaction. */
export const feed = (store: BlogStore): CopyTarget => ({ container: store.feed, partitionKey: FEED_PARTITION, triggers: [POST_TRIGGERS.truncateFeed] });

export const copyOf = (post: PostChange): PostCopy => ({ ...toShortForm(post), sourceLsn: post._lsn });

export function tombstoneOf(post: PostChange, ttl: number): Tombstone {
  const { id, postId, userId, creationDate } = post;
  return {
    id,
    type: "post",
    postId,
    userId,
    creationDate,
    deleted: true,
    deletedDate: post.deletedDate ?? new Date().toISOString(),
    ttl,
    sourceLsn: post._lsn,
  };
}

/**
 * Writes `item` unless the stored one was made from the same or a newer version, so a
 * redelivered or late batch never puts an older version over a newer one (or over a
 * tombstone). Optimistic: create-if-absent or replace-if-unchanged, retried on a lost race.
 * Returns whether it wrote.
 */
export async function writeIfNewer(target: CopyTarget, item: PostCopy | Tombstone): Promise<boolean> {
  const options = target.triggers && !("deleted" in item) ? { postTriggerInclude: target.triggers } : {};
  for (;;) {
    const { resource: existing } = await target.container.item(item.id, target.partitionKey).read<(PostCopy | Tombstone) & ItemDefinition>();
    if (existing && existing.sourceLsn >= item.sourceLsn) return false;
    try {
      if (!existing) await target.container.items.create(item, options);
      else
        await target.container
          .item(item.id, target.partitionKey)
          .replace(item, { ...options, accessCondition: { type: "IfMatch", condition: existing._etag as string } });
      return true;
    } catch (error) {
      if (cosmosStatus(error) !== 409 && cosmosStatus(error) !== 412) throw error;
    }
  }
}

/** Writes `copy` only where nothing (no copy, no tombstone) exists yet: the feed's backfill. */
export async function createIfAbsent(target: CopyTarget, copy: PostCopy): Promise<boolean> {
  try {
    await target.container.items.create(copy, target.triggers ? { postTriggerInclude: target.triggers } : {});
    return true;
  } catch (error) {
    if (cosmosStatus(error) === 409) return false;
    throw error;
  }
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
export async function readFeedEntries(store: BlogStore): Promise<FeedEntry[]> {
  const { resources } = await store.feed.items
    .query<FeedEntry>(
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
export async function newestLivePosts(store: BlogStore, count: number = LIMITS.feedSize): Promise<(PostItem & { _lsn?: number })[]> {
  const { resources } = await store.posts.items
    .query<PostItem & { _lsn?: number }>({
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
