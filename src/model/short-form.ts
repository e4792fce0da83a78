import { LIMITS } from "./limits";
import type { PostItem } from "./items";

/** The short form of a post kept in `users` (Q3) and `feed` (Q6). */
export type ShortPost = Omit<PostItem, "ttl" | "deleted" | "deletedDate">;

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;

/** Cuts text to at most `max` UTF-16 code units without leaving half a surrogate pair. */
export function truncate(text: string, max: number = LIMITS.shortContentLength): string {
  if (text.length <= max) return text;
  const cut = isHighSurrogate(text.charCodeAt(max - 1)) ? max - 1 : max;
  return text.slice(0, cut);
}

export function toShortForm(post: PostItem): ShortPost {
  return {
    id: post.postId,
    type: "post",
    postId: post.postId,
    userId: post.userId,
    userUsername: post.userUsername,
    title: post.title,
    content: truncate(post.content),
    commentCount: post.commentCount,
    likeCount: post.likeCount,
    creationDate: post.creationDate,
    ...(post.updatedDate ? { updatedDate: post.updatedDate } : {}),
  };
}
