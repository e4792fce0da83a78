import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export type RuntimeStatus = "Pending" | "Running" | "Completed" | "Failed" | "Terminated";

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
}

/** A durable timer; `retry` marks the wait before another attempt of a failed activity. */
export interface PendingTimer {
  id: number;
  fireAt: string;
  retry?: PendingActivity;
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
  /** Completed episodes of the current execution. */
  history: HistoryEvent[];
  /** Events not yet delivered to the orchestrator (one per episode). */
  inbox: HistoryEvent[];
  nextEventId: number;
  /** The actions scheduled so far, in order: a replay must produce the same ones. */
  actions: string[];
  activities: PendingActivity[];
  timers: PendingTimer[];
}

/** Where instance records live: in memory, or one JSON file each under the data directory. */
export interface InstanceStore {
  loadAll(): InstanceRecord[];
  save(record: InstanceRecord): void;
  remove(instanceId: string): void;
}

export function memoryInstanceStore(): InstanceStore {
  const records = new Map<string, string>();
  return {
    loadAll: () => [...records.values()].map((text) => JSON.parse(text) as InstanceRecord),
    save: (record) => void records.set(record.instanceId, JSON.stringify(record)),
    remove: (instanceId) => void records.delete(instanceId),
  };
}

/**
 * One file per instance; each save writes a temporary file and renames it over the old one,
 * so a crash at any moment leaves either the previous record or the new one, never half.
 */
export function fileInstanceStore(directory: string): InstanceStore {
  mkdirSync(directory, { recursive: true });
  const file = (instanceId: string) => join(directory, `${encodeURIComponent(instanceId)}.json`);
  return {
    loadAll() {
      return readdirSync(directory)
        .filter((name) => name.endsWith(".json"))
        .map((name) => JSON.parse(readFileSync(join(directory, name), "utf8")) as InstanceRecord);
    },
    save(record) {
      const path = file(record.instanceId);
      writeFileSync(`${path}.tmp`, JSON.stringify(record));
      renameSync(`${path}.tmp`, path);
    },
    remove(instanceId) {
      rmSync(file(instanceId), { force: true });
    },
  };
}
