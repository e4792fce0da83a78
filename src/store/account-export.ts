import type { PostItem } from "../model/items";
import { withoutSystemFields } from "../model/items";
import type { BlogStore } from "./client";
import { listUserPosts, type ListPosition } from "./lists";

/**
 * A user's data export (GET /api/users/{userId}/export), read a bounded page at a time from
 * where the model keeps it: their posts through their list (Q3) and a point read of each, what
 * they wrote elsewhere through the records of where they wrote (one query in each such post's
 * partition). Never a query over every partition.
 */

/** A page of their posts, in full, newest first; `next` when more follow. */
export async function exportedPostsPage(
  store: BlogStore,
  userId: string,
  limit: number,
  after?: ListPosition,
): Promise<{ posts: PostItem[]; next?: ListPosition }> {
  const page = await listUserPosts(store, userId, limit, after);
  const posts: PostItem[] = [];
  for (const copy of page?.items ?? []) {
    const { resource } = await store.posts.item(copy.postId, copy.postId).read<PostItem>();
    if (resource?.type === "post" && !resource.deleted) posts.push(withoutSystemFields(resource));
  }
  return { posts, next: page?.next };
}

/** What they wrote on one post: their live comments and like. */
export interface WritingOnPost {
  postId: string;
  comments: { id: string; content: string; creationDate: string }[];
  /** When they liked it; null when they do not (any more), and on a part that continues a post. */
  likedDate: string | null;
}

/** Where a page of writing ended: the record of the post, and, when its comments go on, the last one given. */
export interface WritingPosition {
  record: string;
  comment?: ListPosition;
}

/**
 * A page of what they wrote elsewhere, in the order of the records' ids: at most `limit` posts
 * and `limit` comments. A post with more of their comments than the page has room for goes on
 * in the next page, under the same postId; `next` when more follow.
 */
export async function exportedWritingPage(
  store: BlogStore,
  userId: string,
  limit: number,
  after: WritingPosition = { record: "" },
): Promise<{ writing: WritingOnPost[]; next?: WritingPosition }> {
  const inside = after.comment !== undefined;
  const { resources } = await store.users.items
    .query<{ id: string; postId: string }>(
      {
        query: `SELECT TOP @take c.id, c.postId FROM c WHERE c.type = @type AND c.id ${inside ? ">=" : ">"} @after ORDER BY c.id`,
        parameters: [
          { name: "@take", value: limit + 1 },
          { name: "@type", value: "contribution" },
          { name: "@after", value: after.record },
        ],
      },
      { partitionKey: userId },
    )
    .fetchNext();
  const records = resources.slice(0, limit);
  const writing: WritingOnPost[] = [];
  let room = limit;
  for (const [i, { id, postId }] of records.entries()) {
    const resumed = inside && id === after.record ? after.comment : undefined;
    const { comments, likedDate, next } = await writingOnPost(store, userId, postId, room, resumed);
    if (comments.length > 0 || likedDate) writing.push({ postId, comments, likedDate });
    room -= comments.length;
    if (next) return { writing, next: { record: id, comment: next } };
    const more = i < records.length - 1 || resources.length > limit;
    if (room === 0 || !more) return { writing, next: more ? { record: id } : undefined };
  }
  return { writing };
}

type Written = WritingOnPost["comments"][number] & { type: string };

/**
 * What they wrote on one post, as ONE query in its partition: their like (when starting the post,
 * not resuming it), then up to `limit` of their live comments after `after`, oldest first
 * (`ORDER BY c.type DESC` puts the like first); `next` when more comments follow.
 */
async function writingOnPost(
  store: BlogStore,
  userId: string,
  postId: string,
  limit: number,
  after?: ListPosition,
): Promise<{ comments: WritingOnPost["comments"]; likedDate: string | null; next?: ListPosition }> {
  const { resources } = await store.posts.items
    .query<Written>(
      {
        query:
          "SELECT TOP @take c.id, c.type, c.content, c.creationDate FROM c WHERE c.userId = @userId AND NOT IS_DEFINED(c.deleted) " +
          "AND ((c.type = @like AND @first) OR (c.type = @comment AND (c.creationDate > @date OR (c.creationDate = @date AND c.id > @id)))) " +
          "ORDER BY c.type DESC, c.creationDate ASC, c.id ASC",
        parameters: [
          { name: "@take", value: limit + 2 },
          { name: "@userId", value: userId },
          { name: "@like", value: "like" },
          { name: "@first", value: after === undefined },
          { name: "@comment", value: "comment" },
          { name: "@date", value: after?.date ?? "" },
          { name: "@id", value: after?.id ?? "" },
        ],
      },
      { partitionKey: postId, maxItemCount: limit + 2 },
    )
    .fetchNext();
  const like = resources.find((item) => item.type === "like");
  const all = resources.filter((item) => item.type === "comment").map(({ id, content, creationDate }) => ({ id, content, creationDate }));
  const comments = all.slice(0, limit);
  const last = comments[comments.length - 1];
  return { comments, likedDate: like?.creationDate ?? null, next: all.length > limit ? { date: last.creationDate, id: last.id } : undefined };
}
