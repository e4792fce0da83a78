import type { BlogStore } from "../store/client";
import type { OrchestrationContext, Task } from "durable-functions";
import { releaseOrphanedClaims } from "../store/username-claims";
import { claimsSweepInput, orchestrationInput } from "./orchestration-inputs";
import { activityRetry, failureBackoff, withDefaults, type PipelinePolicy } from "./policy";

export const CLAIMS_SWEEP = "releaseOrphanedUsernames";
export const CLAIMS_ACTIVITIES = { releaseOrphanedClaims: "releaseOrphanedClaims" } as const;

export interface ClaimsSweepInput {
  userId: string;
  policy?: Partial<PipelinePolicy>;
  failures?: number;
}

/** Activity: frees every claim of the user that their profile does not use. */
export async function releaseOrphanedClaimsActivity(
  store: BlogStore,
  input: { userId: string; unbornGraceSeconds: number },
): Promise<{ released: number; pending: number }> {
  return releaseOrphanedClaims(store, input.userId, input.unbornGraceSeconds);
}

/**
 * Orchestration: the sweep for orphaned username claims of one user (a claim whose owner's
 * profile uses another name, left behind when a request was cut off between its steps). A
 * claim that may still be part of a profile's creation in flight is looked at again later.
 */
export function* releaseOrphanedUsernames(context: OrchestrationContext): Generator<Task, { released: number } | undefined, unknown> {
  const input: ClaimsSweepInput = orchestrationInput(CLAIMS_SWEEP, claimsSweepInput, context.df.getInput());
  const policy = withDefaults(input.policy);
  const later = (ms: number) => context.df.createTimer(new Date(context.df.currentUtcDateTime.getTime() + ms));
  try {
    const result = (yield context.df.callActivityWithRetry(CLAIMS_ACTIVITIES.releaseOrphanedClaims, activityRetry(policy), {
      userId: input.userId,
      unbornGraceSeconds: policy.unbornClaimGraceSeconds,
    })) as { released: number; pending: number };
    context.df.setCustomStatus(result);
    if (result.pending === 0) return { released: result.released };
    yield later(policy.claimRecheckMs);
    context.df.continueAsNew({ ...input, failures: 0 });
  } catch {
    const failures = (input.failures ?? 0) + 1;
    yield later(failureBackoff(policy, failures));
    context.df.continueAsNew({ ...input, failures });
  }
  return undefined;
}
