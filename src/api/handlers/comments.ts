import { randomUUID } from "node:crypto";
import { idFromParts, withoutSystemFields } from "../../model/items";
import * as lists from "../../store/lists";
import * as posts from "../../store/posts";
import { endpoint, replayHeaders } from "../http";
import { pagedList } from "../pagination";
import { commentBody } from "../schemas";
import { requireProfile } from "../profile-guard";

/** POST /posts/{postId}/comments — C3, through the createComment stored procedure; Idempotency-Key honoured. */
export const createComment = endpoint(async (call) => {
  const userId = await call.caller();
  const postId = call.param("postId");
  const key = call.idempotencyKey();
  const { content } = await call.body(commentBody);
  // The comment is new: it has no version an If-Match could name.
  call.requirePreconditions(undefined);
  const author = await requireProfile(userId);
  const commentId = key === undefined ? randomUUID() : idFromParts("comment", postId, userId, key);
  const { comment, created } = await posts.createComment(postId, author, commentId, content);
  return { status: 201, body: withoutSystemFields(comment), headers: replayHeaders(created) };
});

/** GET /posts/{postId}/comments — Q4: oldest first, from the post's partition; 404 for a missing or deleted post. */
export const listComments = endpoint(async (call) => {
  const postId = call.param("postId");
  return pagedList(call, "posts", `posts/${postId}/comments`, `Post '${postId}' does not exist.`, (limit, after) => lists.listComments(postId, limit, after));
});
