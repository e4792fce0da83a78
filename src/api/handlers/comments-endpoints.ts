import { randomUUID } from "node:crypto";
import { idFromParts, withoutSystemFields } from "../../model/items";
import * as lists from "../../store/lists";
import * as posts from "../../store/posts";
import { requireProfile } from "../../store/users";
import { endpoint } from "../endpoint";
import { pagedList } from "../pagination";
import { commentBody, listQuery } from "../schemas";

/** POST /posts/{postId}/comments — C3, through the createComment stored procedure; Idempotency-Key honoured. The comment is new: no If-Match can name it. */
export const createComment = endpoint(
  { auth: "caller", idempotencyKey: true, body: commentBody, creates: true },
  async ({ store, caller, params: { postId }, idempotencyKey: key, body }) => {
    const author = await requireProfile(store, caller.userId);
    const commentId = key === undefined ? randomUUID() : idFromParts("comment", postId, caller.userId, key);
    const { comment, created } = await posts.createComment(store, postId, author, commentId, body.content);
    return { status: 201, body: withoutSystemFields(comment), replayed: !created };
  },
);

/** GET /posts/{postId}/comments — Q4: oldest first, from the post's partition; 404 for a missing or deleted post. */
export const listComments = endpoint({ query: listQuery }, async ({ store, params: { postId }, query, warn }) =>
  pagedList(query, warn, "posts", `posts/${postId}/comments`, `Post '${postId}' does not exist.`, (limit, after) =>
    lists.listComments(store, postId, limit, after),
  ),
);
