import { lastFailure } from "./episodes";
import type { InstanceRecord, RuntimeStatus } from "./store";

// What a client sees of instances: their status, queries over them, and the requests their
// state refuses.

/** An instance's status, as the durable client's getStatus reports it. */
export interface InstanceStatus {
  name: string;
  instanceId: string;
  createdTime: Date;
  lastUpdatedTime: Date;
  input: unknown;
  output: unknown;
  runtimeStatus: RuntimeStatus;
  customStatus?: unknown;
  history?: unknown[];
}

/** Which instances a query or purge by filter takes: every one that matches all given fields. */
export interface InstanceFilter {
  runtimeStatus?: string[];
  createdTimeFrom?: Date;
  createdTimeTo?: Date;
}

/** A request the host refuses (malformed, or refused by an instance's state), with the status the Durable Functions HTTP API answers. */
export class DurableRequestError extends Error {
  constructor(
    readonly status: 400 | 404 | 409 | 412,
    message: string,
  ) {
    super(message);
  }
}

/** The statuses an instance ends in: it takes no more events, and may be started again under its id. */
export const FINISHED: readonly RuntimeStatus[] = ["Completed", "Failed", "Terminated"];

/** What the durable client's getStatus reports of an instance (failures and terminations as the output). */
export function statusOf(record: InstanceRecord, showHistory: boolean): InstanceStatus {
  return {
    name: record.name,
    instanceId: record.instanceId,
    createdTime: new Date(record.createdTime),
    lastUpdatedTime: new Date(record.lastUpdatedTime),
    input: JSON.parse(record.input),
    output: record.runtimeStatus === "Failed" || record.runtimeStatus === "Terminated" ? record.failure : record.output,
    runtimeStatus: record.runtimeStatus,
    customStatus: record.customStatus,
    ...(showHistory ? { history: [...record.history] } : {}),
  };
}

/** The instances that match `filter`, oldest first (ties by id). */
export function matchingInstances(records: Iterable<InstanceRecord>, { runtimeStatus, createdTimeFrom, createdTimeTo }: InstanceFilter): InstanceRecord[] {
  return [...records]
    .filter(
      (r) =>
        (!runtimeStatus || runtimeStatus.includes(r.runtimeStatus)) &&
        (!createdTimeFrom || Date.parse(r.createdTime) >= createdTimeFrom.getTime()) &&
        (!createdTimeTo || Date.parse(r.createdTime) <= createdTimeTo.getTime()),
    )
    .sort((a, b) => a.createdTime.localeCompare(b.createdTime) || a.instanceId.localeCompare(b.instanceId));
}

/** A running instance, with what an operator looks at: since when, the failure of a task it is retrying, the trace it runs in. */
export interface RunningInstance {
  instanceId: string;
  name: string;
  createdTime: Date;
  lastFailure?: { reason: string; at: string };
  traceParent?: string;
}

/** The running instances among `records`, oldest first; a task's failure no answer has followed is its last failure. */
export function runningOf(records: Iterable<InstanceRecord>): RunningInstance[] {
  return matchingInstances(records, { runtimeStatus: ["Running"] }).map((record) => ({
    instanceId: record.instanceId,
    name: record.name,
    createdTime: new Date(record.createdTime),
    lastFailure: lastFailure([...record.history, ...record.inbox]),
    traceParent: record.traceParent,
  }));
}

/** How many of `records` are in each runtime status. */
export function countsByStatus(records: Iterable<InstanceRecord>): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { runtimeStatus } of records) counts[runtimeStatus] = (counts[runtimeStatus] ?? 0) + 1;
  return counts;
}
