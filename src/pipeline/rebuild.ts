import { ChangeFeedStartFrom, StatusCodes } from "@azure/cosmos";
import { store } from "../store/client";
import { FEED_PARTITION } from "../store/feed";
import { handlePostsChanges } from "./posts-change-feed";

export interface RebuildProgress {
  /** Called once with the number of posts to replay, then after each page with how many it held. */
  total(posts: number): void;
  advance(posts: number): void;
}

/** Deletes every short-form copy: the `feed` partition and the post copies in `users`. */
async function clearCopies(): Promise<number> {
  const { users, feed } = store();
  const copies = await users.items.query<{ id: string; userId: string }>({ query: "SELECT c.id, c.userId FROM c WHERE c.type = @type", parameters: [{ name: "@type", value: "post" }] }).fetchAll();
  const feedItems = await feed.items.query<{ id: string }>("SELECT c.id FROM c", { partitionKey: FEED_PARTITION }).fetchAll();
  for (const copy of copies.resources) await users.item(copy.id, copy.userId).delete();
  for (const item of feedItems.resources) await feed.item(item.id, FEED_PARTITION).delete();
  return copies.resources.length + feedItems.resources.length;
}

/**
 * The article's one-time catch-up: replays the `posts` change feed from the beginning through
 * the same handler the live pipeline uses, rebuilding Q3 and Q6 copies. Idempotent; with
 * `fresh`, existing copies are deleted first.
 */
export async function rebuildViews(options: { fresh: boolean; progress?: RebuildProgress }): Promise<{ cleared: number; posts: number }> {
  const cleared = options.fresh ? await clearCopies() : 0;
  const { posts } = store();
  const count = await posts.items.query<number>({ query: "SELECT VALUE COUNT(1) FROM p WHERE p.type = @type", parameters: [{ name: "@type", value: "post" }] }).fetchAll();
  options.progress?.total(count.resources[0] ?? 0);
  const iterator = posts.items.getChangeFeedIterator<{ type?: string }>({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning(), maxItemCount: 200 });
  let replayed = 0;
  for (;;) {
    const page = await iterator.readNext();
    if (page.statusCode === StatusCodes.NotModified) break;
    await handlePostsChanges(page.result);
    const postsInPage = page.result.filter((item) => item.type === "post").length;
    replayed += postsInPage;
    options.progress?.advance(postsInPage);
  }
  return { cleared, posts: replayed };
}
