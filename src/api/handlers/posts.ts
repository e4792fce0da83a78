import { randomUUID } from "node:crypto";
import { notFound } from "../../model/errors";
import { idFromParts, withoutSystemFields } from "../../model/items";
import * as posts from "../../store/posts";
import { endpoint, replayHeaders } from "../http";
import { postBody } from "../schemas";
import { requireProfile } from "../profile-guard";

/** POST /posts — C2: the caller is the author. An Idempotency-Key makes a retry return the first post. */
export const createPost = endpoint(async (call) => {
  const userId = await call.caller();
  const key = call.idempotencyKey();
  const fields = await call.body(postBody);
  call.requirePreconditions(undefined);
  const author = await requireProfile(userId);
  const postId = key === undefined ? randomUUID() : idFromParts("post", userId, key);
  const { post, created } = await posts.createPost(postId, author, fields, key !== undefined);
  return {
    status: 201,
    body: withoutSystemFields(post),
    etag: post._etag,
    location: `/api/posts/${post.postId}`,
    headers: replayHeaders(created),
  };
});

/** PUT /posts/{postId} — C2: only the author; honours If-Match. */
export const updatePost = endpoint(async (call) => {
  const userId = await call.caller();
  const postId = call.param("postId");
  const fields = await call.body(postBody);
  await requireProfile(userId);
  const post = await posts.updatePost(postId, userId, fields, call.writePreconditions());
  return { status: 200, body: withoutSystemFields(post), etag: post._etag };
});

/** A post changes rarely, but its counters do: a few seconds fresh, then stale while revalidating. */
const POST_CACHE_CONTROL = "public, max-age=5, stale-while-revalidate=30";

/** GET /posts/{postId} — Q2: one point read, counts and username included; cacheable by a CDN or browser. */
export const getPost = endpoint(async (call) => {
  const postId = call.param("postId");
  const post = await posts.readPost(postId);
  if (!post) throw notFound(`Post '${postId}' does not exist.`);
  return { status: 200, body: withoutSystemFields(post), etag: post._etag, headers: { "cache-control": POST_CACHE_CONTROL } };
});

/** DELETE /posts/{postId} — only the author; soft delete of the post, its comments and likes. A repeat finishes the work. Honours If-Match and If-None-Match. */
export const deletePost = endpoint(async (call) => {
  const userId = await call.caller();
  const postId = call.param("postId");
  await requireProfile(userId);
  await posts.deletePost(postId, userId, call.writePreconditions());
  return { status: 204 };
});
