import type { PostsContainerItem } from "../model/items";
import type { BlogStore } from "../store/client";
import { finishDeletion } from "../store/posts";
import { recordContributions, type Contribution } from "../store/contributions";
import { eraseLateOwnPost, eraseLateWritingOnPost } from "../store/erasure";
import { readAccountDocument, readWellFormedUser } from "../store/users";
import { rewriteUsernamesInPartition } from "../store/username-propagation";
import { copyOf, createIfAbsent, feed, newestLivePosts, readFeedEntries, tombstoneOf, userPosts, writeIfNewer, type PostChange } from "../store/copies";
import { feedWritePlan, FeedWindow } from "./feed-window";
import { FEED_REFRESH, feedRefreshInstanceId, type FeedRefreshInput } from "./feed-refresh";
import type { PipelineServices } from "./pipeline-services";

type Change = PostsContainerItem & { _lsn: number };

const isPostsItem = (doc: unknown): doc is Change => {
  const type = (doc as { type?: unknown } | null)?.type;
  return type === "post" || type === "comment" || type === "like";
};

/**
 * An item written with a username the user no longer has (it read the profile just before a
 * rename): rewrite that partition with the current name. This closes the race the propagation
 * orchestration alone cannot see, because new writes only appear here.
 */
async function repairStaleUsernames(store: BlogStore, changes: Change[]): Promise<void> {
  const live = changes.filter((c) => !c.deleted);
  for (const userId of new Set(live.map((c) => c.userId))) {
    const user = await readWellFormedUser(store, userId);
    if (!user) continue;
    const stalePosts = new Set(live.filter((c) => c.userId === userId && c.userUsername !== user.username).map((c) => c.postId));
    for (const postId of stalePosts) await rewriteUsernamesInPartition(store, postId, userId, user.username);
  }
}

/**
 * What this batch wrote into the partition of an account erased meanwhile (its post's copy in
 * the author's list, the record of where someone wrote) is erased again, with the items it is
 * about, as the erasure would have. The accounts are read after the writes, not before: an
 * erasure asked for after this read runs its sweep after these writes, and finds them. Every
 * writer of the batch is read, not only those this delivery wrote for: a delivery cut off
 * between its writes and this read comes again, and then finds its writes already made.
 */
async function eraseForErasedAccounts(store: BlogStore, posts: readonly PostChange[], writing: readonly Contribution[]): Promise<void> {
  for (const userId of new Set([...posts.map((post) => post.userId), ...writing.map((contribution) => contribution.userId)])) {
    if ((await readAccountDocument(store, userId))?.type !== "erasure") continue;
    for (const post of posts) if (post.userId === userId) await eraseLateOwnPost(store, userId, post.postId);
    for (const postId of new Set(writing.filter((contribution) => contribution.userId === userId).map((contribution) => contribution.postId)))
      await eraseLateWritingOnPost(store, userId, postId);
  }
}

/** Refills the feed from the source after deletions left it short of the 100 newest live posts. */
async function refillFeed(store: BlogStore): Promise<void> {
  const window = new FeedWindow(await readFeedEntries(store));
  if (window.full) return;
  for (const post of await newestLivePosts(store)) {
    if (!window.entry(post.postId)) await createIfAbsent(feed(store), copyOf({ ...post, _lsn: post._lsn ?? 0 }));
  }
}

/**
 * Q6: new and changed posts inside the window are copied (never a post older than the 100th);
 * a deleted post inside it leaves a tombstone, and the next newest live post takes its place.
 */
async function syncFeed(store: BlogStore, posts: PostChange[], services: Partial<PipelineServices>): Promise<void> {
  const window = new FeedWindow(await readFeedEntries(store));
  const starter = services.orchestrations;
  // Without orchestrations to defer to (a rebuild), every change is written at once.
  const refreshSeconds = starter ? store.settings.feedRefreshSeconds : 0;
  let gap = false;
  for (const post of posts) {
    if (!window.admits(post)) continue;
    if (!post.deleted) {
      const plan = feedWritePlan(window.entry(post.postId), post, refreshSeconds, Date.now());
      if (plan === "now") await writeIfNewer(feed(store), copyOf(post));
      else if (plan !== "skip") {
        const refresh: FeedRefreshInput = { postId: post.postId, sourceLsn: post._lsn, dueAt: new Date(plan.dueAtMs).toISOString(), policy: services.policy };
        await starter!.ensureStarted(FEED_REFRESH, feedRefreshInstanceId(post.postId, plan.dueAtMs), refresh);
      }
    } else if ((await writeIfNewer(feed(store), tombstoneOf(post, store.settings.softDeleteTtlSeconds))) && window.holds(post.postId)) gap = true;
  }
  if (gap) await refillFeed(store);
}

/**
 * The `posts` change feed: keep usernames right, record where each comment's and like's writer
 * wrote, finish any deletion left undone, then bring the short-form copies up to date: the
 * author's list (Q3) follows every change, the feed (Q6) only its window, and counter-only
 * changes there at most once per FEED_REFRESH_SECONDS per post (a durable refresh picks up the
 * rest); last, what it wrote for an account erased meanwhile is erased again. Idempotent, so
 * at-least-once delivery is safe.
 * A throw makes the host retry the batch.
 */
export async function handlePostsChanges(store: BlogStore, documents: unknown[], services: Partial<PipelineServices> = {}): Promise<void> {
  const changes = documents.filter(isPostsItem);
  await repairStaleUsernames(store, changes);
  // Where each writer wrote, in their own partition: what export and erasure read. A soft-deleted
  // comment or like counts too: until its TTL runs out it still carries the writer's id and name.
  const writing = changes.filter((change) => change.type !== "post");
  await recordContributions(store, writing);
  const posts = changes.filter((change): change is PostChange => change.type === "post");
  for (const post of posts) {
    if (post.deleted) await finishDeletion(store, post.postId);
    const ttl = store.settings.softDeleteTtlSeconds;
    await writeIfNewer(userPosts(store, post), post.deleted ? tombstoneOf(post, ttl) : copyOf(post));
  }
  if (posts.length > 0) await syncFeed(store, posts, services);
  await eraseForErasedAccounts(store, posts, writing);
}
