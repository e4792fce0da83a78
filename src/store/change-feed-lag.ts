import { ChangeFeedStartFrom, StatusCodes, type Container } from "@azure/cosmos";
import type { LagReading } from "../telemetry";
import type { BlogStore } from "./client";

/** A change feed consumer as its trigger names it: its function name and lease prefix. */
interface ChangeFeedConsumer {
  name: string;
  leaseContainerPrefix: string;
}

/** A lease as the change feed trigger's engine (the .NET change feed processor) writes it: the fields an estimate reads. */
interface TriggerLease {
  id: string;
  /** The partition key range's id. */
  LeaseToken: string;
  /** Its range's bounds (absent in leases of older processors: found by LeaseToken then). */
  FeedRange?: { Range?: { min: string; max: string } };
  /** The change feed's ETag (`"<lsn>"`) at the last checkpoint; null before the first. */
  ContinuationToken: string | null;
}

interface Range {
  id: string;
  minInclusive: string;
  maxExclusive: string;
}

/** The global LSN in a session token (`<range>:<version>#<lsn>#...`, or `<range>:-1#<lsn>`), as the .NET estimator reads it. */
function sessionLsn(token: string | undefined): number | undefined {
  const lsn = Number(token?.slice(token.indexOf(":") + 1).split("#")[1]);
  return Number.isFinite(lsn) ? lsn : undefined;
}

/**
 * One consumer's lag on one lease, as the change feed estimator of the .NET SDK measures it: read
 * one change past the checkpoint; the changes behind are the range's newest LSN (its session
 * token) minus that change's LSN, plus one; how long it has waited is its age (`_ts`). A read that
 * finds nothing means no lag. One change feed read per lease, whatever the lag.
 */
async function leaseLag(monitored: Container, collectionRid: string, lease: TriggerLease, range: Range, nowMs: number): Promise<Omit<LagReading, "consumer">> {
  const start = lease.ContinuationToken
    ? ChangeFeedStartFrom.Continuation(
        JSON.stringify({
          rid: collectionRid,
          Continuation: [{ minInclusive: range.minInclusive, maxExclusive: range.maxExclusive, continuationToken: lease.ContinuationToken }],
        }),
      )
    : ChangeFeedStartFrom.Beginning((await monitored.getFeedRanges()).find((feedRange) => feedRange.minInclusive === range.minInclusive)!);
  const page = await monitored.items.getChangeFeedIterator<{ _ts?: number; _lsn?: number }>({ changeFeedStartFrom: start, maxItemCount: 1 }).readNext();
  const next = page.statusCode === StatusCodes.NotModified ? undefined : page.result[0];
  if (!next) return { lease: lease.id, items: 0, seconds: 0 };
  const newest = sessionLsn(page.sessionToken);
  const items = newest !== undefined && typeof next._lsn === "number" ? Math.max(1, newest - next._lsn + 1) : 1;
  return { lease: lease.id, items, seconds: Math.max(0, nowMs / 1000 - (next._ts ?? nowMs / 1000)) };
}

/**
 * Every lease of one consumer (its lease prefix on the shared lease container, for the monitored
 * container's current resource id: leases of a container deleted and created again are not its).
 * It reads the change feed, not the consumer, so a stalled or failing consumer's lag rises.
 */
export async function estimateLag(monitored: Container, leases: Container, trigger: ChangeFeedConsumer, nowMs = Date.now()): Promise<LagReading[]> {
  const { resource: collection } = await monitored.read();
  const collectionRid = collection!._rid;
  // Read only for a lease without its bounds (an older processor's): the trigger's own leases carry them.
  let ranges: Promise<Range[]> | undefined;
  const rangeOf = async (token: string) => {
    ranges ??= monitored
      .readPartitionKeyRanges()
      .fetchAll()
      .then(({ resources }) => resources as Range[]);
    return (await ranges).find((candidate) => candidate.id === token);
  };
  const query = {
    query: "SELECT c.id, c.LeaseToken, c.FeedRange, c.ContinuationToken FROM c WHERE STARTSWITH(c.id, @prefix) AND IS_DEFINED(c.LeaseToken)",
    parameters: [{ name: "@prefix", value: trigger.leaseContainerPrefix }],
  };
  const { resources: held } = await leases.items.query<TriggerLease>(query).fetchAll();
  const readings: LagReading[] = [];
  for (const lease of held.filter((candidate) => candidate.id.includes(`_${collectionRid}..`))) {
    const bounds = lease.FeedRange?.Range;
    const range = bounds ? { id: lease.LeaseToken, minInclusive: bounds.min, maxExclusive: bounds.max } : await rangeOf(lease.LeaseToken);
    // A range split since: the consumer replaces its lease; the next reading sees the new ones.
    if (!range) continue;
    readings.push({ consumer: trigger.name, ...(await leaseLag(monitored, collectionRid, lease, range, nowMs)) });
  }
  return readings;
}

/** Every lease's lag of the consumer of one of the store's containers (its trigger's lease prefix), on the shared lease container. */
export function estimateStoreLag(store: BlogStore, containerName: string, consumer: ChangeFeedConsumer, nowMs = Date.now()): Promise<LagReading[]> {
  const { database, leases } = store;
  return estimateLag(database.container(containerName), leases, consumer, nowMs);
}
