import { LIMITS } from "./limits";
import type { PostItem } from "./items";

/** The short form of a post kept in `users` (Q3) and `feed` (Q6). */
export type ShortPost = Omit<PostItem, "ttl" | "deleted" | "deletedDate">;

/** Marks a text as cut; it counts toward the limit. */
const ELLIPSIS = "…";
/** Made on the first cut: a segmenter loads ICU's break rules, about 15 ms that a cold start need not pay. */
let graphemes: Intl.Segmenter | undefined;

/**
 * Cuts text to at most `max` UTF-16 code units, ellipsis included, on grapheme-cluster
 * boundaries: never half a surrogate pair, an emoji without its ZWJ sequence or skin tone, or a
 * letter without its combining marks.
 */
export function truncate(text: string, max: number = LIMITS.shortContentLength): string {
  if (text.length <= max) return text;
  let end = 0;
  graphemes ??= new Intl.Segmenter(undefined, { granularity: "grapheme" });
  for (const { index, segment } of graphemes.segment(text)) {
    if (index + segment.length > max - ELLIPSIS.length) break;
    end = index + segment.length;
  }
  return text.slice(0, end) + ELLIPSIS;
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
