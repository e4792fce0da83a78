import { randomUUID } from "node:crypto";
import { withoutSystemFields } from "../../model/items";
import { createComment, listComments } from "../../store/posts";
import { endpoint } from "../http";
import { pagedList } from "../pagination";
import { commentBody } from "../schemas";
import { requireProfile } from "./profile";

/** POST /posts/{postId}/comments — C3, through the createComment stored procedure. */
export const addComment = endpoint(async (call) => {
  const userId = await call.caller();
  const postId = call.param("postId");
  const { content } = await call.body(commentBody);
  const author = await requireProfile(userId);
  const comment = await createComment(postId, author, randomUUID(), content);
  return { status: 201, body: withoutSystemFields(comment) };
});

/** GET /posts/{postId}/comments — Q4: oldest first, from the post's partition. */
export const listPostComments = endpoint(async (call) => {
  const postId = call.param("postId");
  return pagedList(call, `posts/${postId}/comments`, (limit, token) => listComments(postId, limit, token));
});
