import type { BlogStore } from "./client";
import { SPROCS } from "./definitions";
import { cosmosStatus } from "./failures";
import { executeUntilDone } from "./procedures";

/**
 * One page of the posts partitions that still hold a live item of `userId` carrying another
 * username than `username`. The one cross-partition query of the system: it runs in the
 * background propagation, never on a request path, and is paged so no call is unbounded. A
 * continuation the service no longer accepts starts the lookup over (the rewrite is idempotent).
 */
export async function stalePartitionsPage(
  store: BlogStore,
  userId: string,
  username: string,
  pageSize: number,
  continuation: string | null,
): Promise<{ postIds: string[]; continuation: string | null }> {
  const query = {
    query: "SELECT c.postId FROM c WHERE c.userId = @userId AND c.userUsername != @username AND NOT IS_DEFINED(c.deleted)",
    parameters: [
      { name: "@userId", value: userId },
      { name: "@username", value: username },
    ],
  };
  const fetch = (token: string | undefined) =>
    store.posts.items.query<{ postId: string }>(query, { maxItemCount: pageSize, continuationToken: token }).fetchNext();
  let page;
  try {
    page = await fetch(continuation ?? undefined);
  } catch (error) {
    if (continuation === null || cosmosStatus(error) !== 400) throw error;
    page = await fetch(undefined);
  }
  return { postIds: [...new Set(page.resources.map((r) => r.postId))], continuation: page.continuationToken || null };
}

/** Rewrites one partition completely, following the stored procedure's continuations. */
export async function rewriteUsernamesInPartition(store: BlogStore, postId: string, userId: string, username: string): Promise<number> {
  let updated = 0;
  await executeUntilDone<{ updated: number; continuation: string | null }>(
    store.posts,
    SPROCS.updateUsernames,
    postId,
    (continuation) => [userId, username, continuation],
    (result) => (updated += result.updated),
  );
  return updated;
}
