import type { PatchOperation } from "@azure/cosmos";
import { notFound } from "../model/errors";
import { contributionId, nowIso, type ErasureItem, type ErasureProgress } from "../model/items";
import type { BlogStore } from "./client";
import { SPROCS } from "./definitions";
import { cosmosStatus } from "./failures";
import { finishDeletion } from "./posts";
import { executeProcedure } from "./procedures";
import { ATTEMPTS, backOff } from "./username-claims";
import { readAccountDocument, type StoredErasure } from "./users";

/**
 * Account erasure, the store's part: the record that replaces the profile, and the bounded steps
 * the erasure orchestration (src/pipeline/erasure-orchestration.ts) runs until nothing of the user is left.
 * Every step is idempotent: a step repeated after a crash finds less to do, never more.
 */

const NO_PROGRESS: ErasureProgress = { posts: 0, comments: 0, likes: 0, documents: 0 };

/**
 * Replaces the profile with the erasure record, conditionally on the profile read: a rename
 * racing it either lands first (and is erased with the rest) or fails and sees the record.
 * A repeat finds the record and changes nothing (`created: false`).
 */
export async function requestErasure(
  store: BlogStore,
  userId: string,
  requestedBy: ErasureItem["requestedBy"],
): Promise<{ erasure: StoredErasure; created: boolean }> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    await backOff(attempt);
    const account = await readAccountDocument(store, userId);
    if (!account) throw notFound(`User '${userId}' does not exist.`);
    if (account.type === "erasure") return { erasure: account, created: false };
    const record: ErasureItem = { id: userId, type: "erasure", userId, requestedDate: nowIso(), requestedBy, progress: { ...NO_PROGRESS } };
    try {
      const { resource } = await store.users.item(userId, userId).replace(record, { accessCondition: { type: "IfMatch", condition: account._etag } });
      return { erasure: resource as StoredErasure, created: true };
    } catch (error) {
      if (cosmosStatus(error) !== 412 && cosmosStatus(error) !== 404) throw error;
    }
  }
  throw new Error(`the profile of '${userId}' kept changing while its erasure was asked for; try again`);
}

export async function readErasure(store: BlogStore, userId: string): Promise<StoredErasure | undefined> {
  const account = await readAccountDocument(store, userId);
  return account?.type === "erasure" ? account : undefined;
}

/** Adds to the record's counts (a patch, so concurrent steps never lose each other's counts). */
async function recordProgress(store: BlogStore, userId: string, done: Partial<ErasureProgress>): Promise<void> {
  const operations: PatchOperation[] = Object.entries(done)
    .filter(([, value]) => value > 0)
    .map(([field, value]) => ({ op: "incr", path: `/progress/${field}`, value }));
  if (operations.length > 0) await store.users.item(userId, userId).patch(operations);
}

/**
 * A page of the user's partition: the documents `where` selects (`@value` its one parameter).
 * What a step handles it deletes, so each page starts over from the top.
 */
async function pageOf<T>(store: BlogStore, userId: string, where: string, value: string, pageSize: number): Promise<T[]> {
  const { resources } = await store.users.items
    .query<T>(
      {
        query: `SELECT TOP @n * FROM c WHERE ${where}`,
        parameters: [
          { name: "@n", value: pageSize },
          { name: "@value", value },
        ],
      },
      { partitionKey: userId },
    )
    .fetchNext();
  return resources;
}

/** Deletes a document of the user's partition; one already gone is fine. */
async function deleteOwn(store: BlogStore, userId: string, id: string): Promise<void> {
  try {
    await store.users.item(id, userId).delete();
  } catch (error) {
    if (cosmosStatus(error) !== 404) throw error;
  }
}

/**
 * Soft-deletes one of the user's posts with its comments and likes, as DELETE /posts does, and
 * drops its copy from their list; 1 when this call deleted the post (the procedure says whether
 * it marked it), 0 when someone else had (a step, the posts change feed, the user before).
 */
async function eraseOwnPost(store: BlogStore, userId: string, postId: string): Promise<number> {
  const { marked } = await finishDeletion(store, postId);
  await deleteOwn(store, userId, postId);
  return marked ? 1 : 0;
}

/** The same, for a post of an erased account the posts change feed finds after the sweep, counted with the rest. */
export async function eraseLateOwnPost(store: BlogStore, userId: string, postId: string): Promise<void> {
  await recordProgress(store, userId, { posts: await eraseOwnPost(store, userId, postId) });
}

/** Items per eraseWriter call, halved while the service does not accept a call whole (it bounds a script's work). */
const ERASE_PAGE = 50;
const notAccepted = (error: unknown): boolean => cosmosStatus(error) === 400 && String((error as Error).message).includes("eraseWriter was not accepted");

/** Removes the user's comments and like from one post, moving its counts, and drops the record of having written there. */
export async function eraseWritingOnPost(store: BlogStore, userId: string, postId: string): Promise<{ comments: number; likes: number }> {
  const erased = { comments: 0, likes: 0 };
  for (let pageSize = ERASE_PAGE; ;) {
    try {
      const result = await executeProcedure<{ comments: number; likes: number; continuation: string | null }>(store.posts, SPROCS.eraseWriter, postId, [
        postId,
        userId,
        store.settings.softDeleteTtlSeconds,
        pageSize,
      ]);
      erased.comments += result.comments;
      erased.likes += result.likes;
      if (result.continuation === null) break;
    } catch (error) {
      if (!notAccepted(error) || pageSize === 1) throw error;
      pageSize = Math.ceil(pageSize / 2);
    }
  }
  await deleteOwn(store, userId, contributionId(postId));
  return erased;
}

/**
 * The same, for what the posts change feed finds of an erased account after the erasure's sweep
 * (src/pipeline/posts-change-feed.ts), counted with the rest: the procedure counts only what it
 * removed, so nothing is counted twice, whoever gets there first.
 */
export async function eraseLateWritingOnPost(store: BlogStore, userId: string, postId: string): Promise<void> {
  await recordProgress(store, userId, await eraseWritingOnPost(store, userId, postId));
}

/** Step 1, a page: the user's own posts, found by their copies in the user's list (Q3); each counted by whoever deleted it. */
export async function eraseOwnPostsPage(store: BlogStore, userId: string, pageSize: number): Promise<{ posts: number; more: boolean }> {
  const copies = await pageOf<{ postId: string }>(store, userId, "c.type = @value", "post", pageSize);
  let posts = 0;
  for (const { postId } of copies) posts += await eraseOwnPost(store, userId, postId);
  await recordProgress(store, userId, { posts });
  return { posts, more: copies.length === pageSize };
}

/** Step 2, a page: the posts they commented on or liked, found by the records the posts change feed keeps in their partition. */
export async function eraseWritingPage(store: BlogStore, userId: string, pageSize: number): Promise<{ comments: number; likes: number; more: boolean }> {
  const written = await pageOf<{ postId: string }>(store, userId, "c.type = @value", "contribution", pageSize);
  const done = { comments: 0, likes: 0 };
  for (const { postId } of written) {
    const erased = await eraseWritingOnPost(store, userId, postId);
    done.comments += erased.comments;
    done.likes += erased.likes;
  }
  await recordProgress(store, userId, done);
  return { ...done, more: written.length === pageSize };
}

/** Step 3, a page: whatever else their partition holds (records written meanwhile, anything of a later version), all but the erasure record. */
export async function eraseLeftoversPage(store: BlogStore, userId: string, pageSize: number): Promise<{ documents: number; more: boolean }> {
  const resources = await pageOf<{ id: string }>(store, userId, "c.id != @value", userId, pageSize);
  for (const { id } of resources) await deleteOwn(store, userId, id);
  await recordProgress(store, userId, { documents: resources.length });
  return { documents: resources.length, more: resources.length === pageSize };
}

/** The last step: the record says the erasure is complete (GET /users/{userId}/erasure). */
export async function completeErasure(store: BlogStore, userId: string): Promise<void> {
  await store.users.item(userId, userId).patch([{ op: "set", path: "/completedDate", value: nowIso() }]);
}
