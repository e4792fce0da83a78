import type { PostsContainerItem } from "../model/items";
import { readUser } from "../store/users";
import { rewriteUsernamesInPartition } from "../store/usernames";
import { syncPostCopies, type PostChange } from "../store/views";

type Change = PostsContainerItem & { _lsn: number };

const isPostsItem = (doc: unknown): doc is Change => {
  const type = (doc as { type?: unknown } | null)?.type;
  return type === "post" || type === "comment" || type === "like";
};

/**
 * An item written with a username the user no longer has (it read the profile just before a
 * rename): rewrite that partition with the current name. This closes the race the propagation
 * orchestration alone cannot see, because new writes only appear here.
 */
async function repairStaleUsernames(changes: Change[]): Promise<void> {
  const live = changes.filter((c) => !c.deleted);
  for (const userId of new Set(live.map((c) => c.userId))) {
    const user = await readUser(userId);
    if (!user) continue;
    const stalePosts = new Set(live.filter((c) => c.userId === userId && c.userUsername !== user.username).map((c) => c.postId));
    for (const postId of stalePosts) await rewriteUsernamesInPartition(postId, userId, user.username);
  }
}

/**
 * The `posts` change feed: keep usernames right, then copy each new or changed post in short
 * form into its author's `users` partition (Q3) and into `feed` (Q6); deleted posts leave both.
 * Idempotent, so at-least-once delivery is safe. A throw makes the host retry the batch.
 */
export async function handlePostsChanges(documents: unknown[]): Promise<void> {
  const changes = documents.filter(isPostsItem);
  await repairStaleUsernames(changes);
  for (const change of changes) {
    if (change.type === "post") await syncPostCopies(change as PostChange);
  }
}
