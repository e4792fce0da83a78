import { forbidden, MalformedItemError, notFound, preconditionFailed, unprocessable } from "../model/errors";
import { itemProblem } from "../model/item-schemas";
import { likeId, nowIso, requestFingerprint, type CommentItem, type LikeItem, type PostItem, type UserItem } from "../model/items";
import type { BlogStore } from "./client";
import { SPROCS } from "./definitions";
import { changeLike } from "./like-batches";
import { cosmosStatus } from "./failures";
import { executeProcedure, executeUntilDone } from "./procedures";
import { activeTraceparent, withTraceOrigin } from "../telemetry";

export type StoredPost = PostItem & { _etag: string };

/** The post document as stored, soft-deleted or not. */
async function readPostDocument(store: BlogStore, postId: string): Promise<StoredPost | undefined> {
  const { resource } = await store.posts.item(postId, postId).read<StoredPost>();
  return resource?.type === "post" ? resource : undefined;
}

/** Q2: one point read; soft-deleted posts are not served, malformed ones throw (never served as they are). */
export async function readPost(store: BlogStore, postId: string): Promise<StoredPost | undefined> {
  const post = await readPostDocument(store, postId);
  if (!post || post.deleted) return undefined;
  const problem = itemProblem("posts", post);
  if (problem) throw new MalformedItemError("posts", postId, problem);
  return post;
}

/** The same Idempotency-Key with another body: the IETF draft's 422, never the first result. */
const keyReused = () => unprocessable("This Idempotency-Key was used with another request body; use a new key for a new request.");

/**
 * C2 (create). The id may come from the client's Idempotency-Key: a repeat with the same body
 * then finds the post it created the first time (`created: false`) and writes nothing. The
 * post keeps the first body's fingerprint, since an edit may have changed its fields since.
 */
export async function createPost(
  store: BlogStore,
  postId: string,
  author: UserItem,
  fields: { title: string; content: string },
  idempotent = false,
): Promise<{ post: StoredPost; created: boolean }> {
  const post: PostItem = {
    id: postId,
    type: "post",
    postId,
    userId: author.userId,
    userUsername: author.username,
    title: fields.title,
    content: fields.content,
    commentCount: 0,
    likeCount: 0,
    creationDate: nowIso(),
    ...(idempotent ? { requestFingerprint: requestFingerprint(fields) } : {}),
  };
  try {
    const { resource } = await store.posts.items.create(withTraceOrigin(post));
    return { post: resource as StoredPost, created: true };
  } catch (error) {
    if (cosmosStatus(error) !== 409) throw error;
    const existing = await readPost(store, postId);
    if (!existing || existing.userId !== author.userId) throw notFound(`The post created with this Idempotency-Key no longer exists.`);
    if (existing.requestFingerprint !== undefined && existing.requestFingerprint !== post.requestFingerprint) throw keyReused();
    return { post: existing, created: false };
  }
}

async function ownPost(store: BlogStore, postId: string, callerId: string): Promise<StoredPost> {
  const post = await readPost(store, postId);
  if (!post) throw notFound(`Post '${postId}' does not exist.`);
  if (post.userId !== callerId) throw forbidden("Only the author may change this post.");
  return post;
}

/** An edit carries its request's trace context to the change feed, as a create does (withTraceOrigin). */
function traceOriginPatch(): { op: "set"; path: string; value: string }[] {
  const traceparent = activeTraceparent();
  return traceparent ? [{ op: "set", path: "/traceparent", value: traceparent }] : [];
}

/**
 * C2 (edit): a patch of title and content only, so it can never undo a concurrent
 * comment or like count change made by the stored procedures.
 */
export async function updatePost(
  store: BlogStore,
  postId: string,
  callerId: string,
  fields: { title: string; content: string },
  preconditions: (etag: string) => boolean | undefined,
): Promise<StoredPost> {
  const post = await ownPost(store, postId, callerId);
  const condition = preconditions(post._etag);
  if (condition === false) throw preconditionFailed();
  try {
    const { resource } = await store.posts.item(postId, postId).patch<StoredPost>(
      {
        // Never edit a post deleted since it was read.
        condition: "FROM p WHERE NOT IS_DEFINED(p.deleted)",
        operations: [
          { op: "set", path: "/title", value: fields.title },
          { op: "set", path: "/content", value: fields.content },
          { op: "set", path: "/updatedDate", value: nowIso() },
          ...traceOriginPatch(),
        ],
      },
      // The client's If-Match held on the read; the write must still see the same version.
      condition ? { accessCondition: { type: "IfMatch", condition: post._etag } } : {},
    );
    return resource as StoredPost;
  } catch (error) {
    if (cosmosStatus(error) === 412 && condition) throw preconditionFailed();
    if (cosmosStatus(error) === 412) throw notFound(`Post '${postId}' does not exist.`);
    throw error;
  }
}

/**
 * Soft-deletes the post, then its comments and likes (flag + TTL), one bounded stored
 * procedure call at a time. Idempotent: a repeat, or the posts change feed seeing the deleted
 * post, finishes whatever an earlier call left undone. `marked`: this call is the one that
 * marked the post deleted (of several at once, exactly one is).
 */
export async function finishDeletion(
  store: BlogStore,
  postId: string,
  ifMatch?: string,
): Promise<{ outcome: "deleted" | "postNotFound" | "preconditionFailed"; marked: boolean }> {
  let outcome: "deleted" | "postNotFound" | "preconditionFailed" = "deleted";
  let marked = false;
  await executeUntilDone<{ status: string; continuation?: string | null; marked?: boolean }>(
    store.posts,
    SPROCS.deletePost,
    postId,
    // The version check belongs to the first call only (it marks the post); later pages finish the work.
    (continuation) => [postId, store.settings.softDeleteTtlSeconds, continuation, continuation === null ? (ifMatch ?? null) : null],
    (result) => {
      if (result.status === "postNotFound" || result.status === "preconditionFailed") outcome = result.status;
      if (result.marked === true) marked = true;
    },
  );
  return { outcome, marked };
}

/**
 * DELETE of a post: only its author; a repeat by the author answers the same and completes the
 * work. The client's preconditions hold against the post as it is (a deleted one has no current
 * version, so If-Match fails on it); If-Match is checked again where the post is marked.
 */
export async function deletePost(
  store: BlogStore,
  postId: string,
  callerId: string,
  preconditions: (etag: string | undefined) => boolean | undefined = () => undefined,
): Promise<void> {
  const post = await readPostDocument(store, postId);
  if (!post || (post.deleted && post.userId !== callerId)) throw notFound(`Post '${postId}' does not exist.`);
  if (post.userId !== callerId) throw forbidden("Only the author may change this post.");
  const condition = preconditions(post.deleted ? undefined : post._etag);
  if (condition === false) throw preconditionFailed();
  const { outcome } = await finishDeletion(store, postId, condition === true ? post._etag : undefined);
  if (outcome === "postNotFound") throw notFound(`Post '${postId}' does not exist.`);
  if (outcome === "preconditionFailed") throw preconditionFailed();
}

/**
 * C3: the createComment sproc adds the comment and bumps commentCount atomically. A comment
 * id that exists already (an Idempotency-Key repeat) returns that comment and counts nothing.
 */
export async function createComment(
  store: BlogStore,
  postId: string,
  author: UserItem,
  commentId: string,
  content: string,
): Promise<{ comment: CommentItem; created: boolean }> {
  const comment = withTraceOrigin({ id: commentId, userId: author.userId, userUsername: author.username, content, creationDate: nowIso() });
  const result: { status: string; comment?: CommentItem } = await executeProcedure(store.posts, SPROCS.createComment, postId, [postId, comment]);
  if ((result.status !== "created" && result.status !== "exists") || !result.comment) throw notFound(`Post '${postId}' does not exist.`);
  // A comment is never edited: the one stored is the first request's.
  if (result.status === "exists" && result.comment.content !== content) throw keyReused();
  return { comment: result.comment, created: result.status === "created" };
}

/** C4: like once; a repeat returns the existing like and changes no count. Sent with the post's other like changes of the moment (group commit). */
export async function likePost(store: BlogStore, postId: string, liker: UserItem): Promise<{ like: LikeItem; created: boolean }> {
  const outcome = await changeLike(
    store,
    postId,
    withTraceOrigin({ userId: liker.userId, like: true as const, userUsername: liker.username, creationDate: nowIso() }),
  );
  if (outcome.status !== "created" && outcome.status !== "exists") throw notFound(`Post '${postId}' does not exist.`);
  return { like: outcome.like, created: outcome.status === "created" };
}

/**
 * The version of the caller's like of a post, for a client's preconditions on it (RFC 9110 13.1):
 * undefined when there is none. A like has no other version than its existence, so the check
 * and the like change are not one transaction: If-None-Match: * ("only if not liked yet") and
 * If-Match: * ("only if liked") are what a client can mean.
 */
export async function readLikeVersion(store: BlogStore, postId: string, userId: string): Promise<string | undefined> {
  const { resource } = await store.posts.item(likeId(userId), postId).read<LikeItem & { _etag: string }>();
  return resource && resource.type === "like" && !resource.deleted ? resource._etag : undefined;
}

/** Unlike: the like is soft-deleted and likeCount decremented in the same transaction. */
export async function unlikePost(store: BlogStore, postId: string, userId: string): Promise<void> {
  const outcome = await changeLike(store, postId, withTraceOrigin({ userId, like: false as const }));
  if (outcome.status === "postNotFound") throw notFound(`Post '${postId}' does not exist.`);
  if (outcome.status === "likeNotFound") throw notFound(`User '${userId}' has not liked post '${postId}'.`);
}
