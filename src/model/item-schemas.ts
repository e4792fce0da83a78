import * as z from "zod";
import { contributionId } from "./items";
import { LIMITS } from "./limits";

/**
 * What a stored item must look like before the pipeline or the API acts on it. The API writes
 * only items that pass; these catch what reaches the containers behind its back (a migration
 * script, a bug, an edit in Data Explorer), so one malformed document is set aside instead of
 * stalling a change feed or spreading. System fields and our own bookkeeping pass through.
 */
const fields = lazy(() => {
  const id = z.string().regex(LIMITS.idPattern, "is not an id Cosmos DB can address");
  const isoDate = z.string().datetime({ message: "is not an ISO-8601 UTC date" });
  const count = z.number().int().min(0);
  const username = z.string().regex(LIMITS.usernamePattern, "is not a valid username");
  /** Soft deletion: flag, date and TTL (tombstones carry only these and the keys). */
  const softDeleted = { deleted: z.literal(true).optional(), deletedDate: isoDate.optional(), ttl: z.number().int().optional() };
  const post = {
    id,
    type: z.literal("post"),
    postId: id,
    userId: id,
    userUsername: username,
    title: z.string(),
    content: z.string(),
    commentCount: count,
    likeCount: count,
    creationDate: isoDate,
    updatedDate: isoDate.optional(),
    ...softDeleted,
  };
  return { id, isoDate, count, username, softDeleted, post };
});

const userItemSchema = lazy(() => {
  const { id, username, isoDate } = fields();
  return z
    .object({ id, type: z.literal("user"), userId: id, username, creationDate: isoDate, usernameChangedDate: isoDate.optional() })
    .passthrough()
    .refine((user) => user.id === user.userId, { message: "id differs from userId", path: ["id"] });
});

const usernameClaimSchema = lazy(() => {
  const { id, username } = fields();
  return z
    .object({ id: z.string().startsWith("username:"), type: z.literal("username"), userId: z.string(), ownerId: id, username })
    .passthrough()
    .refine((claim) => claim.userId === claim.id, { message: "userId differs from id", path: ["userId"] });
});

const postItemSchema = lazy(() =>
  z
    .object(fields().post)
    .passthrough()
    .refine((post) => post.id === post.postId, { message: "id differs from postId", path: ["id"] }),
);

/** A short-form copy of a post (Q3 in `users`, Q6 in `feed`), or the tombstone a deleted post leaves. */
const postCopySchema = lazy(() => {
  const { id, isoDate, softDeleted, post } = fields();
  return z.union([
    z.object({ ...post, content: z.string().max(LIMITS.shortContentLength), sourceLsn: z.number() }).passthrough(),
    z
      .object({ id, type: z.literal("post"), postId: id, userId: id, creationDate: isoDate, sourceLsn: z.number(), ...softDeleted, deleted: z.literal(true) })
      .passthrough(),
  ]);
});

/** A comment or like an account erasure removed: soft-deleted, its text and its writer's name dropped at once. */
function erasedWriting(type: "comment" | "like") {
  const { id, isoDate, softDeleted } = fields();
  return z
    .object({ id: z.string().min(1), type: z.literal(type), postId: id, userId: id, creationDate: isoDate, ...softDeleted, deleted: z.literal(true) })
    .passthrough();
}

const commentItemSchema = lazy(() => {
  const { id, username, isoDate, softDeleted } = fields();
  return z.union([
    z
      .object({
        id: z.string().min(1),
        type: z.literal("comment"),
        postId: id,
        userId: id,
        userUsername: username,
        content: z.string(),
        creationDate: isoDate,
        ...softDeleted,
      })
      .passthrough(),
    erasedWriting("comment"),
  ]);
});

const likeItemSchema = lazy(() => {
  const { id, username, isoDate, softDeleted } = fields();
  return z.union([
    z
      .object({ id: z.string().min(1), type: z.literal("like"), postId: id, userId: id, userUsername: username, creationDate: isoDate, ...softDeleted })
      .passthrough(),
    erasedWriting("like"),
  ]);
});

const erasureSchema = lazy(() => {
  const { id, isoDate, count } = fields();
  const progress = z.object({ posts: count, comments: count, likes: count, documents: count });
  return z
    .object({
      id,
      type: z.literal("erasure"),
      userId: id,
      requestedDate: isoDate,
      requestedBy: z.enum(["self", "admin"]),
      progress,
      completedDate: isoDate.optional(),
    })
    .passthrough()
    .refine((erasure) => erasure.id === erasure.userId, { message: "id differs from userId", path: ["id"] });
});

const contributionSchema = lazy(() => {
  const { id, isoDate } = fields();
  return z
    .object({ id: z.string().startsWith("contribution:"), type: z.literal("contribution"), userId: id, postId: id, since: isoDate })
    .passthrough()
    .refine((item) => item.id === contributionId(item.postId), { message: "id differs from contribution:<postId>", path: ["id"] });
});

/**
 * A schema built on its first use, not at load: zod builds schemas slowly (the item schemas took
 * about 10 ms of a cold start), a cold start checks no item, and a request one type or two.
 */
function lazy<T>(build: () => T): () => T {
  let built: T | undefined;
  return () => (built ??= build());
}

/** The item schema for each `type` a container holds. */
const CONTAINER_ITEMS = {
  posts: { post: postItemSchema, comment: commentItemSchema, like: likeItemSchema },
  users: { user: userItemSchema, username: usernameClaimSchema, post: postCopySchema, contribution: contributionSchema, erasure: erasureSchema },
  feed: { post: postCopySchema },
} as const satisfies Record<string, Record<string, () => z.ZodTypeAny>>;

export type ItemContainer = keyof typeof CONTAINER_ITEMS;

/** Why `document` is not an item of `container`, or undefined when it is one. */
export function itemProblem(container: ItemContainer, document: unknown): string | undefined {
  const type = (document as { type?: unknown } | null)?.type;
  const schemas: Record<string, () => z.ZodTypeAny> = CONTAINER_ITEMS[container];
  if (typeof type !== "string" || !Object.hasOwn(schemas, type)) return `type ${JSON.stringify(type ?? null)} is not an item type of ${container}`;
  const parsed = schemas[type]().safeParse(document);
  if (parsed.success) return undefined;
  return parsed.error.issues.map((issue) => `${issue.path.join(".") || type}: ${issue.message}`).join("; ");
}
