import { randomUUID } from "node:crypto";
import { rewoundHistory } from "./episodes";
import { entitiesNamed, entityStateOf, schedulerId, type EntityHost, type EntityListing, type EntityState } from "./entities";
import { TaskHub, type ClientMessage, type HubMessage, type TaskHubOptions } from "./hub";
import {
  countsByStatus,
  DurableRequestError,
  FINISHED,
  matchingInstances,
  runningOf,
  statusOf,
  type InstanceFilter,
  type InstanceStatus,
  type RunningInstance,
} from "./instances";
import * as requests from "./requests";
import { InstanceScheduler, type SchedulerOptions } from "./scheduler";
import { pendingInstance, type InstanceRecord } from "./store";

export { DurableRequestError, FINISHED, type InstanceFilter, type InstanceStatus } from "./instances";

export interface DurableHostOptions extends SchedulerOptions {
  /** One task hub shared with the app's other hosts, in their account (hub.ts); without it, this host runs every instance, in `store`. */
  hub?: TaskHubOptions;
}

/**
 * Durable Functions in this process: what the package's DurableClient (through the HTTP API,
 * http-api.ts) and the host ask of instances, over the scheduler that moves them on
 * (scheduler.ts: episodes, activities, timers, sub-orchestrations). With a task hub (hub.ts),
 * a request for an instance of a partition another host holds is sent there as a message, and
 * reads come from the hub's store, so every host answers the same.
 * One class for a reason: the DurableClient's one counterpart, a client operation per method.
 */
export class DurableHost {
  /** This process alone: one scheduler runs every instance. */
  private readonly scheduler?: InstanceScheduler;
  private readonly hub?: TaskHub;

  constructor(private readonly options: DurableHostOptions) {
    if (options.hub) this.hub = new TaskHub(options.hub, options, (scheduler, message, sentAt) => this.applyClient(scheduler, message, sentAt));
    else this.scheduler = new InstanceScheduler(options);
  }

  /** The durable entities of this process (without a task hub: with one, they live in its partitions). */
  get entities(): EntityHost {
    if (!this.scheduler) throw new Error("with a task hub, entities are reached through signalEntity and readEntityState");
    return this.scheduler.entities;
  }

  /** Continues every instance the store holds as running (or suspended); with a task hub, takes this host's share of its partitions. */
  async resume(): Promise<void> {
    if (this.hub) await this.hub.start();
    else this.scheduler!.resume();
  }

  /** The task hub partitions this host holds (none without a hub). */
  partitions(): string[] {
    return this.hub?.partitions() ?? [];
  }

  /** The scheduler running `id` here, if this host runs it (always, without a task hub). */
  private local(id: string): InstanceScheduler | undefined {
    return this.scheduler ?? this.hub!.schedulerOf(id);
  }

  /**
   * As `local`; where this host runs `id` but does not know it yet, after applying what other
   * hosts sent the partition (a start sent through another is then known; nothing else is ordered).
   */
  private async placed(id: string): Promise<requests.Placement | undefined> {
    if (this.scheduler) return { scheduler: this.scheduler, written: async () => true };
    const scheduler = this.hub!.schedulerOf(id);
    if (scheduler && !scheduler.records.has(id) && !scheduler.entities.record(id)) await this.hub!.caughtUp(id);
    return this.hub!.placement(id);
  }

  /**
   * Applies a client's request here, where its instance runs, and answers once it is written;
   * if the partition moved on before it was, the request goes to the partition's next holder.
   */
  private async onHolder(here: requests.Placement, message: HubMessage, apply: (scheduler: InstanceScheduler) => unknown): Promise<void> {
    await apply(here.scheduler);
    if (!(await here.written())) await this.hub!.send(message.op === "entity" ? message.entityId : message.instanceId, message);
  }

  /** The instance's record: this host's, where it runs it; the hub's stored one otherwise. */
  private async record(instanceId: string): Promise<InstanceRecord | undefined> {
    const scheduler = this.local(instanceId);
    return scheduler ? scheduler.records.get(instanceId) : this.hub!.readInstance(instanceId);
  }

  /**
   * The instance as a client sees it, the same through every host: where it runs here, after
   * what other hosts sent it and once what it did is written; elsewhere, as stored, and Pending
   * if its start has not been read yet (as on Azure).
   */
  private async recordOrPending(instanceId: string): Promise<InstanceRecord | undefined> {
    const here = await this.placed(instanceId);
    if (here) {
      await here.written();
      return here.scheduler.records.get(instanceId);
    }
    const record = await this.hub!.readInstance(instanceId);
    if (record) return record;
    const start = await this.hub!.pendingStart(instanceId);
    // Sent its start, not yet started by its holder: Pending, with what it was given.
    return start && pendingInstance(instanceId, start.name, start.input, start.sentAt);
  }

  /** Every instance: this host's own, or the hub's (this host's where it runs them). */
  private async records(): Promise<Iterable<InstanceRecord>> {
    return this.scheduler ? this.scheduler.records.values() : this.hub!.all("instance");
  }

  /** Sends a client's request for an instance this host does not run to the host that does. */
  private forward(message: ClientMessage): Promise<void> {
    return this.hub!.send(message.instanceId, message);
  }

  /** Starts `name` as `instanceId`; an instance that has finished is replaced, a running one is an error (as on Azure). */
  async startNew(name: string, options: { instanceId?: string; input?: unknown; traceParent?: string } = {}): Promise<string> {
    const instanceId = options.instanceId ?? randomUUID();
    // As the package's client sends it: JSON of the value, a string included ("42" stays a string).
    const input = JSON.stringify(options.input ?? null);
    const message = { op: "create" as const, name, instanceId, input, traceParent: options.traceParent };
    const here = await this.placed(instanceId);
    if (here) {
      await this.onHolder(here, message, (scheduler) => scheduler.create(name, instanceId, input, undefined, options.traceParent));
      return instanceId;
    }
    if (!this.options.functions.orchestrations.has(name)) throw new DurableRequestError(404, `No orchestration named '${name}' is registered.`);
    requests.refuseRunning(await this.recordOrPending(instanceId), instanceId);
    await this.forward(message);
    return instanceId;
  }

  /**
   * Raises an external event: it joins the instance's history and the orchestrator's
   * waitForExternalEvent(name) gets `data` (JSON), whether it waits already or asks later.
   */
  async raiseEvent(instanceId: string, name: string, data?: unknown): Promise<void> {
    const message = { op: "raiseEvent" as const, instanceId, name, data };
    const here = await this.placed(instanceId);
    if (here) return this.onHolder(here, message, (scheduler) => requests.raiseEvent(scheduler, instanceId, name, data));
    requests.eventTarget(await this.recordOrPending(instanceId), instanceId);
    await this.forward(message);
  }

  async getStatus(instanceId: string, options: { showHistory?: boolean } = {}): Promise<InstanceStatus | undefined> {
    const record = await this.recordOrPending(instanceId);
    return record ? statusOf(record, options.showHistory ?? false) : undefined;
  }

  /** The instances that match `filter`, oldest first (ties by id), as the API pages them. */
  async queryInstances(filter: InstanceFilter = {}): Promise<InstanceStatus[]> {
    return matchingInstances(await this.records(), filter).map((record) => statusOf(record, false));
  }

  /**
   * The running instances this host runs, oldest first, with what an operator looks at: since
   * when, the failure of a task it is retrying (a failed task no answer has followed), and the
   * trace it runs in.
   */
  runningInstances(): RunningInstance[] {
    return runningOf(this.ownRecords());
  }

  /** The instances this host runs, by runtime status (with a task hub, those of the partitions it holds). */
  instanceCounts(): Record<string, number> {
    return countsByStatus(this.ownRecords());
  }

  private ownRecords(): InstanceRecord[] {
    return this.schedulers().flatMap((scheduler) => [...scheduler.records.values()]);
  }

  /** Suspends a running instance: what it is sent waits in its inbox until it is resumed. */
  async suspend(instanceId: string): Promise<void> {
    const message = { op: "suspend" as const, instanceId };
    const here = await this.placed(instanceId);
    return here ? this.onHolder(here, message, (scheduler) => requests.suspend(scheduler, instanceId)) : this.forward(message);
  }

  /** Resumes a suspended instance: it goes on with what arrived meanwhile. */
  async resumeInstance(instanceId: string): Promise<void> {
    const message = { op: "resume" as const, instanceId };
    const here = await this.placed(instanceId);
    return here ? this.onHolder(here, message, (scheduler) => requests.resume(scheduler, instanceId)) : this.forward(message);
  }

  /** Stops an instance for good: nothing it waits for will be delivered. */
  async terminate(instanceId: string, reason: string): Promise<void> {
    const message = { op: "terminate" as const, instanceId, reason };
    const here = await this.placed(instanceId);
    return here ? this.onHolder(here, message, (scheduler) => requests.terminate(scheduler, instanceId, reason)) : this.forward(message);
  }

  /** Runs a finished instance again from its input, under the same id (the durable client's restart). */
  async restart(instanceId: string): Promise<string> {
    const record = await this.record(instanceId);
    if (!record) throw new DurableRequestError(404, `No instance with ID '${instanceId}' found.`);
    return this.startNew(record.name, { instanceId, input: JSON.parse(record.input) });
  }

  /**
   * Rewinds an instance that failed because a task failed: that failure is forgotten and the
   * task runs again (a failed sub-orchestration is rewound in turn, or started anew), as the
   * extension's rewind does. Anything else cannot be rewound (the API's 404 and 412).
   */
  async rewind(instanceId: string): Promise<void> {
    const message = { op: "rewind" as const, instanceId };
    const here = await this.placed(instanceId);
    if (here) return this.onHolder(here, message, (scheduler) => this.rewindHere(scheduler, instanceId));
    requests.rewindPoint(await this.record(instanceId), instanceId);
    await this.forward(message);
  }

  private async rewindHere(scheduler: InstanceScheduler, instanceId: string): Promise<void> {
    const record = scheduler.records.get(instanceId);
    const point = requests.rewindPoint(record, instanceId);
    Object.assign(record!, {
      runtimeStatus: "Running",
      failure: undefined,
      rewind: undefined,
      history: rewoundHistory(record!.history, point),
      activities: [point.task],
    });
    scheduler.save(record!);
    const childId = point.task.subOrchestration?.instanceId;
    const child = childId === undefined ? undefined : await this.record(childId);
    if (child?.runtimeStatus === "Failed" && child.rewind) {
      // Not through `rewind`: this may run as a message of the child's own partition is applied, which must not wait for itself.
      const childScheduler = this.local(child.instanceId);
      return childScheduler ? this.rewindHere(childScheduler, child.instanceId) : this.forward({ op: "rewind", instanceId: child.instanceId });
    }
    if (child) await this.forget(child.instanceId); // started anew under its id
    scheduler.dispatch(record!, point.task);
  }

  /** Lets go of an instance record that is about to be replaced (a rewound parent's failed child). */
  private async forget(instanceId: string): Promise<void> {
    const scheduler = this.local(instanceId);
    if (scheduler) scheduler.records.delete(instanceId);
    else await this.forward({ op: "purge", instanceId });
  }

  /** Deletes a finished instance's record and history. */
  async purgeInstanceHistory(instanceId: string): Promise<boolean> {
    const here = await this.placed(instanceId);
    if (here) {
      let purged = false;
      await this.onHolder(here, { op: "purge", instanceId }, (scheduler) => (purged = requests.purge(scheduler, instanceId)));
      return purged;
    }
    const record = await this.record(instanceId);
    if (!record || !FINISHED.includes(record.runtimeStatus)) return false;
    await this.forward({ op: "purge", instanceId });
    return true;
  }

  /** Purges every finished instance that matches `filter`; how many were purged. */
  async purgeInstances(filter: InstanceFilter): Promise<number> {
    let purged = 0;
    for (const record of matchingInstances(await this.records(), filter)) if (await this.purgeInstanceHistory(record.instanceId)) purged++;
    return purged;
  }

  /** Whether an entity function of this name is registered. */
  isEntityRegistered(name: string): boolean {
    return [...this.options.functions.entities.keys()].some((registered) => registered.toLowerCase() === name.toLowerCase());
  }

  /** Sends an operation to an entity, wherever it lives. */
  async signalEntity(name: string, key: string, operation: string, input?: unknown): Promise<void> {
    const entityId = schedulerId(name, key);
    const request = { id: randomUUID(), operation, input: input === undefined ? undefined : JSON.stringify(input) };
    const message = { op: "entity" as const, entityId, request };
    const here = await this.placed(entityId);
    if (here) await this.onHolder(here, message, (scheduler) => scheduler.entities.enqueue(entityId, request));
    else await this.hub!.send(entityId, message);
  }

  /** An entity's state, as `readEntityState` reports it. */
  async readEntityState(name: string, key: string): Promise<EntityState> {
    const entityId = schedulerId(name, key);
    const scheduler = this.local(entityId);
    return entityStateOf(scheduler ? scheduler.entities.record(entityId) : await this.hub!.readEntity(entityId));
  }

  /** The existing entities of the entity function `name`, by key, as the entity query lists them. */
  async listEntities(name: string): Promise<EntityListing[]> {
    return this.scheduler ? this.scheduler.entities.list(name) : entitiesNamed(await this.hub!.all("entity"), name);
  }

  /** Resolves once no instance this host runs is running (for shutdown and tests); throws after `timeoutMs`. */
  async waitForIdle(timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (const scheduler of this.schedulers()) await scheduler.entities.idle();
    while (this.schedulers().some((scheduler) => [...scheduler.records.values()].some((r) => !FINISHED.includes(r.runtimeStatus)))) {
      if (Date.now() > deadline) throw new Error(`orchestrations still running after ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /**
   * Resolves once nothing is under way here: no episode, activity or entity operation runs and
   * no inbox holds an event. What is left waits for time (durable timers) or for the outside
   * (external events), so a test can then move its clock or raise an event.
   */
  async settled(): Promise<void> {
    await Promise.all(this.schedulers().map((scheduler) => scheduler.settled()));
  }

  /** Stops delivering anything; every instance stays resumable from the store (a task hub's partitions are let go for others). */
  stop(): Promise<void> {
    return this.hub ? this.hub.stop() : this.scheduler!.stop();
  }

  private schedulers(): InstanceScheduler[] {
    return this.scheduler ? [this.scheduler] : this.hub!.schedulers();
  }

  /** A client's request sent by another host, applied here, where its instance runs. */
  private async applyClient(scheduler: InstanceScheduler, message: ClientMessage, sentAt: string): Promise<void> {
    const { instanceId } = message;
    switch (message.op) {
      case "create": {
        // A start sent again (a starter retrying) finds the instance it made: not started twice.
        const existing = scheduler.records.get(instanceId);
        if (existing && existing.createdTime >= sentAt) return;
        scheduler.create(message.name, instanceId, message.input, undefined, message.traceParent);
        return;
      }
      case "raiseEvent":
        return requests.raiseEvent(scheduler, instanceId, message.name, message.data);
      case "suspend":
        return requests.suspend(scheduler, instanceId);
      case "resume":
        return requests.resume(scheduler, instanceId);
      case "terminate":
        return requests.terminate(scheduler, instanceId, message.reason);
      case "rewind":
        return this.rewindHere(scheduler, instanceId);
      case "purge":
        return void requests.purge(scheduler, instanceId);
    }
  }
}
