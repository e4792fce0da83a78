import { AsyncLocalStorage } from "node:async_hooks";
import type { LikeItem } from "../model/items";
import { perStore, type BlogStore } from "./client";
import { SPROCS } from "./definitions";
import { cosmosStatus } from "./failures";
import { recordLikeBatch } from "../telemetry";
import { executeProcedure } from "./procedures";

/** One like or unlike as the changeLikes stored procedure takes it. */
export type LikeChange = ({ userId: string; like: true; userUsername: string; creationDate: string } | { userId: string; like: false }) & {
  /** The requesting trace's context, stored on the like (withTraceOrigin). */
  traceparent?: string;
};

export type LikeOutcome = { status: "created" | "exists"; like: LikeItem } | { status: "deleted" | "likeNotFound" | "postNotFound" };

type ChangeLikesResult = { status: "postNotFound" } | { status: "applied"; results: LikeOutcome[] };

interface Waiting {
  change: LikeChange;
  /** The caller's async context: a batch's call is made in its first caller's, so that request's metering sees it. */
  inCaller: <R>(fn: () => R) => R;
  settle: (outcome: LikeOutcome) => void;
  fail: (error: unknown) => void;
}

/** Per store, the changes per post waiting for the call in flight for that post; a post is here only while a call for it runs. */
const postQueues = perStore(() => new Map<string, Waiting[]>());

/**
 * Group commit of likes: a change for a post with no call in flight goes at once, alone; changes
 * that arrive while one runs wait and go together in the next call. A quiet post keeps the
 * latency of one call per like, and a hot post pays one read and one replace of the post per
 * batch instead of per like: the busier (or more throttled) the partition, the larger the
 * batches, so the likes a partition can take per second rise when they are needed.
 * Each change is still acknowledged only once its own transaction has committed.
 */
export function changeLike(store: BlogStore, postId: string, change: LikeChange): Promise<LikeOutcome> {
  return new Promise<LikeOutcome>((settle, fail) => {
    const entry: Waiting = { change, inCaller: AsyncLocalStorage.snapshot(), settle, fail };
    const queues = postQueues(store);
    const waiting = queues.get(postId);
    if (waiting) {
      waiting.push(entry);
      return;
    }
    const queue: Waiting[] = [entry];
    queues.set(postId, queue);
    void drain(store, postId, queue);
  });
}

async function drain(store: BlogStore, postId: string, queue: Waiting[]): Promise<void> {
  let batchMax = store.settings.likeBatchMax;
  try {
    while (queue.length > 0) {
      const batch = queue.splice(0, batchMax);
      try {
        const outcomes = await batch[0].inCaller(() =>
          send(
            store,
            postId,
            batch.map((w) => w.change),
          ),
        );
        batch.forEach((w, i) => w.settle(outcomes[i]));
      } catch (error) {
        if (notAccepted(error) && batch.length > 1) {
          // The partition could not take the whole call (rolled back): the same changes, in their order, in smaller calls.
          batchMax = Math.ceil(batch.length / 2);
          queue.unshift(...batch);
          continue;
        }
        // Nothing of a failed call was committed: each caller gets the error (429, 503, ...) to retry.
        for (const w of batch) w.fail(error);
      }
    }
  } finally {
    postQueues(store).delete(postId);
  }
}

async function send(store: BlogStore, postId: string, changes: LikeChange[]): Promise<LikeOutcome[]> {
  recordLikeBatch(changes.length);
  const result = await executeProcedure<ChangeLikesResult>(store.posts, SPROCS.changeLikes, postId, [postId, changes, store.settings.softDeleteTtlSeconds]);
  return result.status === "postNotFound" ? changes.map(() => ({ status: "postNotFound" })) : result.results;
}

/** The procedure's own refusal when a write of the call was not accepted (the service bounds a script's work). */
const notAccepted = (error: unknown): boolean => cosmosStatus(error) === 400 && String((error as Error).message).includes("changeLikes was not accepted");
