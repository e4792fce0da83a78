import { randomUUID } from "node:crypto";
import { context as otelContext } from "@opentelemetry/api";
import { ActionType, HistoryEventType } from "./durable-functions-internals";
import { systemClock, type Clock } from "../clock";
import { builtInHttp, DURABLE_HTTP_ACTIVITY } from "./durable-http";
import { EntityHost, type EntityRequest } from "./entities";
import type { DurableFunctions, TriggeredFunction } from "../worker/function-app";
import { atomicActions, describeAction, historyEvents, inputJson, rewindPointOf, scheduleAction, settleDelivered, type EpisodeWork } from "./episodes";
import { DurableRequestError, FINISHED } from "./instances";
import { replayEpisode } from "./replay";
import { InstanceSpans, type InstanceSpanNaming } from "./tracing";
import {
  memoryInstanceStore,
  pendingInstance,
  type InstanceRecord,
  type InstanceStore,
  type PendingActivity,
  type PendingTimer,
  type RuntimeStatus,
} from "./store";

export interface SchedulerOptions {
  /** The app's orchestrations, activities and entities, as it registered them (df.app.*). */
  functions: DurableFunctions;
  store?: InstanceStore;
  log?: (line: string) => void;
  /** What time it is, and when durable timers fire (the system clock unless a test brings its own). */
  clock?: Clock;
  /** How each instance's span is labelled (DEFAULT_SPAN_NAMING unless the app gives its own). */
  spanNaming?: InstanceSpanNaming;
}

/** An answer to a task of an orchestration: a history event that joins its inbox. */
export type TaskAnswer = ReturnType<typeof historyEvents.taskCompleted>;

/**
 * Where what one instance sends another goes: to this scheduler when it runs them all (one
 * process), or to the partition of the task hub that holds the other (several instances, hub.ts).
 */
export interface InstanceRouter {
  /** Starts a sub-orchestration for the parent's task (or answers at once if it ran already). */
  createChild(name: string, instanceId: string, input: string, parent: NonNullable<InstanceRecord["parent"]>, traceParent?: string): void;
  /** An answer for `executionId` of the instance: dropped if that execution has ended. */
  deliver(instanceId: string, executionId: string, event: TaskAnswer): void;
  /** An operation for the entity `@name@key`. */
  enqueueEntity(entityId: string, request: EntityRequest): void;
}

/**
 * What moves instances on, as the Functions extension does: every episode replays the
 * orchestrator through the durable-functions package's own replay engine, from the history kept
 * here (inputs, results and custom status as JSON; timers as history events), then schedules the
 * actions it returned. Every transition (start, delivery, episode, finish, a parent told) changes
 * and saves the record, saved before work starts: a host restarted on the same store resumes
 * where it stopped (answered tasks are not run again, unanswered activities are, at least once
 * as on Azure; timers fire late). What a client asks of instances is host.ts and requests.ts.
 * One class for a reason: every transition changes the same record and the same sets of armed
 * timers and work in flight, which stop() and resume() must see whole.
 */
export class InstanceScheduler {
  readonly store: InstanceStore;
  /** Every instance this host knows, by id. */
  readonly records = new Map<string, InstanceRecord>();
  /** The episodes under way, by instance id: never two of one instance at once. */
  readonly running = new Map<string, Promise<void>>();
  /** Each instance's span (distributed tracing). */
  private readonly spans: InstanceSpans;
  /** Cancels the armed durable timers (on stop). */
  private readonly timers = new Set<() => void>();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly log: (line: string) => void;
  readonly clock: Clock;
  private stopped = false;
  /** The durable entities: their state, queues and turns. */
  readonly entities: EntityHost;
  /** The registered functions by name: Maps, so a name from a request never finds Object's members (`constructor`, `toString`). */
  private readonly orchestrations: Map<string, TriggeredFunction>;
  private readonly activities: Map<string, TriggeredFunction>;
  private readonly route: InstanceRouter;

  constructor(options: SchedulerOptions, route?: InstanceRouter) {
    this.store = options.store ?? memoryInstanceStore();
    this.orchestrations = options.functions.orchestrations;
    this.activities = new Map([...options.functions.activities, [DURABLE_HTTP_ACTIVITY, builtInHttp]]);
    this.log = options.log ?? (() => {});
    this.clock = options.clock ?? systemClock;
    this.spans = new InstanceSpans(options.spanNaming);
    for (const record of this.store.loadAll()) this.records.set(record.instanceId, record);
    this.route = route ?? {
      createChild: (...args) => this.createChild(...args),
      deliver: (...args) => this.deliverTo(...args),
      enqueueEntity: (entityId, request) => this.entities.enqueue(entityId, request),
    };
    // An entity's answer to an orchestration that called it: an event named by the request id.
    this.entities = new EntityHost(
      options.functions.entities,
      this.store.entities,
      ({ caller, requestId, message }) =>
        this.route.deliver(caller.instanceId, caller.executionId, historyEvents.eventRaised(this.clock.now(), requestId, message)),
      this.log,
      () => this.clock.now(),
      (entityId, request) => this.route.enqueueEntity(entityId, request),
    );
  }

  /** Continues every instance the store holds as running (or suspended): timers re-armed, unanswered activities run again. */
  resume(): void {
    this.entities.resume();
    for (const record of this.records.values()) {
      if (record.runtimeStatus !== "Running" && record.runtimeStatus !== "Suspended") continue;
      record.timers.forEach((timer) => this.arm(record, timer));
      record.activities.forEach((activity) => this.dispatch(record, activity));
      this.kick(record);
    }
  }

  /** A new instance of `name`, running; `parent` when it is a sub-orchestration. */
  create(name: string, instanceId: string, input: string, parent?: InstanceRecord["parent"], traceParent?: string): string {
    if (!this.orchestrations.has(name)) throw new DurableRequestError(404, `No orchestration named '${name}' is registered.`);
    const existing = this.records.get(instanceId);
    if (existing && !FINISHED.includes(existing.runtimeStatus))
      throw new DurableRequestError(409, `An instance with ID '${instanceId}' already exists and is ${existing.runtimeStatus}.`);
    const now = this.clock.now().toISOString();
    const record = pendingInstance(instanceId, name, input, now, { parent, traceParent });
    this.newExecution(record, record.input);
    // Saved before it is known: an instance that cannot be stored leaves nothing behind, so its starter sees the failure and tries again.
    this.save(record);
    this.records.set(instanceId, record);
    this.kick(record);
    return instanceId;
  }

  /**
   * Resolves once nothing is under way: no episode, activity or entity operation runs and no
   * inbox holds an event. What is left waits for time (durable timers) or for the outside
   * (external events), so a test can then move its clock or raise an event.
   */
  async settled(): Promise<void> {
    for (;;) {
      await this.entities.idle();
      const busy = [...this.running.values(), ...this.inFlight];
      if (busy.length === 0) break;
      await Promise.allSettled(busy);
    }
  }

  /** Stops delivering anything; every instance stays resumable from the store. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.entities.stop();
    for (const cancel of this.timers) cancel();
    this.timers.clear();
    await Promise.all([...this.running.values()]);
    await Promise.allSettled([...this.inFlight]);
    this.spans.endAll();
  }

  /** A fresh execution of the instance (start, restart, continue-as-new): empty history, new input. */
  private newExecution(record: InstanceRecord, input: string): void {
    Object.assign(record, {
      input,
      executionId: randomUUID(),
      history: [],
      nextEventId: 0,
      actions: [],
      activities: [],
      timers: [],
      runtimeStatus: "Running",
      rewind: undefined,
    });
    record.inbox = [historyEvents.executionStarted(this.clock.now(), record.name, input)];
  }

  /** Saves the record. Also while stopping: an episode that was running finishes and keeps what it took from the inbox. */
  save(record: InstanceRecord): void {
    record.lastUpdatedTime = this.clock.now().toISOString();
    this.store.save(record);
  }

  finish(record: InstanceRecord, status: RuntimeStatus, fields: Partial<InstanceRecord>): void {
    Object.assign(record, fields, { runtimeStatus: status, activities: [], timers: [], inbox: [] });
    this.spans.end(record);
    if (record.parent) this.notifyParent(record);
  }

  /** A finished sub-orchestration answers the parent's task: its output, or its failure (as the package documents). */
  private notifyParent(child: InstanceRecord): void {
    const link = child.parent!;
    const at = this.clock.now();
    const answer =
      child.runtimeStatus === "Completed"
        ? historyEvents.subOrchestrationCompleted(at, link.taskId, JSON.stringify(child.output ?? null))
        : historyEvents.subOrchestrationFailed(
            at,
            link.taskId,
            `Sub-orchestration '${child.name}' (${child.instanceId}) ${child.runtimeStatus.toLowerCase()}: ${child.failure ?? ""}`,
            child.failure ?? "",
          );
    this.route.deliver(link.instanceId, link.executionId, answer);
  }

  /** Starts the sub-orchestration a task asks for, wherever the child runs. */
  private startChild(parent: InstanceRecord, task: PendingActivity): void {
    const link = { instanceId: parent.instanceId, taskId: task.id, executionId: parent.executionId };
    this.route.createChild(task.name, task.subOrchestration!.instanceId, task.input, link, this.spans.traceParentOf(parent));
  }

  /** A sub-orchestration of this scheduler's; after a restart, one that exists already is left to run, or answers if done. */
  createChild(name: string, instanceId: string, input: string, link: NonNullable<InstanceRecord["parent"]>, traceParent?: string): void {
    const existing = this.records.get(instanceId);
    if (existing?.parent?.instanceId === link.instanceId && existing.parent.taskId === link.taskId) {
      if (FINISHED.includes(existing.runtimeStatus)) this.notifyParent(existing);
      return;
    }
    try {
      this.create(name, instanceId, input, link, traceParent);
    } catch (error) {
      const message = (error as Error).message;
      this.route.deliver(link.instanceId, link.executionId, historyEvents.subOrchestrationFailed(this.clock.now(), link.taskId, message, message));
    }
  }

  /** An answer for one of this scheduler's instances (from an entity, a child, another partition). */
  deliverTo(instanceId: string, execution: string, event: TaskAnswer): void {
    const record = this.records.get(instanceId);
    if (record) this.deliver(record, execution, event);
  }

  /** Delivers the instance's inbox, one event per episode, never two episodes of one instance at once. */
  kick(record: InstanceRecord): void {
    if (this.running.has(record.instanceId) || this.stopped) return;
    const run = (async () => {
      while (!this.stopped && record.runtimeStatus === "Running" && record.inbox.length > 0) await this.spans.episode(record, () => this.episode(record));
    })()
      .catch((error: unknown) => this.log(`orchestration ${record.instanceId}: host error ${(error as Error).stack}`))
      .finally(() => {
        this.running.delete(record.instanceId);
        // The record under this id now: a finished instance started again while this run wound down is a new one.
        const current = this.records.get(record.instanceId);
        if (current && !this.stopped && current.runtimeStatus === "Running" && current.inbox.length > 0) this.kick(current);
      });
    this.running.set(record.instanceId, run);
  }

  /** Ends the instance as Failed with `message`, logged once; `rewind` when a failed task caused it. */
  private fail(record: InstanceRecord, message: string, rewind?: InstanceRecord["rewind"]): void {
    this.log(`orchestration ${record.instanceId} failed: ${message}`);
    this.finish(record, "Failed", { failure: message, ...(rewind ? { rewind } : {}) });
    this.save(record);
  }

  private async episode(record: InstanceRecord): Promise<void> {
    const at = this.clock.now();
    const delivered = record.inbox.shift()!;
    const episode = [historyEvents.orchestratorStarted(at), delivered];
    const work: EpisodeWork = { activities: [], timers: [], entityRequests: [] };
    const rewindPoint = rewindPointOf(record, delivered);
    settleDelivered(record, delivered, at, episode, work);

    const replayed = await replayEpisode(this.orchestrations.get(record.name)!, record, [...record.history, ...episode]);
    if ("failure" in replayed) return this.fail(record, replayed.failure, replayed.orchestratorThrew ? rewindPoint : undefined);
    const { state } = replayed;

    const actions = atomicActions(state.actions.flat());
    const redone = actions.slice(0, record.actions.length).map(describeAction);
    const diverged = redone.findIndex((action, i) => action !== record.actions[i]);
    if (diverged >= 0)
      return this.fail(record, `Non-deterministic workflow detected: action ${diverged} was '${record.actions[diverged]}' and is now '${redone[diverged]}'.`);
    const continueAs = actions.find((action) => action.actionType === ActionType.ContinueAsNew);
    try {
      for (const action of actions.slice(record.actions.length)) {
        if (action === continueAs) break;
        scheduleAction(record, action, at, episode, work);
        record.actions.push(describeAction(action));
      }
    } catch (error) {
      // An action this host cannot carry out: the instance fails, saying which, instead of waiting for good.
      return this.fail(record, (error as Error).message);
    }
    record.customStatus = state.customStatus;
    episode.push(historyEvents.orchestratorCompleted(at));
    record.history.push(...episode);

    if (continueAs) this.newExecution(record, inputJson(continueAs.input));
    else if (state.isDone) {
      record.history.push(historyEvents.executionCompleted(at, JSON.stringify(state.output ?? null)));
      this.finish(record, "Completed", { output: state.output });
    }
    // Before the record is saved: a crash in between sends an operation twice (at least once), never not at all.
    work.entityRequests.forEach(({ entity, request }) => this.route.enqueueEntity(entity, request));
    this.save(record);
    if (record.runtimeStatus !== "Running" || continueAs) return;
    work.activities.forEach((activity) => this.dispatch(record, activity));
    work.timers.forEach((timer) => this.arm(record, timer));
  }

  /** Runs an activity; its answer (JSON, like everything that crosses the wire) joins the inbox. */
  dispatch(record: InstanceRecord, activity: PendingActivity): void {
    if (activity.subOrchestration) return this.startChild(record, activity);
    const execution = record.executionId;
    const handler = this.activities.get(activity.name);
    const run = (async () => {
      if (!handler) throw new Error(`No activity named '${activity.name}' is registered.`);
      // Inside the instance's span: the activity's own span is its child.
      return otelContext.with(this.spans.contextOf(record), () => handler(JSON.parse(activity.input)));
    })().then(
      (result) => this.deliver(record, execution, historyEvents.taskCompleted(this.clock.now(), activity.id, result)),
      (error: unknown) => {
        const message = error instanceof Error ? error.message : String(error);
        this.log(`activity ${activity.name} of ${record.instanceId} failed (attempt ${activity.attempt}): ${message}`);
        this.deliver(
          record,
          execution,
          historyEvents.taskFailed(
            this.clock.now(),
            activity.id,
            `Activity function '${activity.name}' failed: ${message}`,
            (error as Error)?.stack ?? message,
          ),
        );
      },
    );
    this.inFlight.add(run);
    void run.finally(() => this.inFlight.delete(run));
  }

  private arm(record: InstanceRecord, timer: PendingTimer): void {
    const execution = record.executionId;
    const cancel = this.clock.at(new Date(timer.fireAt), () => {
      this.timers.delete(cancel);
      this.deliver(record, execution, historyEvents.timerFired(this.clock.now(), timer.id, timer.fireAt));
    });
    this.timers.add(cancel);
  }

  private deliver(record: InstanceRecord, execution: string, event: TaskAnswer): void {
    // An answer for an execution that has since continued as new, finished or been terminated goes nowhere.
    // A suspended instance keeps what arrives, for when it is resumed.
    if (this.stopped || record.executionId !== execution || (record.runtimeStatus !== "Running" && record.runtimeStatus !== "Suspended")) return;
    if (event.EventType === HistoryEventType.TimerFired && !record.timers.some((t) => t.id === event.TimerId)) return;
    record.inbox.push(event);
    this.save(record);
    this.kick(record);
  }
}
