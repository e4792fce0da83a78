import type { Container, SqlParameter } from "@azure/cosmos";
import type { CommentItem, LikeItem } from "../model/items";
import type { ShortPost } from "../model/short-form";
import type { BlogStore } from "./client";

/** Where a page ended: the sort key (creationDate, id) of its last item. */
export interface ListPosition {
  date: string;
  id: string;
}

export interface Page<T> {
  items: T[];
  /** Set when more items follow. */
  next?: ListPosition;
}

type Listed = { type: string; id: string; creationDate: string; deleted?: boolean };

/**
 * One keyset-paged list in one logical partition, as ONE query request: the owner document
 * (the post, or the user's profile) sorts first by type, then `limit + 1` items after `after`
 * (to learn whether more follow). The owner tells, in the same request, whether the list may
 * be served at all: no owner, or a deleted one, and the list is undefined (404).
 */
async function keysetPage<T extends Listed>(
  container: Container,
  partitionKey: string,
  owner: { type: string },
  items: { type: string; newestFirst: boolean },
  limit: number,
  after?: ListPosition,
): Promise<Page<T> | undefined> {
  const [direction, beyond, start] = items.newestFirst ? ["DESC", "<", "~"] : ["ASC", ">", ""];
  const parameters: SqlParameter[] = [
    { name: "@take", value: limit + 2 },
    { name: "@owner", value: owner.type },
    { name: "@type", value: items.type },
    { name: "@date", value: after?.date ?? start },
    { name: "@id", value: after?.id ?? "" },
  ];
  const query =
    `SELECT TOP @take * FROM c WHERE c.type = @owner OR (c.type = @type AND NOT IS_DEFINED(c.deleted) ` +
    `AND (c.creationDate ${beyond} @date OR (c.creationDate = @date AND c.id ${beyond} @id))) ` +
    `ORDER BY c.type DESC, c.creationDate ${direction}, c.id ${direction}`;
  const { resources } = await container.items.query<T>({ query, parameters }, { partitionKey, maxItemCount: limit + 2 }).fetchNext();
  const [first, ...rest] = resources;
  if (first?.type !== owner.type || first.deleted) return undefined;
  const page = rest.slice(0, limit);
  const last = page[page.length - 1];
  return { items: page, next: rest.length > limit ? { date: last.creationDate, id: last.id } : undefined };
}

/** Q4: comments of a live post, oldest first, from the post's partition. */
export function listComments(store: BlogStore, postId: string, limit: number, after?: ListPosition): Promise<Page<CommentItem> | undefined> {
  return keysetPage(store.posts, postId, { type: "post" }, { type: "comment", newestFirst: false }, limit, after);
}

/** Q5: likes of a live post, oldest first, from the post's partition. */
export function listLikes(store: BlogStore, postId: string, limit: number, after?: ListPosition): Promise<Page<LikeItem> | undefined> {
  return keysetPage(store.posts, postId, { type: "post" }, { type: "like", newestFirst: false }, limit, after);
}

/** Q3: a user's posts in short form, newest first, from the user's own partition of `users`. */
export function listUserPosts(store: BlogStore, userId: string, limit: number, after?: ListPosition): Promise<Page<ShortPost> | undefined> {
  return keysetPage(store.users, userId, { type: "user" }, { type: "post", newestFirst: true }, limit, after);
}
