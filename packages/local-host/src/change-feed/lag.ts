import { untraced } from "../telemetry";
import { ChangeFeedStartFrom, StatusCodes, type Container, type FeedRange } from "@azure/cosmos";
import type { CosmosDBTriggerFunction } from "../worker/function-app";
import { LeaseStore } from "./leases";

type Consumer = Pick<CosmosDBTriggerFunction, "name" | "leaseContainerPrefix">;

/** A consumer's position on one lease: how long its oldest unprocessed change has waited, and how many wait. */
export interface LagReading {
  consumer: string;
  lease: string;
  seconds: number;
  /** Changes behind, counted up to COUNT_AT_MOST. */
  items?: number;
}

/** Changes counted past a checkpoint at most: beyond it, the estimate says "at least". */
const COUNT_AT_MOST = 1000;

/**
 * The change feed estimator, as the change feed processor libraries have one: for each lease of
 * a consumer, the changes after its checkpoint (counted up to COUNT_AT_MOST) and how long the
 * oldest of them has waited. It reads the change feed, so it works whether the consumer runs or
 * not: a stopped consumer's lag rises. Each reading costs one change feed read per lease; the
 * lease names are resolved once, by the estimator this returns.
 */
export function lagEstimator(
  container: Container,
  leaseContainer: Container,
  trigger: Consumer,
  accountHost: string,
): (nowMs?: number) => Promise<LagReading[]> {
  const leases = new LeaseStore(leaseContainer, container, accountHost, trigger.leaseContainerPrefix);
  // A measurement, not work: its reads add no spans.
  return (nowMs = Date.now()) => untraced(() => readLag(container, leases, trigger, nowMs));
}

async function readLag(container: Container, leases: LeaseStore, trigger: Consumer, nowMs: number): Promise<LagReading[]> {
  const ranges = new Map<string, FeedRange>();
  for (const range of await container.getFeedRanges()) ranges.set(await leases.idOf(range), range);
  const readings: LagReading[] = [];
  for (const lease of await leases.list()) {
    const range = ranges.get(lease.id);
    if (!range && !lease.continuation) continue;
    const start = lease.continuation ? ChangeFeedStartFrom.Continuation(lease.continuation) : ChangeFeedStartFrom.Beginning(range!);
    const page = await container.items.getChangeFeedIterator<{ _ts?: number }>({ changeFeedStartFrom: start, maxItemCount: COUNT_AT_MOST }).readNext();
    const waiting = page.statusCode === StatusCodes.NotModified ? [] : page.result;
    const oldest = Math.min(...waiting.map((change) => change._ts ?? nowMs / 1000));
    readings.push({ consumer: trigger.name, lease: lease.id, items: waiting.length, seconds: waiting.length === 0 ? 0 : Math.max(0, nowMs / 1000 - oldest) });
  }
  return readings;
}
