import { randomUUID } from "node:crypto";
import { lastFailure, rewoundHistory, historyEvents } from "./episodes";
import { DurableRequestError, FINISHED, matchingInstances, statusOf, type InstanceFilter, type InstanceStatus } from "./instances";
import { InstanceScheduler, type DurableHostOptions } from "./scheduler";
import type { EntityHost } from "./entities";

export { DurableRequestError, FINISHED, type InstanceFilter, type InstanceStatus } from "./instances";
export type { DurableHostOptions } from "./scheduler";

/**
 * Durable Functions in this process: what the package's DurableClient (through the HTTP API,
 * http-api.ts) and the host ask of instances, over the scheduler that moves them on
 * (scheduler.ts: episodes, activities, timers, sub-orchestrations).
 */
export class DurableHost {
  private readonly scheduler: InstanceScheduler;

  constructor(options: DurableHostOptions) {
    this.scheduler = new InstanceScheduler(options);
  }

  /** The durable entities: their state, queues and turns. */
  get entities(): EntityHost {
    return this.scheduler.entities;
  }

  /** Continues every instance the store holds as running (or suspended): timers re-armed, unanswered activities run again. */
  resume(): void {
    this.scheduler.resume();
  }

  /** Starts `name` as `instanceId`; an instance that has finished is replaced, a running one is an error (as on Azure). */
  async startNew(name: string, options: { instanceId?: string; input?: unknown; traceParent?: string } = {}): Promise<string> {
    // As the package's client sends it: JSON of the value, a string included ("42" stays a string).
    return this.scheduler.create(name, options.instanceId ?? randomUUID(), JSON.stringify(options.input ?? null), undefined, options.traceParent);
  }

  /**
   * Raises an external event: it joins the instance's history and the orchestrator's
   * waitForExternalEvent(name) gets `data` (JSON), whether it waits already or asks later.
   */
  async raiseEvent(instanceId: string, name: string, data?: unknown): Promise<void> {
    const record = this.scheduler.records.get(instanceId);
    if (!record) throw new Error(`No instance with ID '${instanceId}'.`);
    if (FINISHED.includes(record.runtimeStatus)) throw new Error(`The instance '${instanceId}' is ${record.runtimeStatus}: it takes no events.`);
    record.inbox.push(historyEvents.eventRaised(this.scheduler.clock.now(), name, JSON.stringify(data ?? null)));
    this.scheduler.save(record);
    this.scheduler.kick(record);
  }

  async getStatus(instanceId: string, options: { showHistory?: boolean } = {}): Promise<InstanceStatus | undefined> {
    const record = this.scheduler.records.get(instanceId);
    return record ? statusOf(record, options.showHistory ?? false) : undefined;
  }

  /** The instances that match `filter`, oldest first (ties by id), as the API pages them. */
  async queryInstances(filter: InstanceFilter = {}): Promise<InstanceStatus[]> {
    return matchingInstances(this.scheduler.records.values(), filter).map((record) => statusOf(record, false));
  }

  /**
   * The running instances, oldest first, with what an operator looks at: since when, the failure
   * of a task it is retrying (a failed task no answer has followed), and the trace it runs in.
   */
  runningInstances(): { instanceId: string; name: string; createdTime: Date; lastFailure?: { reason: string; at: string }; traceParent?: string }[] {
    return matchingInstances(this.scheduler.records.values(), { runtimeStatus: ["Running"] }).map((record) => ({
      instanceId: record.instanceId,
      name: record.name,
      createdTime: new Date(record.createdTime),
      lastFailure: lastFailure([...record.history, ...record.inbox]),
      traceParent: record.traceParent,
    }));
  }

  /** Suspends a running instance: what it is sent waits in its inbox until it is resumed. */
  async suspend(instanceId: string): Promise<void> {
    const record = this.scheduler.records.get(instanceId);
    if (!record || record.runtimeStatus !== "Running") return;
    await this.scheduler.running.get(instanceId);
    record.runtimeStatus = "Suspended";
    this.scheduler.save(record);
  }

  /** Resumes a suspended instance: it goes on with what arrived meanwhile. */
  async resumeInstance(instanceId: string): Promise<void> {
    const record = this.scheduler.records.get(instanceId);
    if (!record || record.runtimeStatus !== "Suspended") return;
    record.runtimeStatus = "Running";
    this.scheduler.save(record);
    this.scheduler.kick(record);
  }

  /** Stops an instance for good: nothing it waits for will be delivered. */
  async terminate(instanceId: string, reason: string): Promise<void> {
    const record = this.scheduler.records.get(instanceId);
    if (!record || FINISHED.includes(record.runtimeStatus)) return;
    await this.scheduler.running.get(instanceId);
    this.scheduler.finish(record, "Terminated", { failure: reason });
    this.scheduler.save(record);
  }

  /** Runs a finished instance again from its input, under the same id (the durable client's restart). */
  async restart(instanceId: string): Promise<string> {
    const record = this.scheduler.records.get(instanceId);
    if (!record) throw new DurableRequestError(404, `No instance with ID '${instanceId}' found.`);
    return this.startNew(record.name, { instanceId, input: JSON.parse(record.input) });
  }

  /**
   * Rewinds an instance that failed because a task failed: that failure is forgotten and the
   * task runs again (a failed sub-orchestration is rewound in turn, or started anew), as the
   * extension's rewind does. Anything else cannot be rewound (the API's 404 and 412).
   */
  async rewind(instanceId: string): Promise<void> {
    const record = this.scheduler.records.get(instanceId);
    if (!record) throw new DurableRequestError(404, `No instance with ID '${instanceId}' found.`);
    if (record.runtimeStatus !== "Failed")
      throw new DurableRequestError(412, `Only a failed instance can be rewound; '${instanceId}' is ${record.runtimeStatus}.`);
    const point = record.rewind;
    if (!point) throw new DurableRequestError(412, `'${instanceId}' failed in its orchestrator, not in a task: there is no task to run again.`);
    Object.assign(record, {
      runtimeStatus: "Running",
      failure: undefined,
      rewind: undefined,
      history: rewoundHistory(record.history, point),
      activities: [point.task],
    });
    this.scheduler.save(record);
    const child = point.task.subOrchestration && this.scheduler.records.get(point.task.subOrchestration.instanceId);
    if (child?.runtimeStatus === "Failed" && child.rewind) return this.rewind(child.instanceId);
    if (child) this.scheduler.records.delete(child.instanceId); // started anew under its id
    this.scheduler.dispatch(record, point.task);
  }

  /** Deletes a finished instance's record and history. */
  async purgeInstanceHistory(instanceId: string): Promise<boolean> {
    const record = this.scheduler.records.get(instanceId);
    if (!record || !FINISHED.includes(record.runtimeStatus)) return false;
    this.scheduler.records.delete(instanceId);
    this.scheduler.store.remove(instanceId);
    return true;
  }

  /** Purges every finished instance that matches `filter`; how many were purged. */
  async purgeInstances(filter: InstanceFilter): Promise<number> {
    let purged = 0;
    for (const record of matchingInstances(this.scheduler.records.values(), filter)) if (await this.purgeInstanceHistory(record.instanceId)) purged++;
    return purged;
  }

  /** Resolves once no instance is running (for shutdown and tests); throws after `timeoutMs`. */
  async waitForIdle(timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    await this.scheduler.entities.idle();
    while ([...this.scheduler.records.values()].some((r) => !FINISHED.includes(r.runtimeStatus))) {
      if (Date.now() > deadline) throw new Error(`orchestrations still running after ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /**
   * Resolves once nothing is under way: no episode, activity or entity operation runs and no
   * inbox holds an event. What is left waits for time (durable timers) or for the outside
   * (external events), so a test can then move its clock or raise an event.
   */
  settled(): Promise<void> {
    return this.scheduler.settled();
  }

  /** Stops delivering anything; every instance stays resumable from the store. */
  stop(): Promise<void> {
    return this.scheduler.stop();
  }
}
