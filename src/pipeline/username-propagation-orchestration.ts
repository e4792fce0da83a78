import type { BlogStore } from "../store/client";
import type { OrchestrationContext, Task } from "durable-functions";
import { MalformedItemError } from "../model/errors";
import { readUser, readWellFormedUser } from "../store/users";
import { stalePartitionsPage, rewriteUsernamesInPartition } from "../store/username-propagation";
import { orchestrationInput, propagationInput } from "./orchestration-inputs";
import { activityRetry, failureBackoff, withDefaults, type PipelinePolicy } from "./policy";

export const PROPAGATION = "propagateUsername";
export const PROPAGATION_ACTIVITIES = { findStalePartitions: "findStalePartitions", renameInPartition: "renameInPartition" } as const;

export interface PropagationStatus {
  /** The user's current username (null if the profile is gone): every item should carry it. */
  username: string | null;
  sweep: number;
  pages: number;
  partitions: number;
  updated: number;
  /** Failed rounds in a row (an activity ran out of attempts); reset by a good round. */
  failures: number;
  lastError?: string;
}

export interface PropagationInput {
  userId: string;
  policy?: Partial<PipelinePolicy>;
  /** Carried across continue-as-new: where the lookup goes on, and what is done so far. */
  continuation?: string | null;
  renamedThisSweep?: number;
  status?: PropagationStatus;
}

export interface StalePage {
  username: string | null;
  postIds: string[];
  continuation: string | null;
  /** Why the propagation can never succeed (the profile is malformed): it ends as Failed, not retried. */
  permanentFailure?: string;
}

/** Activity: one page of the posts partitions that still hold an item of the user under another name. */
export async function findStalePartitions(store: BlogStore, input: { userId: string; continuation: string | null; pageSize: number }): Promise<StalePage> {
  let user;
  try {
    user = await readUser(store, input.userId);
  } catch (error) {
    // Retrying cannot help, and copying its name would spread it: the orchestration fails.
    if (error instanceof MalformedItemError) return { username: null, postIds: [], continuation: null, permanentFailure: error.message };
    throw error;
  }
  if (!user) return { username: null, postIds: [], continuation: null };
  return { username: user.username, ...(await stalePartitionsPage(store, input.userId, user.username, input.pageSize, input.continuation)) };
}

/**
 * Activity: rewrites one partition completely (bounded stored procedure calls, following
 * continuations). It reads the current username itself, so two propagations of quick
 * successive renames both converge on the latest name.
 */
export async function renameInPartition(store: BlogStore, input: { userId: string; postId: string }): Promise<{ updated: number }> {
  const user = await readWellFormedUser(store, input.userId);
  if (!user) return { updated: 0 };
  return { updated: await rewriteUsernamesInPartition(store, input.postId, input.userId, user.username) };
}

/** A failure no retry can mend: it ends the orchestration as Failed, with its reason. */
class PermanentFailure extends Error {}

const initialStatus = (): PropagationStatus => ({ username: null, sweep: 0, pages: 0, partitions: 0, updated: 0, failures: 0 });

/**
 * Orchestration: rewrite userUsername on every live post, comment and like of one user. Each
 * execution handles one page of the stale-partition lookup (one updateUsernames fan-out over
 * its partitions) and continues as new with the lookup's continuation, so the history stays
 * bounded however many posts the user has. A finished sweep that still found work is followed
 * by another after a short wait. A round whose activity ran out of attempts is not the end:
 * the orchestration waits (a durable timer, backing off) and tries that round again.
 * Progress is the custom status.
 */
export function* propagateUsername(context: OrchestrationContext): Generator<Task, PropagationStatus | undefined, unknown> {
  const input: PropagationInput = orchestrationInput(PROPAGATION, propagationInput, context.df.getInput());
  const policy = withDefaults(input.policy);
  const status = input.status ?? initialStatus();
  const continueWith = (next: Partial<PropagationInput>) => context.df.continueAsNew({ ...input, status, ...next });
  try {
    const retry = activityRetry(policy);
    const page = (yield context.df.callActivityWithRetry(PROPAGATION_ACTIVITIES.findStalePartitions, retry, {
      userId: input.userId,
      continuation: input.continuation ?? null,
      pageSize: policy.pageSize,
    })) as StalePage;
    if (page.permanentFailure) throw new PermanentFailure(page.permanentFailure);
    const renamed =
      page.postIds.length === 0
        ? []
        : ((yield context.df.Task.all(
            page.postIds.map((postId) => context.df.callActivityWithRetry(PROPAGATION_ACTIVITIES.renameInPartition, retry, { userId: input.userId, postId })),
          )) as { updated: number }[]);
    const updated = renamed.reduce((sum, r) => sum + r.updated, 0);
    Object.assign(status, {
      username: page.username,
      pages: status.pages + 1,
      partitions: status.partitions + page.postIds.length,
      updated: status.updated + updated,
      failures: 0,
    });
    context.df.setCustomStatus(status);
    const renamedThisSweep = (input.renamedThisSweep ?? 0) + page.postIds.length;
    if (page.continuation) {
      continueWith({ continuation: page.continuation, renamedThisSweep });
      return undefined;
    }
    if (renamedThisSweep > 0 && status.sweep + 1 < policy.maxSweeps) {
      yield context.df.createTimer(new Date(context.df.currentUtcDateTime.getTime() + policy.settleMs));
      status.sweep += 1;
      continueWith({ continuation: null, renamedThisSweep: 0 });
      return undefined;
    }
    return status;
  } catch (error) {
    if (error instanceof PermanentFailure) throw error;
    status.failures += 1;
    status.lastError = (error as Error).message.slice(0, 500);
    context.df.setCustomStatus(status);
    yield context.df.createTimer(new Date(context.df.currentUtcDateTime.getTime() + failureBackoff(policy, status.failures)));
    continueWith({});
    return undefined;
  }
}
