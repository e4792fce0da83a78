import * as z from "zod";
import { accountErased, invalid, notFound } from "../../model/errors";
import * as accountExport from "../../store/account-export";
import * as erasure from "../../store/erasure";
import * as lists from "../../store/lists";
import * as users from "../../store/users";
import type { StoredErasure, StoredUser } from "../../store/users";
import { endpoint } from "../endpoint";
import { pagedList } from "../pagination";
import { emptyBody, listQuery, userBody } from "../schemas";

const publicUser = (user: StoredUser) => ({ id: user.userId, username: user.username });

/** POST /users — C1: the caller creates their own profile. */
export const createUser = endpoint({ auth: "caller", body: userBody, creates: true }, async ({ store, caller: { userId }, body }) => {
  const user = await users.createUser(store, userId, body.username);
  return { status: 201, body: publicUser(user), etag: user._etag, location: `/api/users/${encodeURIComponent(userId)}` };
});

/** PUT /users/{userId} — C1: only that user may change their username. */
export const updateUser = endpoint({ auth: "owner", body: userBody }, async ({ store, params: { userId }, body, preconditions, warn }) => {
  const user = await users.renameUser(store, userId, body.username, preconditions, warn);
  return { status: 200, body: publicUser(user), etag: user._etag };
});

/** GET /users/{userId} — Q1. */
export const getUser = endpoint({}, async ({ store, params: { userId } }) => {
  const user = await users.readUser(store, userId);
  if (!user) throw notFound(`User '${userId}' does not exist.`);
  return { status: 200, body: publicUser(user), etag: user._etag };
});

/** GET /users/{userId}/posts — Q3: short-form posts, newest first. */
export const listUserPosts = endpoint({ query: listQuery }, async ({ store, params: { userId }, query, warn }) =>
  pagedList(query, warn, "users", `users/${userId}/posts`, `User '${userId}' does not exist.`, (limit, after) =>
    lists.listUserPosts(store, userId, limit, after),
  ),
);

const erasureUrl = (userId: string) => `/api/users/${encodeURIComponent(userId)}/erasure`;

const erasureBody = (record: StoredErasure) => ({
  userId: record.userId,
  status: record.completedDate ? ("completed" as const) : ("running" as const),
  requestedDate: record.requestedDate,
  ...(record.completedDate ? { completedDate: record.completedDate } : {}),
  progress: record.progress,
});

/**
 * DELETE /users/{userId} — the owner, or a caller with an admin role: the profile is replaced by
 * the erasure record at once (gone from every read, the token refused for writes), and the
 * erasure runs in the background. 202 with the status URL; a repeat answers the same.
 */
export const deleteUser = endpoint({ auth: "owner or admin", body: emptyBody }, async ({ store, caller, params: { userId } }) => {
  const { erasure: record } = await erasure.requestErasure(store, userId, caller.userId === userId ? "self" : "admin");
  return { status: 202, body: erasureBody(record), location: erasureUrl(userId), headers: { "retry-after": "2" } };
});

/** GET /users/{userId}/erasure — where the erasure stands; the owner or an admin. 404 when none was asked for. */
export const getErasure = endpoint({ auth: "owner or admin" }, async ({ store, params: { userId } }) => {
  const record = await erasure.readErasure(store, userId);
  if (!record) throw notFound(`No erasure was asked for the account '${userId}'.`);
  return { status: 200, body: erasureBody(record), etag: record._etag };
});

/** Export pages: posts first (keyset on the list's sort key), then the records of where the user wrote (by id). */
const exportPosition = z.union([
  z.object({ s: z.literal("posts"), d: z.string().max(64), i: z.string().min(1).max(300) }).strict(),
  z
    .object({
      s: z.literal("writing"),
      i: z.string().max(400),
      c: z
        .object({ d: z.string().max(64), i: z.string().min(1).max(300) })
        .strict()
        .optional(),
    })
    .strict(),
]);
type ExportPosition = z.infer<typeof exportPosition>;

const encodeExport = (position: ExportPosition | undefined) => (position ? Buffer.from(JSON.stringify(position), "utf8").toString("base64url") : null);

function decodeExport(token: string | undefined): ExportPosition | undefined {
  if (token === undefined) return undefined;
  try {
    const parsed = exportPosition.safeParse(JSON.parse(Buffer.from(token, "base64url").toString("utf8")));
    if (parsed.success) return parsed.data;
  } catch {
    // not JSON: the same answer as any other foreign token
  }
  throw invalid("continuationToken is not valid for this export.", [{ path: "continuationToken", message: "is not valid for this export" }]);
}

/** The download's file name: the user id with what no file system takes replaced. */
const exportFileName = (userId: string) => `blog-export-${userId.replace(/[^A-Za-z0-9._-]/g, "_")}.json`;

/**
 * GET /users/{userId}/export — the owner's data, a bounded page at a time (`limit` posts, or
 * `limit` posts written on and `limit` comments, per page), as a download. Each page is one
 * request's worth of reads, so a large account never times out or loads everything at once; the
 * pages together are the export.
 */
export const exportUser = endpoint({ auth: "owner", query: listQuery }, async ({ store, params: { userId }, query: { limit, continuationToken } }) => {
  const position = decodeExport(continuationToken);
  const account = await users.readAccount(store, userId);
  if (account === "erased") throw accountErased(userId);
  if (!account) throw notFound(`User '${userId}' does not exist.`);
  const page = { format: "blog-export/1" as const, userId, exportedAt: new Date().toISOString() };
  const profile = position ? {} : { profile: { id: userId, username: account.username, creationDate: account.creationDate } };
  let body;
  if (position?.s !== "writing") {
    const { posts, next } = await accountExport.exportedPostsPage(store, userId, limit, position && { date: position.d, id: position.i });
    const following: ExportPosition = next ? { s: "posts", d: next.date, i: next.id } : { s: "writing", i: "" };
    body = { ...page, ...profile, posts, writing: [], continuationToken: encodeExport(following) };
  } else {
    const after = { record: position.i, comment: position.c && { date: position.c.d, id: position.c.i } };
    const { writing, next } = await accountExport.exportedWritingPage(store, userId, limit, after);
    const following: ExportPosition | undefined = next && {
      s: "writing",
      i: next.record,
      ...(next.comment ? { c: { d: next.comment.date, i: next.comment.id } } : {}),
    };
    body = { ...page, posts: [], writing, continuationToken: encodeExport(following) };
  }
  return {
    status: 200,
    body,
    headers: { "content-disposition": `attachment; filename="${exportFileName(userId)}"`, "cache-control": "private, no-store" },
  };
});
