import { historyEvents } from "./episodes";
import { DurableRequestError, FINISHED } from "./instances";
import type { InstanceScheduler } from "./scheduler";
import type { InstanceRecord, RewindPoint } from "./store";

// A client's requests as the host running the instance applies them (host.ts decides where
// that is), and what an instance's state refuses.

/** Where a request for an instance is applied on this host: the scheduler running it, and whether what it did got written. */
export interface Placement {
  scheduler: InstanceScheduler;
  written(): Promise<boolean>;
}

/** Raises an event: it joins the instance's inbox, for the orchestrator's waitForExternalEvent. */
export async function raiseEvent(scheduler: InstanceScheduler, instanceId: string, name: string, data: unknown): Promise<void> {
  const record = eventTarget(scheduler.records.get(instanceId), instanceId);
  record.inbox.push(historyEvents.eventRaised(scheduler.clock.now(), name, JSON.stringify(data ?? null)));
  scheduler.save(record);
  scheduler.kick(record);
}

/** Suspends a running instance: what it is sent waits in its inbox until it is resumed. */
export async function suspend(scheduler: InstanceScheduler, instanceId: string): Promise<void> {
  const record = scheduler.records.get(instanceId);
  if (!record || record.runtimeStatus !== "Running") return;
  await scheduler.running.get(instanceId);
  record.runtimeStatus = "Suspended";
  scheduler.save(record);
}

/** Resumes a suspended instance: it goes on with what arrived meanwhile. */
export async function resume(scheduler: InstanceScheduler, instanceId: string): Promise<void> {
  const record = scheduler.records.get(instanceId);
  if (!record || record.runtimeStatus !== "Suspended") return;
  record.runtimeStatus = "Running";
  scheduler.save(record);
  scheduler.kick(record);
}

/** Stops an instance for good: nothing it waits for will be delivered. */
export async function terminate(scheduler: InstanceScheduler, instanceId: string, reason: string): Promise<void> {
  const record = scheduler.records.get(instanceId);
  if (!record || FINISHED.includes(record.runtimeStatus)) return;
  await scheduler.running.get(instanceId);
  scheduler.finish(record, "Terminated", { failure: reason });
  scheduler.save(record);
}

/** Deletes a finished instance's record and history; false if it is not finished (or unknown). */
export function purge(scheduler: InstanceScheduler, instanceId: string): boolean {
  const record = scheduler.records.get(instanceId);
  if (!record || !FINISHED.includes(record.runtimeStatus)) return false;
  scheduler.records.delete(instanceId);
  scheduler.store.remove(instanceId);
  return true;
}

/** A start of an instance that runs is refused (409), as on Azure. */
export function refuseRunning(record: InstanceRecord | undefined, instanceId: string): void {
  if (record && !FINISHED.includes(record.runtimeStatus))
    throw new DurableRequestError(409, `An instance with ID '${instanceId}' already exists and is ${record.runtimeStatus}.`);
}

/** The instance an event is for, if it takes events: not unknown, not finished. */
export function eventTarget(record: InstanceRecord | undefined, instanceId: string): InstanceRecord {
  if (!record) throw new Error(`No instance with ID '${instanceId}'.`);
  if (FINISHED.includes(record.runtimeStatus)) throw new Error(`The instance '${instanceId}' is ${record.runtimeStatus}: it takes no events.`);
  return record;
}

/** Where a failed instance is rewound from: the task whose failure failed it; anything else is refused (404, 412). */
export function rewindPoint(record: InstanceRecord | undefined, instanceId: string): RewindPoint {
  if (!record) throw new DurableRequestError(404, `No instance with ID '${instanceId}' found.`);
  if (record.runtimeStatus !== "Failed")
    throw new DurableRequestError(412, `Only a failed instance can be rewound; '${instanceId}' is ${record.runtimeStatus}.`);
  if (!record.rewind) throw new DurableRequestError(412, `'${instanceId}' failed in its orchestrator, not in a task: there is no task to run again.`);
  return record.rewind;
}
