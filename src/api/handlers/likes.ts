import { withoutSystemFields } from "../../model/items";
import * as lists from "../../store/lists";
import * as posts from "../../store/posts";
import { endpoint } from "../http";
import { pagedList } from "../pagination";
import { emptyBody } from "../schemas";
import { requireProfile } from "../profile-guard";

/** POST /posts/{postId}/likes — C4: 201 the first time, 200 (count unchanged) after. */
export const likePost = endpoint(async (call) => {
  const userId = await call.caller();
  const postId = call.param("postId");
  await call.body(emptyBody);
  if (call.hasPreconditions()) call.requirePreconditions(await posts.readLikeVersion(postId, userId));
  const liker = await requireProfile(userId);
  const { like, created } = await posts.likePost(postId, liker);
  return { status: created ? 201 : 200, body: withoutSystemFields(like) };
});

/** DELETE /posts/{postId}/likes — the caller's like; 404 if there is none. */
export const unlikePost = endpoint(async (call) => {
  const userId = await call.caller();
  const postId = call.param("postId");
  if (call.hasPreconditions()) call.requirePreconditions(await posts.readLikeVersion(postId, userId));
  await requireProfile(userId);
  await posts.unlikePost(postId, userId);
  return { status: 204 };
});

/** GET /posts/{postId}/likes — Q5, from the post's partition. */
export const listLikes = endpoint(async (call) => {
  const postId = call.param("postId");
  return pagedList(call, "posts", `posts/${postId}/likes`, `Post '${postId}' does not exist.`, (limit, after) => lists.listLikes(postId, limit, after));
});
