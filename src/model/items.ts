import { createHash } from "node:crypto";

/** Item shapes of the V3 model, as stored (README, The model). */

export interface UserItem {
  id: string;
  type: "user";
  userId: string;
  username: string;
  creationDate: string;
  /** Set on every username change: the users change feed starts the propagation for these. */
  usernameChangedDate?: string;
}

/**
 * Claims a username (case-insensitively) for one user. It lives in `users` under its own
 * partition key, so creating it is atomic: two racing claims cannot both succeed.
 */
export interface UsernameClaim {
  id: string;
  type: "username";
  userId: string;
  ownerId: string;
  username: string;
}

export interface PostItem {
  id: string;
  type: "post";
  postId: string;
  userId: string;
  userUsername: string;
  title: string;
  content: string;
  commentCount: number;
  likeCount: number;
  creationDate: string;
  updatedDate?: string;
  deleted?: boolean;
  deletedDate?: string;
  ttl?: number;
  /** For a post created with an Idempotency-Key: the fingerprint of that request's body (a repeat must match it). */
  requestFingerprint?: string;
}

export interface CommentItem {
  id: string;
  type: "comment";
  postId: string;
  userId: string;
  userUsername: string;
  content: string;
  creationDate: string;
  deleted?: boolean;
}

export interface LikeItem {
  id: string;
  type: "like";
  postId: string;
  userId: string;
  userUsername: string;
  creationDate: string;
  deleted?: boolean;
}

export type PostsContainerItem = PostItem | CommentItem | LikeItem;

/**
 * Where a user wrote: one per post they commented on or liked, in their own partition of
 * `users`, kept by the posts change feed. Export and erasure find a user's comments and likes
 * through these, one post partition at a time, instead of querying every partition of `posts`.
 * It says only where, never what (no content, no username), and is never removed by an unlike
 * or a deleted comment: a post listed with nothing of theirs left costs one empty query.
 */
export interface ContributionItem {
  id: string;
  type: "contribution";
  /** The writer: the partition key. */
  userId: string;
  postId: string;
  /** When the first comment or like of theirs on it was written. */
  since: string;
}

/**
 * What an account erasure (DELETE /api/users/{userId}) leaves in place of the profile: the same
 * id in the same partition, so the profile is gone from every read the moment it is written, and
 * the user's token is refused from then on (403, problem type ACCOUNT_ERASED). It holds no name
 * and no text: the user id, when, who asked, and what the erasure has removed so far. The users
 * change feed starts the erasure orchestration from it.
 */
export interface ErasureItem {
  id: string;
  type: "erasure";
  userId: string;
  requestedDate: string;
  /** The user themself, or a caller with an admin app role (AUTH_ADMIN_ROLES). */
  requestedBy: "self" | "admin";
  progress: ErasureProgress;
  /** Set when the orchestration has removed everything (what stays: docs/api.md, Leaving). */
  completedDate?: string;
}

export interface ErasureProgress {
  /** Their own posts, deleted with their comments and likes. */
  posts: number;
  /** Their comments and likes on posts, removed with the counts moved. */
  comments: number;
  likes: number;
  /** Other documents of theirs removed from their partition of users (copies, records). */
  documents: number;
}

/** System properties Cosmos DB adds, and our own bookkeeping (the writing request's trace context too); never part of an API response. */
const SYSTEM_FIELDS = [
  "_rid",
  "_self",
  "_etag",
  "_attachments",
  "_ts",
  "_lsn",
  "ttl",
  "deleted",
  "deletedDate",
  "sourceLsn",
  "requestFingerprint",
  "traceparent",
] as const;

export function withoutSystemFields<T extends object>(item: T): T {
  const copy = { ...item } as Record<string, unknown>;
  for (const field of SYSTEM_FIELDS) delete copy[field];
  return copy as T;
}

export const nowIso = () => new Date().toISOString();

/**
 * A UUID (version 8, name-based) derived from its parts: the same client retry always
 * addresses the same item, so creating it twice is a conflict instead of a duplicate.
 */
export function idFromParts(...parts: string[]): string {
  const hash = createHash("sha256").update(parts.join("\n")).digest();
  hash[6] = (hash[6] & 0x0f) | 0x80;
  hash[8] = (hash[8] & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The fingerprint of a validated request body (its fields in schema order): equal bodies, equal fingerprints. */
export const requestFingerprint = (body: object) => createHash("sha256").update(JSON.stringify(body)).digest("base64url");

/** The claim key of a username: usernames are unique regardless of case. */
export const usernameClaimId = (username: string) => `username:${username.toLowerCase()}`;

/** A contribution's id: one per post in the writer's partition. */
export const contributionId = (postId: string) => `contribution:${postId}`;

/** A like's id is derived from its user, which makes "one like per user per post" structural. */
export const likeId = (userId: string) => `like:${userId}`;
