import { randomUUID } from "node:crypto";
import { notFound } from "../../model/errors";
import { idFromParts, withoutSystemFields } from "../../model/items";
import * as posts from "../../store/posts";
import { requireProfile } from "../../store/users";
import { endpoint } from "../endpoint";
import { postBody } from "../schemas";

/** POST /posts — C2: the caller is the author. An Idempotency-Key makes a retry return the first post. */
export const createPost = endpoint(
  { auth: "caller", idempotencyKey: true, body: postBody, creates: true },
  async ({ store, caller, idempotencyKey: key, body }) => {
    const author = await requireProfile(store, caller.userId);
    const postId = key === undefined ? randomUUID() : idFromParts("post", caller.userId, key);
    const { post, created } = await posts.createPost(store, postId, author, body, key !== undefined);
    return { status: 201, body: withoutSystemFields(post), etag: post._etag, location: `/api/posts/${post.postId}`, replayed: !created };
  },
);

/** PUT /posts/{postId} — C2: only the author; honours If-Match. */
export const updatePost = endpoint({ auth: "caller", body: postBody }, async ({ store, caller, params, body, preconditions }) => {
  await requireProfile(store, caller.userId);
  const post = await posts.updatePost(store, params.postId, caller.userId, body, preconditions);
  return { status: 200, body: withoutSystemFields(post), etag: post._etag };
});

/** A post changes rarely, but its counters do: a few seconds fresh, then stale while revalidating. */
const POST_CACHE_CONTROL = "public, max-age=5, stale-while-revalidate=30";

/** GET /posts/{postId} — Q2: one point read, counts and username included; cacheable by a CDN or browser. */
export const getPost = endpoint({}, async ({ store, params: { postId } }) => {
  const post = await posts.readPost(store, postId);
  if (!post) throw notFound(`Post '${postId}' does not exist.`);
  return { status: 200, body: withoutSystemFields(post), etag: post._etag, headers: { "cache-control": POST_CACHE_CONTROL } };
});

/** DELETE /posts/{postId} — only the author; soft delete of the post, its comments and likes. A repeat finishes the work. Honours If-Match and If-None-Match. */
export const deletePost = endpoint({ auth: "caller" }, async ({ store, caller, params, preconditions }) => {
  await requireProfile(store, caller.userId);
  await posts.deletePost(store, params.postId, caller.userId, preconditions);
  return { status: 204 };
});
