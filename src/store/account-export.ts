import type { CommentItem, LikeItem, PostItem } from "../model/items";
import { withoutSystemFields } from "../model/items";
import { store } from "./client";
import { listUserPosts, type ListPosition } from "./lists";

/**
 * A user's data export (GET /api/users/{userId}/export), read a bounded page at a time from
 * where the model keeps it: their posts through their list (Q3) and a point read of each, what
 * they wrote elsewhere through the records of where they wrote (one query in each such post's
 * partition). Never a query over every partition.
 */

/** A page of their posts, in full, newest first; `next` when more follow. */
export async function exportedPostsPage(userId: string, limit: number, after?: ListPosition): Promise<{ posts: PostItem[]; next?: ListPosition }> {
  const page = await listUserPosts(userId, limit, after);
  const posts: PostItem[] = [];
  for (const copy of page?.items ?? []) {
    const { resource } = await store().posts.item(copy.postId, copy.postId).read<PostItem>();
    if (resource?.type === "post" && !resource.deleted) posts.push(withoutSystemFields(resource));
  }
  return { posts, next: page?.next };
}

/** What they wrote on one post: their live comments and like. */
export interface WritingOnPost {
  postId: string;
  comments: { id: string; content: string; creationDate: string }[];
  /** When they liked it; null when they do not (any more). */
  likedDate: string | null;
}

/** A page of the posts they commented on or liked, in the order of the records' ids, with what they wrote there; `next` when more follow. */
export async function exportedWritingPage(userId: string, limit: number, afterId = ""): Promise<{ writing: WritingOnPost[]; next?: string }> {
  const { resources } = await store()
    .users.items.query<{ id: string; postId: string }>(
      {
        query: "SELECT TOP @take c.id, c.postId FROM c WHERE c.type = @type AND c.id > @after ORDER BY c.id",
        parameters: [
          { name: "@take", value: limit + 1 },
          { name: "@type", value: "contribution" },
          { name: "@after", value: afterId },
        ],
      },
      { partitionKey: userId },
    )
    .fetchNext();
  const page = resources.slice(0, limit);
  const writing: WritingOnPost[] = [];
  for (const { postId } of page) {
    const items = await writingOnPost(userId, postId);
    const comments = items.filter((item): item is CommentItem => item.type === "comment");
    const like = items.find((item): item is LikeItem => item.type === "like");
    if (comments.length === 0 && !like) continue;
    writing.push({
      postId,
      comments: comments.map(({ id, content, creationDate }) => ({ id, content, creationDate })),
      likedDate: like?.creationDate ?? null,
    });
  }
  return { writing, next: resources.length > limit ? page[page.length - 1].id : undefined };
}

async function writingOnPost(userId: string, postId: string): Promise<(CommentItem | LikeItem)[]> {
  const { resources } = await store()
    .posts.items.query<CommentItem | LikeItem>(
      {
        query:
          "SELECT c.id, c.type, c.content, c.creationDate FROM c WHERE c.userId = @userId AND (c.type = @comment OR c.type = @like) AND NOT IS_DEFINED(c.deleted) ORDER BY c.creationDate",
        parameters: [
          { name: "@userId", value: userId },
          { name: "@comment", value: "comment" },
          { name: "@like", value: "like" },
        ],
      },
      { partitionKey: postId },
    )
    .fetchAll();
  return resources;
}
