/** The stored shape of posts, comments and likes as the scripts see them (type-checking only). */
interface BlogItem {
  id: string;
  type: "post" | "comment" | "like";
  _self: string;
  _etag: string;
  userId: string;
  /** Absent only on a comment or like an account erasure removed (eraseWriter drops the name with the text). */
  userUsername?: string;
  /** A comment's text (a post's too, which no script changes). */
  content?: string;
  commentCount?: number;
  likeCount?: number;
  creationDate?: string;
  deleted?: boolean;
  deletedDate?: string;
  ttl?: number;
  /** The trace context of the request that wrote it; a script's rewrite drops it (that request did not cause this change). */
  traceparent?: string;
}
