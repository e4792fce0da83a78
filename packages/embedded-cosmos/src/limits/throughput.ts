import { CosmosError } from "../wire/errors";

/** A request's priority (the `x-ms-cosmos-priority-level` header); without one, the account's default: high. */
export type Priority = "High" | "Low";

/**
 * Provisioned throughput, scaled down to operations: each physical partition of a container
 * may serve `perSecond` item operations (reads, writes, queries; a stored procedure call costs
 * one per collection call it makes) a second, with up to one second's worth saved up, as Azure
 * lets a partition burst within its budget. A request is admitted while the budget is positive
 * and then charged in full, so a large one leaves a debt the next ones wait out, as request
 * units work. Beyond it the request is throttled with 429 and `x-ms-retry-after-ms`, the answer
 * a partition out of request units gives. Off unless configured: it exists to exercise what
 * clients do when throttled (the SDK's retries, then the API's 429).
 *
 * Priority-based execution, as Azure documents it: when a partition runs short, its
 * low-priority requests (`x-ms-cosmos-priority-level: Low`) are throttled first. Here a
 * low-priority request is admitted only while more than a reserve (a tenth of a second's
 * budget) is left, which high-priority requests (and those that name none: the account's
 * default) may still spend.
 */
export class ThroughputBudget {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly perSecond: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    if (!(perSecond > 0)) throw new Error(`operations per second must be positive, got ${perSecond}`);
  }

  /** Spends one operation of the partition's budget, or throws 429 with the wait until the next one this priority may take. */
  spend(partition: string, priority: Priority = "High"): void {
    const bucket = this.refilled(partition);
    const needed = 1 + (priority === "Low" ? this.reserve : 0);
    if (bucket.tokens >= needed) {
      bucket.tokens -= 1;
      return;
    }
    const waitMs = Math.ceil(((needed - bucket.tokens) / this.perSecond) * 1000);
    throw tooManyRequests(waitMs);
  }

  /** What low-priority requests leave to high-priority ones: a tenth of a second's budget. */
  private get reserve(): number {
    return this.perSecond / 10;
  }

  /** Charges what an admitted request cost beyond its first operation; the budget may go into debt. */
  charge(partition: string, operations: number): void {
    if (operations > 0) this.refilled(partition).tokens -= operations;
  }

  private refilled(partition: string): { tokens: number; at: number } {
    const now = this.now();
    const bucket = this.buckets.get(partition) ?? { tokens: this.perSecond, at: now };
    bucket.tokens = Math.min(this.perSecond, bucket.tokens + ((now - bucket.at) / 1000) * this.perSecond);
    bucket.at = now;
    this.buckets.set(partition, bucket);
    return bucket;
  }
}

export function tooManyRequests(retryAfterMs: number): CosmosError {
  const error = new CosmosError(
    429,
    "TooManyRequests",
    "Request rate is large. More Request Units may be needed, so no changes were made. Please retry this request later.",
    3200,
  );
  error.headers = { "x-ms-retry-after-ms": String(retryAfterMs) };
  return error;
}
