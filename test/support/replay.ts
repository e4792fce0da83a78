import { InvocationContext } from "@azure/functions";
import type { OrchestrationHandler } from "durable-functions";
import { ActionType } from "durable-functions/lib/src/actions/ActionType";
import { HistoryEventType } from "durable-functions/lib/src/history/HistoryEventType";
import { Orchestrator, type PackageAction } from "durable-functions/lib/src/orchestrations/Orchestrator";

/**
 * An orchestrator tested as durable-functions tests its own: a history written event by event,
 * replayed through the package's engine, and the actions it decides read back. No host, no
 * timers, no sleeps: time is what the history's timestamps say.
 */
export class History {
  readonly events: Record<string, unknown>[] = [];
  private time: number;
  private nextId = 0;

  constructor(
    readonly name: string,
    readonly input: unknown,
    start = "2026-01-01T00:00:00.000Z",
  ) {
    this.time = Date.parse(start);
    this.add(HistoryEventType.OrchestratorStarted);
    this.add(HistoryEventType.ExecutionStarted, { Name: name, Input: JSON.stringify(input) });
  }

  get now(): Date {
    return new Date(this.time);
  }

  private add(type: HistoryEventType, fields: Record<string, unknown> = {}, eventId = -1): void {
    this.events.push({ EventType: type, EventId: eventId, IsPlayed: false, Timestamp: new Date(this.time).toISOString(), ...fields });
  }

  /** The orchestrator ran and yielded; the next episode starts `ms` later. */
  episode(ms = 0): this {
    this.add(HistoryEventType.OrchestratorCompleted);
    this.time += ms;
    this.add(HistoryEventType.OrchestratorStarted);
    return this;
  }

  /** An activity call the orchestrator made (its TaskScheduled); its id. */
  scheduled(name: string, input: unknown): number {
    const id = this.nextId++;
    this.add(HistoryEventType.TaskScheduled, { Name: name, Input: JSON.stringify(input) }, id);
    return id;
  }

  completed(id: number, result: unknown): this {
    this.add(HistoryEventType.TaskCompleted, { TaskScheduledId: id, Result: JSON.stringify(result) });
    return this;
  }

  failed(id: number, reason: string): this {
    this.add(HistoryEventType.TaskFailed, { TaskScheduledId: id, Reason: reason, Details: reason });
    return this;
  }

  timerCreated(fireAt: Date): number {
    const id = this.nextId++;
    this.add(HistoryEventType.TimerCreated, { FireAt: fireAt.toISOString() }, id);
    return id;
  }

  timerFired(id: number, fireAt: Date): this {
    this.time = Math.max(this.time, fireAt.getTime());
    this.add(HistoryEventType.TimerFired, { TimerId: id, FireAt: fireAt.toISOString() });
    return this;
  }

  /** A task that fails every attempt of its retry policy: scheduled, failed and the retry timer, `attempts` times. */
  failsEveryAttempt(name: string, input: unknown, attempts: number, reason: string): this {
    for (let attempt = 1; attempt <= attempts; attempt++) {
      this.failed(this.scheduled(name, input), reason);
      const fireAt = new Date(this.time);
      const timer = this.timerCreated(fireAt);
      this.episode().timerFired(timer, fireAt);
    }
    return this;
  }
}

/** One decided action, in the terms a reader checks: its kind, the function, its input, when a timer fires. */
export interface Decision {
  type: string;
  name?: string;
  input?: unknown;
  fireAt?: string;
}

const decision = (action: PackageAction): Decision => ({
  type: ActionType[action.actionType],
  ...(action.functionName ? { name: action.functionName } : {}),
  ...(action.input !== undefined
    ? { input: typeof action.input === "string" && action.actionType !== ActionType.ContinueAsNew ? JSON.parse(action.input) : action.input }
    : {}),
  ...(action.fireAt ? { fireAt: new Date(action.fireAt).toISOString() } : {}),
});

const atomic = (actions: PackageAction[]): PackageAction[] => actions.flatMap((a) => (a.compoundActions ? atomic(a.compoundActions) : [a]));

/** Replays `history` through the package's engine, as the extension delivers it (replay schema V3, its timer limits). */
export async function replay(handler: OrchestrationHandler, history: History, instanceId = "instance") {
  const context = new InvocationContext({ functionName: history.name });
  const state = await new Orchestrator(handler).handle(
    {
      history: structuredClone(history.events),
      input: structuredClone(history.input),
      instanceId,
      isReplaying: false,
      upperSchemaVersion: 2,
      maximumShortTimerDuration: "6.00:00:00",
      longRunningTimerIntervalDuration: "3.00:00:00",
    },
    context,
  );
  return { isDone: state.isDone, output: state.output, customStatus: state.customStatus, decisions: atomic(state.actions.flat()).map(decision) };
}
