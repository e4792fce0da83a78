import { LIMITS } from "../model/limits";
import type { FeedEntry } from "../store/feed";

type SortKey = { creationDate: string; id: string };

/** Feed order: newest first, ties broken by id (as Q6 sorts). Positive when `a` comes first. */
const newer = (a: SortKey, b: SortKey) =>
  a.creationDate === b.creationDate ? (a.id === b.id ? 0 : a.id > b.id ? 1 : -1) : a.creationDate > b.creationDate ? 1 : -1;

/**
 * The feed as the pipeline sees it: which posts it holds and where its window ends. The feed
 * is the 100 newest live posts; a post older than the 100th is outside the window and is
 * never written to the feed (its changes do not load the feed's single partition).
 */
export class FeedWindow {
  private readonly byId: Map<string, FeedEntry>;
  private readonly live: FeedEntry[];

  constructor(entries: FeedEntry[]) {
    this.byId = new Map(entries.map((entry) => [entry.id, entry]));
    this.live = entries.filter((entry) => !entry.deleted).sort((a, b) => newer(b, a));
  }

  get full(): boolean {
    return this.live.length >= LIMITS.feedSize;
  }

  /** Whether the feed holds a live copy of this post. */
  holds(postId: string): boolean {
    const entry = this.byId.get(postId);
    return entry !== undefined && !entry.deleted;
  }

  entry(postId: string): FeedEntry | undefined {
    return this.byId.get(postId);
  }

  /** Whether a post with this sort key belongs among the 100 newest (always, while the feed is not full). */
  admits(post: SortKey): boolean {
    return !this.full || newer(post, this.live[LIMITS.feedSize - 1]) >= 0;
  }
}
