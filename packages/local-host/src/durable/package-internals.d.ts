/**
 * The parts of durable-functions' replay engine the local host drives, exactly as the
 * Functions extension does. The package ships them without type declarations (and without an
 * exports map), so their shapes are declared here.
 */
declare module "durable-functions/lib/src/orchestrations/Orchestrator" {
  import type { InvocationContext } from "@azure/functions";
  import type { OrchestrationHandler } from "durable-functions";

  /** What the extension passes as the orchestration trigger: the history so far and the execution's input. */
  export interface OrchestrationTriggerPayload {
    history: unknown[];
    input: unknown;
    instanceId: string;
    isReplaying: boolean;
    parentInstanceId?: string;
    upperSchemaVersion: number;
    maximumShortTimerDuration?: string;
    longRunningTimerIntervalDuration?: string;
  }

  /** One action as the package describes it (`actionType` from ActionType, plus that action's fields). */
  export interface PackageAction {
    actionType: number;
    functionName?: string;
    input?: unknown;
    retryOptions?: {
      firstRetryIntervalInMilliseconds: number;
      maxNumberOfAttempts: number;
      backoffCoefficient?: number;
      maxRetryIntervalInMilliseconds?: number;
    };
    fireAt?: Date;
    isCanceled?: boolean;
    compoundActions?: PackageAction[];
    /** A sub-orchestration's instance id, when the orchestrator gave one; an entity's scheduler id (`@name@key`). */
    instanceId?: string;
    /** An entity operation's name. */
    operation?: string;
    /** CallHttp: the durable HTTP request. */
    httpRequest?: unknown;
  }

  export interface OrchestratorState {
    isDone: boolean;
    actions: PackageAction[][];
    output: unknown;
    error?: string;
    customStatus?: unknown;
  }

  export class Orchestrator {
    constructor(fn: OrchestrationHandler);
    handle(trigger: OrchestrationTriggerPayload, context: InvocationContext): Promise<OrchestratorState>;
  }
}

declare module "durable-functions/lib/src/history/HistoryEventType" {
  export enum HistoryEventType {
    ExecutionStarted = 0,
    ExecutionCompleted = 1,
    ExecutionFailed = 2,
    ExecutionTerminated = 3,
    TaskScheduled = 4,
    TaskCompleted = 5,
    TaskFailed = 6,
    SubOrchestrationInstanceCreated = 7,
    SubOrchestrationInstanceCompleted = 8,
    SubOrchestrationInstanceFailed = 9,
    TimerCreated = 10,
    TimerFired = 11,
    OrchestratorStarted = 12,
    OrchestratorCompleted = 13,
    EventSent = 14,
    EventRaised = 15,
    ContinueAsNew = 16,
  }
}

declare module "durable-functions/lib/src/actions/ActionType" {
  export enum ActionType {
    CallActivity = 0,
    CallActivityWithRetry = 1,
    CallSubOrchestrator = 2,
    CallSubOrchestratorWithRetry = 3,
    ContinueAsNew = 4,
    CreateTimer = 5,
    WaitForExternalEvent = 6,
    CallEntity = 7,
    CallHttp = 8,
    SignalEntity = 9,
    WhenAny = 11,
    WhenAll = 12,
  }
}

declare module "durable-functions/lib/src/entities/Entity" {
  import type { InvocationContext } from "@azure/functions";

  /** One operation of a batch, as the extension sends it to an entity. */
  export interface EntityOperation {
    name: string;
    /** JSON of the operation's input, or absent. */
    input?: string;
    id: string;
    isSignal: boolean;
  }

  /** What the extension passes as the entity trigger: which entity, its state, and the operations to apply in order. */
  export interface EntityTriggerPayload {
    self: { name: string; key: string };
    exists: boolean;
    /** JSON of the state, or absent. */
    state?: string;
    batch: EntityOperation[];
  }

  /** The outcome of a batch: the state after it, and each operation's result (JSON) or error. */
  export interface EntityBatchResult {
    entityExists: boolean;
    entityState?: string;
    results: { isError: boolean; result?: string }[];
    signals: { target: { name: string; key: string }; name: string; input: string }[];
  }

  export class Entity {
    constructor(fn: (context: never) => unknown);
    handle(trigger: EntityTriggerPayload, context: InvocationContext): Promise<EntityBatchResult>;
  }
}
