import { ChangeFeedStartFrom, StatusCodes } from "@azure/cosmos";
import type { BlogStore } from "./client";
import { FEED_PARTITION } from "./feed";

/** Deletes every short-form copy: the `feed` partition and the post copies in `users`; how many. */
export async function clearCopies(store: BlogStore): Promise<number> {
  const { users, feed } = store;
  const copies = await users.items
    .query<{ id: string; userId: string }>({ query: "SELECT c.id, c.userId FROM c WHERE c.type = @type", parameters: [{ name: "@type", value: "post" }] })
    .fetchAll();
  const feedItems = await feed.items.query<{ id: string }>("SELECT c.id FROM c", { partitionKey: FEED_PARTITION }).fetchAll();
  for (const copy of copies.resources) await users.item(copy.id, copy.userId).delete();
  for (const item of feedItems.resources) await feed.item(item.id, FEED_PARTITION).delete();
  return copies.resources.length + feedItems.resources.length;
}

/** How many posts the `posts` container holds (a cross-partition count, for progress). */
export async function countPosts(store: BlogStore): Promise<number> {
  const count = await store.posts.items
    .query<number>({ query: "SELECT VALUE COUNT(1) FROM p WHERE p.type = @type", parameters: [{ name: "@type", value: "post" }] })
    .fetchAll();
  return count.resources[0] ?? 0;
}

/** The `posts` change feed from the beginning, a page at a time, until it has nothing newer. */
export async function* postsChangeFeedFromStart(store: BlogStore, pageSize = 200): AsyncGenerator<{ type?: string }[]> {
  const iterator = store.posts.items.getChangeFeedIterator<{ type?: string }>({
    changeFeedStartFrom: ChangeFeedStartFrom.Beginning(),
    maxItemCount: pageSize,
  });
  for (;;) {
    const page = await iterator.readNext();
    if (page.statusCode === StatusCodes.NotModified) return;
    yield page.result;
  }
}
