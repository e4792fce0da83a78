import type { BlogStore } from "../store/client";
import { clearCopies, countPosts, postsChangeFeedFromStart } from "../store/copy-rebuild";
import { inBackground } from "../store/priority";
import { handlePostsChanges } from "./posts-change-feed";

export interface RebuildProgress {
  /** Called once with the number of posts to replay, then after each page with how many it held. */
  total(posts: number): void;
  advance(posts: number): void;
}

/**
 * The article's one-time catch-up: replays the `posts` change feed from the beginning through
 * the same handler the live pipeline uses, rebuilding Q3 and Q6 copies. Idempotent; with
 * `fresh`, existing copies are deleted first. Background work: low priority.
 */
export function rebuildCopies(store: BlogStore, options: { fresh: boolean; progress?: RebuildProgress }): Promise<{ cleared: number; posts: number }> {
  return inBackground(() => replayPosts(store, options));
}

async function replayPosts(store: BlogStore, options: { fresh: boolean; progress?: RebuildProgress }): Promise<{ cleared: number; posts: number }> {
  const cleared = options.fresh ? await clearCopies(store) : 0;
  options.progress?.total(await countPosts(store));
  let replayed = 0;
  for await (const page of postsChangeFeedFromStart(store)) {
    await handlePostsChanges(store, page);
    const postsInPage = page.filter((item) => item.type === "post").length;
    replayed += postsInPage;
    options.progress?.advance(postsInPage);
  }
  return { cleared, posts: replayed };
}
