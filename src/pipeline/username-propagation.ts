import * as df from "durable-functions";
import type { OrchestrationContext, Task } from "durable-functions";
import { readUser } from "../store/users";
import { partitionsWithStaleUsername, rewriteUsernames } from "../store/usernames";

export const PROPAGATION = "propagateUsername";
export const ACTIVITIES = { findStalePartitions: "findStalePartitions", renameInPartition: "renameInPartition" } as const;

export interface PropagationInput {
  userId: string;
}

export interface StalePartitions {
  /** The user's current username (null if the profile is gone): every item should carry it. */
  username: string | null;
  postIds: string[];
}

export interface PartitionRename {
  userId: string;
  postId: string;
  continuation: string | null;
}

export interface PropagationStatus {
  username: string | null;
  round: number;
  partitions: number;
  done: number;
  updated: number;
}

/** At most this many partitions are rewritten at once. */
export const FAN_OUT = 50;
/** Sweeps after the first: writes that read the old name just before the rename may land later. */
export const MAX_ROUNDS = 10;
export const SETTLE_MS = 500;

export const activityRetry = (() => {
  const retry = new df.RetryOptions(500, 6);
  retry.backoffCoefficient = 2;
  retry.maxRetryIntervalInMilliseconds = 10_000;
  return retry;
})();

/** Activity: which partitions still carry a username other than the user's current one. */
export async function findStalePartitions(input: PropagationInput): Promise<StalePartitions> {
  const user = await readUser(input.userId);
  if (!user) return { username: null, postIds: [] };
  return { username: user.username, postIds: await partitionsWithStaleUsername(input.userId, user.username) };
}

/**
 * Activity: one bounded updateUsernames call. It reads the current username itself, so two
 * propagations of quick successive renames both converge on the latest name.
 */
export async function renameInPartition(input: PartitionRename): Promise<{ updated: number; continuation: string | null }> {
  const user = await readUser(input.userId);
  if (!user) return { updated: 0, continuation: null };
  return rewriteUsernames(input.postId, input.userId, user.username, input.continuation);
}

/**
 * Orchestration: rewrite userUsername on every post, comment and like of one user, one
 * stored-procedure call per posts partition (fan-out, retried), following continuations,
 * then sweep again until no item carries another name. Progress is the custom status.
 */
export function* propagateUsername(context: OrchestrationContext): Generator<Task, PropagationStatus, unknown> {
  const { userId } = context.df.getInput<PropagationInput>();
  const status: PropagationStatus = { username: null, round: 0, partitions: 0, done: 0, updated: 0 };
  while (status.round < MAX_ROUNDS) {
    const stale = (yield context.df.callActivityWithRetry(ACTIVITIES.findStalePartitions, activityRetry, { userId })) as StalePartitions;
    status.username = stale.username;
    if (stale.postIds.length === 0) break;
    status.round += 1;
    status.partitions += stale.postIds.length;
    let pending: PartitionRename[] = stale.postIds.map((postId) => ({ userId, postId, continuation: null }));
    while (pending.length > 0) {
      const batch = pending.slice(0, FAN_OUT);
      const results = (yield context.df.Task.all(batch.map((rename) => context.df.callActivityWithRetry(ACTIVITIES.renameInPartition, activityRetry, rename)))) as {
        updated: number;
        continuation: string | null;
      }[];
      const unfinished = batch.flatMap((rename, i) => (results[i].continuation === null ? [] : [{ ...rename, continuation: results[i].continuation }]));
      status.updated += results.reduce((sum, r) => sum + r.updated, 0);
      status.done += batch.length - unfinished.length;
      pending = [...pending.slice(FAN_OUT), ...unfinished];
      context.df.setCustomStatus({ ...status });
    }
    yield context.df.createTimer(new Date(context.df.currentUtcDateTime.getTime() + SETTLE_MS));
  }
  context.df.setCustomStatus({ ...status });
  return status;
}
