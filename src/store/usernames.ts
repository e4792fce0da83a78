import { store } from "./client";
import { executeProcedure, executeUntilDone } from "./requests";
import { SPROCS } from "./definitions";

/**
 * The posts partitions that still hold an item of `userId` carrying another username than
 * `username`. The one cross-partition query of the system: it runs in the background
 * propagation, never on a request path.
 */
export async function partitionsWithStaleUsername(userId: string, username: string): Promise<string[]> {
  const { resources } = await store()
    .posts.items.query<{ postId: string }>({
      query: "SELECT p.postId FROM p WHERE p.userId = @userId AND p.userUsername != @username",
      parameters: [
        { name: "@userId", value: userId },
        { name: "@username", value: username },
      ],
    })
    .fetchAll();
  return [...new Set(resources.map((r) => r.postId))];
}

/** One bounded updateUsernames call in one posts partition; a non-null continuation means "call again". */
export async function rewriteUsernames(postId: string, userId: string, username: string, continuation: string | null): Promise<{ updated: number; continuation: string | null }> {
  return executeProcedure(store().posts, SPROCS.updateUsernames, postId, [userId, username, continuation]);
}

/** Rewrites one partition completely, following continuations. */
export async function rewriteUsernamesInPartition(postId: string, userId: string, username: string): Promise<number> {
  let updated = 0;
  await executeUntilDone<{ updated: number; continuation: string | null }>(
    store().posts,
    SPROCS.updateUsernames,
    postId,
    (continuation) => [userId, username, continuation],
    (result) => (updated += result.updated),
  );
  return updated;
}
