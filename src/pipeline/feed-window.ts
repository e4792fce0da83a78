import { LIMITS } from "../model/limits";
import { toShortForm } from "../model/short-form";
import type { FeedEntry, PostChange } from "../store/copies";

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

/**
 * What to do with a live post's change inside the feed window: write the copy now (a new
 * post, an edit, a rename, or counters last refreshed long enough ago), skip it (nothing a
 * reader sees changed), or refresh it later: a change that only moved the like or comment
 * counts of a copy written less than `refreshSeconds` ago. So the feed's partition takes at
 * most one write per post per `refreshSeconds` however fast the likes come.
 */
export function feedWritePlan(entry: FeedEntry | undefined, post: PostChange, refreshSeconds: number, nowMs: number): "now" | "skip" | { dueAtMs: number } {
  if (!entry || entry.deleted || entry.sourceLsn >= post._lsn) return "now";
  const copy = toShortForm(post);
  const sameText = copy.title === entry.title && copy.content === entry.content && copy.userUsername === entry.userUsername;
  if (!sameText) return "now";
  if (copy.likeCount === entry.likeCount && copy.commentCount === entry.commentCount) return "skip";
  const dueAtMs = (entry._ts ?? 0) * 1000 + refreshSeconds * 1000;
  return dueAtMs <= nowMs ? "now" : { dueAtMs };
}
