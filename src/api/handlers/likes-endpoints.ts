import { withoutSystemFields } from "../../model/items";
import * as lists from "../../store/lists";
import * as posts from "../../store/posts";
import { requireProfile } from "../../store/users";
import { endpoint } from "../endpoint";
import { pagedList } from "../pagination";
import { emptyBody, listQuery } from "../schemas";

/** POST /posts/{postId}/likes — C4: 201 the first time, 200 (count unchanged) after. */
export const likePost = endpoint({ auth: "caller", body: emptyBody }, async ({ store, caller, params: { postId }, hasPreconditions, requirePreconditions }) => {
  if (hasPreconditions) requirePreconditions(await posts.readLikeVersion(store, postId, caller.userId));
  const liker = await requireProfile(store, caller.userId);
  const { like, created } = await posts.likePost(store, postId, liker);
  return { status: created ? 201 : 200, body: withoutSystemFields(like) };
});

/** DELETE /posts/{postId}/likes — the caller's like; 404 if there is none. */
export const unlikePost = endpoint({ auth: "caller" }, async ({ store, caller, params: { postId }, hasPreconditions, requirePreconditions }) => {
  if (hasPreconditions) requirePreconditions(await posts.readLikeVersion(store, postId, caller.userId));
  await requireProfile(store, caller.userId);
  await posts.unlikePost(store, postId, caller.userId);
  return { status: 204 };
});

/** GET /posts/{postId}/likes — Q5, from the post's partition. */
export const listLikes = endpoint({ query: listQuery }, async ({ store, params: { postId }, query, warn }) =>
  pagedList(query, warn, "posts", `posts/${postId}/likes`, `Post '${postId}' does not exist.`, (limit, after) => lists.listLikes(store, postId, limit, after)),
);
