import * as df from "durable-functions";
import { UNBORN_CLAIM_GRACE_SECONDS } from "../store/username-claims";

/**
 * How the background orchestrations pace themselves. Fixed in an orchestration's input when it
 * starts (replays must be deterministic); hosts may override any of it (tests make it quick).
 */
export interface PipelinePolicy {
  /** Attempts of one activity, and the wait before the second (doubling after). */
  activityAttempts: number;
  activityRetryFirstMs: number;
  /** After a round failed (an activity ran out of attempts): wait this long, doubling, up to the max, then try the round again. */
  failureBackoffMs: number;
  failureBackoffMaxMs: number;
  /** Between sweeps of a rename: writes that read the old name just before it may land a moment later. */
  settleMs: number;
  maxSweeps: number;
  /** Posts partitions per page of the stale-partition lookup (one continue-as-new per page). */
  pageSize: number;
  /** A claim whose owner has no profile is freed only when older than this: the profile's creation may be in flight. */
  unbornClaimGraceSeconds: number;
  /** Before looking again at such a claim. */
  claimRecheckMs: number;
}

export const DEFAULT_POLICY: PipelinePolicy = {
  activityAttempts: 5,
  activityRetryFirstMs: 500,
  failureBackoffMs: 1_000,
  failureBackoffMaxMs: 5 * 60_000,
  settleMs: 500,
  maxSweeps: 10,
  pageSize: 50,
  unbornClaimGraceSeconds: UNBORN_CLAIM_GRACE_SECONDS,
  claimRecheckMs: 65_000,
};

export const withDefaults = (policy: Partial<PipelinePolicy> | undefined): PipelinePolicy => ({ ...DEFAULT_POLICY, ...policy });

export function activityRetry(policy: PipelinePolicy): df.RetryOptions {
  const retry = new df.RetryOptions(policy.activityRetryFirstMs, policy.activityAttempts);
  retry.backoffCoefficient = 2;
  retry.maxRetryIntervalInMilliseconds = 10_000;
  return retry;
}

/** The wait after the n-th failed round in a row. */
export const failureBackoff = (policy: PipelinePolicy, failures: number) => Math.min(policy.failureBackoffMs * 2 ** (failures - 1), policy.failureBackoffMaxMs);
