import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createHash } from "node:crypto";
import type { EntityRecord, EntityStore } from "./entities";

export type RuntimeStatus = "Pending" | "Running" | "Suspended" | "Completed" | "Failed" | "Terminated";

/** A history event in the extension's wire shape: what the package's replay engine reads. */
export interface HistoryEvent {
  EventType: number;
  EventId: number;
  IsPlayed: boolean;
  Timestamp: string;
  [field: string]: unknown;
}

export interface RetryPolicy {
  firstRetryIntervalInMilliseconds: number;
  maxNumberOfAttempts: number;
  backoffCoefficient?: number;
  maxRetryIntervalInMilliseconds?: number;
}

/** An activity scheduled and not yet answered (run again after a restart: at-least-once). */
export interface PendingActivity {
  id: number;
  name: string;
  /** JSON, as in the TaskScheduled event. */
  input: string;
  attempt: number;
  retry?: RetryPolicy;
  /** A sub-orchestration rather than an activity: `name` is the orchestration, `instanceId` the child's (this attempt's). */
  subOrchestration?: { instanceId: string };
}

/** A durable timer; `retry` marks the wait before another attempt of a failed activity, `poll` the wait before polling a durable HTTP 202. */
export interface PendingTimer {
  id: number;
  fireAt: string;
  retry?: PendingActivity;
  poll?: PendingActivity;
}

/** Everything the host keeps about one orchestration instance, persisted after every change. */
export interface InstanceRecord {
  instanceId: string;
  name: string;
  /** The current execution's input, JSON. */
  input: string;
  runtimeStatus: RuntimeStatus;
  createdTime: string;
  lastUpdatedTime: string;
  customStatus?: unknown;
  output?: unknown;
  failure?: string;
  /** Changes with every continue-as-new and restart: answers for an older execution are dropped. */
  executionId: string;
  /** The W3C traceparent of the trace that started it (the starter's span), for the instance's span. */
  traceParent?: string;
  /** For a sub-orchestration: the parent, the task there that waits for this one, and the parent's execution then. */
  parent?: { instanceId: string; taskId: number; executionId: string };
  /** Completed episodes of the current execution. */
  history: HistoryEvent[];
  /** Events not yet delivered to the orchestrator (one per episode). */
  inbox: HistoryEvent[];
  nextEventId: number;
  /** The actions scheduled so far, in order: a replay must produce the same ones. */
  actions: string[];
  activities: PendingActivity[];
  timers: PendingTimer[];
  /** For an instance failed by a failed task: that task, to run again on rewind (and the retry timer that gave up on it). */
  rewind?: RewindPoint;
  /** With a task hub shared by several hosts: the ids of the messages applied to it last, so one delivered again is not applied twice. */
  received?: string[];
}

/** An instance not started yet: Pending, created `at` (ISO 8601), with nothing run. */
export function pendingInstance(
  instanceId: string,
  name: string,
  input: string,
  at: string,
  links: Pick<InstanceRecord, "parent" | "traceParent"> = {},
): InstanceRecord {
  return {
    instanceId,
    name,
    input,
    ...(links.parent ? { parent: links.parent } : {}),
    ...(links.traceParent ? { traceParent: links.traceParent } : {}),
    runtimeStatus: "Pending",
    createdTime: at,
    lastUpdatedTime: at,
    executionId: "",
    history: [],
    inbox: [],
    nextEventId: 0,
    actions: [],
    activities: [],
    timers: [],
  };
}

/** The task whose failure failed the instance; a rewind forgets its failure and runs it again. */
export interface RewindPoint {
  task: PendingActivity;
  retryTimerId?: number;
}

/** Where instance records live: in memory, or one JSON file each under the data directory. */
export interface InstanceStore {
  loadAll(): InstanceRecord[];
  save(record: InstanceRecord): void;
  remove(instanceId: string): void;
  /** The durable entities' state and queued operations, kept beside the instances. */
  entities: EntityStore;
}

function memoryEntityStore(): EntityStore {
  const records = new Map<string, string>();
  return {
    loadAll: () => [...records.values()].map((text) => JSON.parse(text) as EntityRecord),
    save: (record) => void records.set(record.id, JSON.stringify(record)),
  };
}

export function memoryInstanceStore(): InstanceStore {
  const records = new Map<string, string>();
  return {
    loadAll: () => [...records.values()].map((text) => JSON.parse(text) as InstanceRecord),
    save: (record) => void records.set(record.instanceId, JSON.stringify(record)),
    remove: (instanceId) => void records.delete(instanceId),
    entities: memoryEntityStore(),
  };
}

/** Why a parsed file is no instance record, or undefined when it is one. */
function recordProblem(value: unknown): string | undefined {
  const record = value as Partial<InstanceRecord> | null;
  if (typeof record !== "object" || record === null) return "not a JSON object";
  if (typeof record.instanceId !== "string" || typeof record.name !== "string") return "no instanceId or name";
  if (!Array.isArray(record.history) || !Array.isArray(record.inbox) || !Array.isArray(record.activities) || !Array.isArray(record.timers))
    return "history, inbox, activities or timers missing";
  return undefined;
}

/**
 * One file per instance; each save writes a temporary file and renames it over the old one,
 * so a crash at any moment leaves either the previous record or the new one, never half. A file
 * damaged some other way (a disk, an editor) is renamed `<file>.damaged`, reported through
 * `onDamaged`, and left out: the other instances still run.
 */
export function fileInstanceStore(directory: string, onDamaged: (file: string, reason: string) => void = () => {}): InstanceStore {
  mkdirSync(directory, { recursive: true });
  const file = (instanceId: string) => join(directory, fileNameOf(instanceId));
  const load = (name: string): InstanceRecord | undefined => {
    const path = join(directory, name);
    let reason: string | undefined;
    try {
      const value: unknown = JSON.parse(readFileSync(path, "utf8"));
      reason = recordProblem(value);
      if (reason === undefined) return value as InstanceRecord;
    } catch (error) {
      reason = (error as Error).message;
    }
    renameSync(path, `${path}.damaged`);
    onDamaged(path, reason);
    return undefined;
  };
  return {
    loadAll() {
      return readdirSync(directory)
        .filter((name) => name.endsWith(".json"))
        .flatMap((name) => load(name) ?? []);
    },
    save: (record) => writeWhole(file(record.instanceId), record),
    remove(instanceId) {
      rmSync(file(instanceId), { force: true });
    },
    entities: fileEntityStore(join(directory, "entities")),
  };
}

/**
 * The file an instance or entity lives in: its id, escaped, when that makes a name every file
 * system takes (at most 255 bytes); a hash of it otherwise. The record inside names the id, so
 * nothing reads it back from the file name.
 */
function fileNameOf(id: string): string {
  const readable = encodeURIComponent(id);
  return readable.length <= 200 ? `${readable}.json` : `~${createHash("sha256").update(id).digest("base64url")}.json`;
}

/** Writes `value` as JSON to a temporary file renamed over `path`: a crash leaves the old file or the new, never half. */
function writeWhole(path: string, value: unknown): void {
  writeFileSync(`${path}.tmp`, JSON.stringify(value));
  renameSync(`${path}.tmp`, path);
}

/** One file per entity, written as instance records are. */
function fileEntityStore(directory: string): EntityStore {
  mkdirSync(directory, { recursive: true });
  return {
    loadAll: () =>
      readdirSync(directory)
        .filter((name) => name.endsWith(".json"))
        .map((name) => JSON.parse(readFileSync(join(directory, name), "utf8")) as EntityRecord),
    save: (record) => writeWhole(join(directory, fileNameOf(record.id)), record),
  };
}
