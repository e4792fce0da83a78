import { forbidden, notFound, preconditionFailed } from "../model/errors";
import { nowIso, type CommentItem, type LikeItem, type PostItem, type UserItem } from "../model/items";
import { store } from "./client";
import { cosmosStatus, executeProcedure, executeUntilDone, queryPage, type Page } from "./requests";
import { SPROCS } from "./definitions";

export type StoredPost = PostItem & { _etag: string };

/** Q2: one point read; soft-deleted posts are not served. */
export async function readPost(postId: string): Promise<StoredPost | undefined> {
  const { resource } = await store().posts.item(postId, postId).read<StoredPost>();
  return resource?.type === "post" && !resource.deleted ? resource : undefined;
}

/** C2 (create). */
export async function createPost(postId: string, author: UserItem, fields: { title: string; content: string }): Promise<StoredPost> {
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
  };
  const { resource } = await store().posts.items.create(post);
  return resource as StoredPost;
}

async function ownPost(postId: string, callerId: string): Promise<StoredPost> {
  const post = await readPost(postId);
  if (!post) throw notFound(`Post '${postId}' does not exist.`);
  if (post.userId !== callerId) throw forbidden("Only the author may change this post.");
  return post;
}

/**
 * C2 (edit): a patch of title and content only, so it can never undo a concurrent
 * comment or like count change made by the stored procedures.
 */
export async function updatePost(postId: string, callerId: string, fields: { title: string; content: string }, ifMatch?: string): Promise<StoredPost> {
  const post = await ownPost(postId, callerId);
  if (ifMatch !== undefined && ifMatch !== "*" && ifMatch !== post._etag) throw preconditionFailed();
  try {
    const { resource } = await store()
      .posts.item(postId, postId)
      .patch<StoredPost>(
        [
          { op: "set", path: "/title", value: fields.title },
          { op: "set", path: "/content", value: fields.content },
          { op: "set", path: "/updatedDate", value: nowIso() },
        ],
        ifMatch && ifMatch !== "*" ? { accessCondition: { type: "IfMatch", condition: ifMatch } } : {},
      );
    return resource as StoredPost;
  } catch (error) {
    if (cosmosStatus(error) === 412) throw preconditionFailed();
    throw error;
  }
}

/** Soft delete of the post, its comments and likes (flag + TTL), one bounded sproc call at a time. */
export async function deletePost(postId: string, callerId: string): Promise<void> {
  await ownPost(postId, callerId);
  await executeUntilDone<{ status: string; continuation?: string | null }>(
    store().posts,
    SPROCS.deletePost,
    postId,
    (continuation) => [postId, store().settings.softDeleteTtlSeconds, continuation],
    (result) => {
      if (result.status === "postNotFound") throw notFound(`Post '${postId}' does not exist.`);
    },
  );
}

/** C3: the createComment sproc adds the comment and bumps commentCount atomically. */
export async function createComment(postId: string, author: UserItem, commentId: string, content: string): Promise<CommentItem> {
  const comment = { id: commentId, userId: author.userId, userUsername: author.username, content, creationDate: nowIso() };
  const result: { status: string; comment?: CommentItem } = await executeProcedure(store().posts, SPROCS.createComment, postId, [postId, comment]);
  if (result.status !== "created" || !result.comment) throw notFound(`Post '${postId}' does not exist.`);
  return result.comment;
}

/** Items of one type in a post's partition that are not soft-deleted, oldest first. */
function listPostItems<T>(postId: string, type: "comment" | "like", limit: number, continuationToken?: string): Promise<Page<T>> {
  return queryPage<T>(
    store().posts,
    { query: "SELECT * FROM p WHERE p.type = @type AND NOT IS_DEFINED(p.deleted) ORDER BY p.creationDate ASC", parameters: [{ name: "@type", value: type }] },
    postId,
    limit,
    continuationToken,
  );
}

/** Q4: comments of one post, oldest first, from the post's partition. */
export function listComments(postId: string, limit: number, continuationToken?: string): Promise<Page<CommentItem>> {
  return listPostItems(postId, "comment", limit, continuationToken);
}

/** C4: like once; a repeat returns the existing like and changes no count. */
export async function likePost(postId: string, liker: UserItem): Promise<{ like: LikeItem; created: boolean }> {
  const like = { userId: liker.userId, userUsername: liker.username, creationDate: nowIso() };
  const result: { status: string; like?: LikeItem } = await executeProcedure(store().posts, SPROCS.createLike, postId, [postId, like]);
  if (result.status === "postNotFound" || !result.like) throw notFound(`Post '${postId}' does not exist.`);
  return { like: result.like, created: result.status === "created" };
}

/** Unlike: the deleteLike sproc removes the like and decrements likeCount atomically. */
export async function unlikePost(postId: string, userId: string): Promise<void> {
  const result: { status: string } = await executeProcedure(store().posts, SPROCS.deleteLike, postId, [postId, userId]);
  if (result.status === "postNotFound") throw notFound(`Post '${postId}' does not exist.`);
  if (result.status === "likeNotFound") throw notFound(`User '${userId}' has not liked post '${postId}'.`);
}

/** Q5: likes of one post, oldest first, from the post's partition. */
export function listLikes(postId: string, limit: number, continuationToken?: string): Promise<Page<LikeItem>> {
  return listPostItems(postId, "like", limit, continuationToken);
}

