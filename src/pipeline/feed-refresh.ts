import type { BlogStore } from "../store/client";
import type { OrchestrationContext, Task } from "durable-functions";
import { FEED_PARTITION } from "../store/feed";
import { readPost } from "../store/posts";
import { cosmosStatus } from "../store/failures";
import { copyOf, feed, type FeedEntry } from "../store/copies";
import { feedRefreshInput, instanceIdOf, orchestrationInput } from "./orchestration-inputs";
import { activityRetry, failureBackoff, withDefaults, type PipelinePolicy } from "./policy";

export const FEED_REFRESH = "refreshFeedCopy";
export const FEED_REFRESH_ACTIVITIES = { copyPostToFeed: "copyPostToFeed" } as const;

export interface FeedRefreshInput {
  postId: string;
  /** The newest change the refresh stands for: its copy is stamped with it. */
  sourceLsn: number;
  /** Not before this time (ISO): FEED_REFRESH_SECONDS after the copy was last written. */
  dueAt: string;
  policy?: Partial<PipelinePolicy>;
  failures?: number;
}

/** One refresh per post and due time: every counter change until then is covered by it. */
export const feedRefreshInstanceId = (postId: string, dueAtMs: number) => instanceIdOf("feed-refresh", postId, dueAtMs);

/**
 * Activity: brings the feed's copy of a post up to the post as it is now, if the feed still
 * holds a live copy of it (a post that left the window or was deleted is not written back).
 * The copy keeps the newest change's LSN it stands for. After writing, the post is read again:
 * a change that landed meanwhile may have been planned against the copy as it was before this
 * write (and so found this refresh already under way), so it is copied too.
 */
export async function copyPostToFeed(store: BlogStore, input: { postId: string; sourceLsn: number }): Promise<"written" | "current" | "gone"> {
  const target = feed(store);
  let written = false;
  for (let attempt = 0; attempt < 5; attempt++) {
    const { resource: entry } = await target.container.item(input.postId, FEED_PARTITION).read<FeedEntry & { _etag: string }>();
    if (!entry || entry.deleted) return "gone";
    const post = await readPost(store, input.postId);
    if (!post || post.deleted) return "gone";
    const copy = copyOf({ ...post, _lsn: Math.max(entry.sourceLsn, input.sourceLsn) });
    try {
      await target.container
        .item(input.postId, FEED_PARTITION)
        .replace(copy, { postTriggerInclude: target.triggers, accessCondition: { type: "IfMatch", condition: entry._etag } });
      written = true;
    } catch (error) {
      if (cosmosStatus(error) === 404) return "gone";
      if (cosmosStatus(error) !== 412) throw error;
      continue; // the copy changed under us: plan again from it
    }
    if ((await readPost(store, input.postId))?._etag === post._etag) return "written";
  }
  return written ? "written" : "current";
}

/** Orchestration: wait until the refresh is due (a durable timer), then copy; after a failure, back off and try again. */
export function* refreshFeedCopy(context: OrchestrationContext): Generator<Task, string | undefined, unknown> {
  const input: FeedRefreshInput = orchestrationInput(FEED_REFRESH, feedRefreshInput, context.df.getInput());
  const policy = withDefaults(input.policy);
  const dueAt = new Date(input.dueAt);
  if (dueAt > context.df.currentUtcDateTime) yield context.df.createTimer(dueAt);
  try {
    return (yield context.df.callActivityWithRetry(FEED_REFRESH_ACTIVITIES.copyPostToFeed, activityRetry(policy), {
      postId: input.postId,
      sourceLsn: input.sourceLsn,
    })) as string;
  } catch {
    const failures = (input.failures ?? 0) + 1;
    yield context.df.createTimer(new Date(context.df.currentUtcDateTime.getTime() + failureBackoff(policy, failures)));
    context.df.continueAsNew({ ...input, failures });
    return undefined;
  }
}
