import { ActionType, HistoryEventType, type PackageAction } from "./durable-functions-internals";
import { DURABLE_HTTP_ACTIVITY, nextPoll } from "./durable-http";
import type { EntityRequest } from "./entities";
import type { HistoryEvent, InstanceRecord, PendingActivity, PendingTimer, RetryPolicy, RewindPoint } from "./store";

/**
 * History events and actions in the extension's wire shapes, and the bookkeeping of one
 * episode: which ids new tasks get, and how retries of failed activities are scheduled.
 * Ids are handed out in exactly the order the package's replay engine numbers its tasks,
 * so a completion always reaches the task that is waiting for it.
 */

const event = (type: HistoryEventType, at: Date, fields: Record<string, unknown> = {}, eventId = -1): HistoryEvent => ({
  EventType: type,
  EventId: eventId,
  IsPlayed: false,
  Timestamp: at.toISOString(),
  ...fields,
});

export const historyEvents = {
  orchestratorStarted: (at: Date) => event(HistoryEventType.OrchestratorStarted, at),
  orchestratorCompleted: (at: Date) => event(HistoryEventType.OrchestratorCompleted, at),
  executionStarted: (at: Date, name: string, input: string) => event(HistoryEventType.ExecutionStarted, at, { Name: name, Input: input }),
  executionCompleted: (at: Date, result: string) => event(HistoryEventType.ExecutionCompleted, at, { Result: result }),
  taskScheduled: (at: Date, id: number, name: string, input: string) => event(HistoryEventType.TaskScheduled, at, { Name: name, Input: input }, id),
  taskCompleted: (at: Date, id: number, result: string) => event(HistoryEventType.TaskCompleted, at, { TaskScheduledId: id, Result: result }),
  taskFailed: (at: Date, id: number, reason: string, details: string) =>
    event(HistoryEventType.TaskFailed, at, { TaskScheduledId: id, Reason: reason, Details: details }),
  timerCreated: (at: Date, id: number, fireAt: string) => event(HistoryEventType.TimerCreated, at, { FireAt: fireAt }, id),
  timerFired: (at: Date, id: number, fireAt: string) => event(HistoryEventType.TimerFired, at, { TimerId: id, FireAt: fireAt }),
  eventRaised: (at: Date, name: string, input: string) => event(HistoryEventType.EventRaised, at, { Name: name, Input: input }),
  eventSent: (at: Date, id: number, name: string, instanceId: string, input: string) =>
    event(HistoryEventType.EventSent, at, { Name: name, InstanceId: instanceId, Input: input }, id),
  subOrchestrationCreated: (at: Date, id: number, name: string, instanceId: string, input: string) =>
    event(HistoryEventType.SubOrchestrationInstanceCreated, at, { Name: name, InstanceId: instanceId, Input: input }, id),
  subOrchestrationCompleted: (at: Date, id: number, result: string) =>
    event(HistoryEventType.SubOrchestrationInstanceCompleted, at, { TaskScheduledId: id, Result: result }),
  subOrchestrationFailed: (at: Date, id: number, reason: string, details: string) =>
    event(HistoryEventType.SubOrchestrationInstanceFailed, at, { TaskScheduledId: id, Reason: reason, Details: details }),
};

/** The history event that schedules `task`: an activity's TaskScheduled, or a sub-orchestration's creation. */
const scheduled = (at: Date, task: PendingActivity) =>
  task.subOrchestration
    ? historyEvents.subOrchestrationCreated(at, task.id, task.name, task.subOrchestration.instanceId, task.input)
    : historyEvents.taskScheduled(at, task.id, task.name, task.input);

/** A sub-orchestration's instance id: the one the orchestrator gave, else one derived from its parent and task. */
const childId = (record: InstanceRecord, given: string | undefined, taskId: number) => given ?? `${record.instanceId}:${taskId}`;

const ANSWERS = [
  HistoryEventType.TaskCompleted,
  HistoryEventType.TaskFailed,
  HistoryEventType.SubOrchestrationInstanceCompleted,
  HistoryEventType.SubOrchestrationInstanceFailed,
];
const FAILURES = [HistoryEventType.TaskFailed, HistoryEventType.SubOrchestrationInstanceFailed];

/** Inputs travel as JSON: the package pre-encodes strings, everything else the extension serializes. */
/** The last failed task of a history that no answer followed since: the instance is retrying it (or handling the failure). */
export function lastFailure(history: readonly HistoryEvent[]): { reason: string; at: string } | undefined {
  let failure: { reason: string; at: string } | undefined;
  for (const event of history) {
    if (FAILURES.includes(event.EventType)) failure = { reason: String(event.Reason ?? ""), at: String(event.Timestamp) };
    else if (ANSWERS.includes(event.EventType)) failure = undefined;
  }
  return failure;
}

export const inputJson = (input: unknown) => (typeof input === "string" ? input : JSON.stringify(input ?? null));

/** The atomic actions in the order the package numbered their tasks (compound actions flattened). */
export function atomicActions(actions: PackageAction[]): PackageAction[] {
  return actions.flatMap((action) => (action.compoundActions ? atomicActions(action.compoundActions) : [action]));
}

/** What a replay must reproduce of an action: its kind and the function it calls. */
export const describeAction = (action: PackageAction) =>
  `${ActionType[action.actionType] ?? action.actionType}${action.functionName ? ` ${action.functionName}` : ""}`;

/** Wait before the next attempt: the first interval, multiplied per attempt, capped. */
function retryDelay(retry: RetryPolicy, failedAttempt: number): number {
  const delay = retry.firstRetryIntervalInMilliseconds * Math.pow(retry.backoffCoefficient || 1, failedAttempt - 1);
  return retry.maxRetryIntervalInMilliseconds ? Math.min(delay, retry.maxRetryIntervalInMilliseconds) : delay;
}

/** What an episode decided besides its history: work to start once the record is saved. */
export interface EpisodeWork {
  activities: PendingActivity[];
  timers: PendingTimer[];
  /** Operations for durable entities (`@name@key`), sent once the episode is decided. */
  entityRequests: { entity: string; request: EntityRequest }[];
}

/**
 * The task `delivered` reports as finally failed, if it does: a failed task without retries,
 * or the retry timer of a task whose attempts are spent. Read before the episode settles it:
 * should the orchestrator fail on it, a rewind runs this task again.
 */
export function rewindPointOf(record: InstanceRecord, delivered: HistoryEvent): RewindPoint | undefined {
  if (FAILURES.includes(delivered.EventType)) {
    const task = record.activities.find((a) => a.id === delivered.TaskScheduledId);
    return task && !task.retry ? { task } : undefined;
  }
  if (delivered.EventType === HistoryEventType.TimerFired) {
    const timer = record.timers.find((t) => t.id === delivered.TimerId);
    const task = timer?.retry;
    return task?.retry && task.attempt >= task.retry.maxNumberOfAttempts ? { task, retryTimerId: delivered.TimerId as number } : undefined;
  }
  return undefined;
}

/** The history without what a rewind forgets: the task's failure, and the retry timer that followed it. */
export function rewoundHistory(history: HistoryEvent[], point: RewindPoint): HistoryEvent[] {
  return history.filter(
    (e) =>
      !(FAILURES.includes(e.EventType) && e.TaskScheduledId === point.task.id) &&
      !(e.EventType === HistoryEventType.TimerCreated && e.EventId === point.retryTimerId),
  );
}

/**
 * Before the orchestrator sees `delivered`: settle the task it answers. A failed retryable
 * activity gets a retry timer (always, also after the last attempt: the package waits for it
 * before failing the task); a fired retry timer gets the next attempt scheduled, if any is left.
 */
export function settleDelivered(record: InstanceRecord, delivered: HistoryEvent, at: Date, episode: HistoryEvent[], work: EpisodeWork): void {
  if (ANSWERS.includes(delivered.EventType)) {
    const activity = record.activities.find((a) => a.id === delivered.TaskScheduledId);
    record.activities = record.activities.filter((a) => a !== activity);
    if (activity?.name === DURABLE_HTTP_ACTIVITY && delivered.EventType === HistoryEventType.TaskCompleted)
      pollLater(record, activity, delivered, at, episode, work);
    if (activity?.retry && FAILURES.includes(delivered.EventType)) {
      const fireAt = new Date(at.getTime() + retryDelay(activity.retry, activity.attempt)).toISOString();
      startTimer(record, { id: record.nextEventId++, fireAt, retry: activity }, at, episode, work);
    }
  }
  if (delivered.EventType === HistoryEventType.TimerFired) {
    const timer = record.timers.find((t) => t.id === delivered.TimerId);
    record.timers = record.timers.filter((t) => t !== timer);
    if (timer?.poll) startTask(record, timer.poll, at, episode, work);
    const failed = timer?.retry;
    if (failed?.retry && failed.attempt < failed.retry.maxNumberOfAttempts) {
      const id = record.nextEventId++;
      const next: PendingActivity = {
        ...failed,
        id,
        attempt: failed.attempt + 1,
        ...(failed.subOrchestration ? { subOrchestration: { instanceId: `${failed.subOrchestration.instanceId}:${failed.attempt + 1}` } } : {}),
      };
      startTask(record, next, at, episode, work);
    }
  }
}

/** Schedules `task` now: its history event, and the activity to start. */
function startTask(record: InstanceRecord, task: PendingActivity, at: Date, episode: HistoryEvent[], work: EpisodeWork): void {
  episode.push(scheduled(at, task));
  record.activities.push(task);
  work.activities.push(task);
}

/** Creates `timer` now: its history event, and the timer to arm. */
function startTimer(record: InstanceRecord, timer: PendingTimer, at: Date, episode: HistoryEvent[], work: EpisodeWork): void {
  episode.push(historyEvents.timerCreated(at, timer.id, timer.fireAt));
  record.timers.push(timer);
  work.timers.push(timer);
}

/**
 * A durable HTTP 202 with Location: a timer, then a GET of the location, as the extension polls
 * and the package's replay expects. Both ids are taken now, in the order the package numbers them.
 */
function pollLater(record: InstanceRecord, activity: PendingActivity, delivered: HistoryEvent, at: Date, episode: HistoryEvent[], work: EpisodeWork): void {
  const poll = nextPoll(activity.input, delivered.Result as string);
  if (!poll) return;
  const timer: PendingTimer = { id: record.nextEventId++, fireAt: new Date(at.getTime() + poll.delayMs).toISOString() };
  timer.poll = { id: record.nextEventId++, name: DURABLE_HTTP_ACTIVITY, input: JSON.stringify(poll.request), attempt: 1 };
  startTimer(record, timer, at, episode, work);
}

/** Schedules a new action: its history event, and the activity or timer to start. */
export function scheduleAction(record: InstanceRecord, action: PackageAction, at: Date, episode: HistoryEvent[], work: EpisodeWork): void {
  switch (action.actionType) {
    case ActionType.CallActivity:
    case ActionType.CallActivityWithRetry: {
      const activity: PendingActivity = {
        id: record.nextEventId++,
        name: action.functionName!,
        input: inputJson(action.input),
        attempt: 1,
        retry: action.retryOptions,
      };
      startTask(record, activity, at, episode, work);
      return;
    }
    case ActionType.CallHttp: {
      // The extension runs it as its built-in HTTP activity: a task like any other, once.
      startTask(record, { id: record.nextEventId++, name: DURABLE_HTTP_ACTIVITY, input: JSON.stringify(action.httpRequest), attempt: 1 }, at, episode, work);
      return;
    }
    case ActionType.CreateTimer: {
      startTimer(record, { id: record.nextEventId++, fireAt: new Date(action.fireAt!).toISOString() }, at, episode, work);
      return;
    }
    case ActionType.CallSubOrchestrator:
    case ActionType.CallSubOrchestratorWithRetry: {
      const id = record.nextEventId++;
      // Unlike activity inputs, the package does not pre-encode a sub-orchestration's input.
      const child: PendingActivity = {
        id,
        name: action.functionName!,
        input: JSON.stringify(action.input ?? null),
        attempt: 1,
        retry: action.retryOptions,
        subOrchestration: { instanceId: childId(record, action.instanceId, id) },
      };
      startTask(record, child, at, episode, work);
      return;
    }
    case ActionType.CallEntity:
    case ActionType.SignalEntity: {
      // Both take a sequence number; a call's answer comes back as an event named by its request id.
      const id = record.nextEventId++;
      const signal = action.actionType === ActionType.SignalEntity;
      const requestId = `${record.instanceId}:${record.executionId}:${id}`;
      const input = action.input === undefined ? undefined : JSON.stringify(action.input);
      episode.push(
        historyEvents.eventSent(at, id, action.operation!, action.instanceId!, JSON.stringify({ id: requestId, op: action.operation, signal, input })),
      );
      work.entityRequests.push({
        entity: action.instanceId!,
        request: {
          id: requestId,
          operation: action.operation!,
          input,
          ...(signal ? {} : { caller: { instanceId: record.instanceId, executionId: record.executionId } }),
        },
      });
      return;
    }
    case ActionType.WaitForExternalEvent:
      // Nothing to start: the replay engine matches raised events to waits by name, also events
      // raised before the wait (it keeps them until a wait asks).
      return;
    default:
      throw new Error(`The local durable host does not support ${describeAction(action)} actions.`);
  }
}
