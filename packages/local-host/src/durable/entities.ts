import { randomUUID } from "node:crypto";
import type { EntityBatchResult, EntityOperation } from "./durable-functions-internals";
import type { TriggeredFunction } from "../worker/function-app";

/** An operation waiting for its entity; `caller` when an orchestration waits for its result. */
export interface EntityRequest {
  id: string;
  operation: string;
  /** JSON of the input, or absent. */
  input?: string;
  caller?: { instanceId: string; executionId: string };
}

/** One entity as the host keeps it: its state, and the operations not yet applied, in arrival order. */
export interface EntityRecord {
  /** The scheduler id, `@name@key`. */
  id: string;
  exists: boolean;
  state?: string;
  queue: EntityRequest[];
  /** When it last applied an operation (ISO 8601), as the entity query reports it. */
  lastOperationTime?: string;
  /** The ids of the operations applied last: one delivered again (at least once, from another partition) is not applied twice. */
  applied?: string[];
}

/** How many applied operation ids an entity remembers. */
const REMEMBERED_OPERATIONS = 100;

/** Where entity records live (with the instance records: memory, or files). */
export interface EntityStore {
  loadAll(): EntityRecord[];
  save(record: EntityRecord): void;
}

/** `@name@key` for an entity, as the package and the extension name its scheduler. */
export const schedulerId = (name: string, key: string) => `@${name.toLowerCase()}@${key}`;

function parseSchedulerId(id: string): { name: string; key: string } {
  const match = /^@([^@]+)@(.*)$/.exec(id);
  if (!match) throw new Error(`'${id}' is no entity id (@name@key).`);
  return { name: match[1], key: match[2] };
}

/** What an entity operation answers a waiting orchestration with: the package's response message. */
export interface EntityResponse {
  caller: { instanceId: string; executionId: string };
  requestId: string;
  /** JSON of `{result}` or `{result, exceptionType}`. */
  message: string;
}

/**
 * Durable entities as the extension runs them: each entity applies its operations one at a
 * time, in arrival order, through the package's own entity executor (a batch per turn), keeps
 * its state in the store, passes on the signals its operations send, and answers the
 * orchestrations that called it.
 */
export class EntityHost {
  private readonly records = new Map<string, EntityRecord>();
  private readonly running = new Map<string, Promise<void>>();
  private stopped = false;
  /** The entity functions by lower-case name (entity ids are lower-case); a Map, so a name from a request never finds Object's members. */
  private readonly handlers: Map<string, TriggeredFunction>;

  constructor(
    handlers: Map<string, TriggeredFunction>,
    private readonly store: EntityStore,
    private readonly respond: (response: EntityResponse) => void,
    private readonly log: (line: string) => void,
    private readonly now: () => Date = () => new Date(),
    /** Where a signal an operation sends goes: this host's own enqueue, unless the entity lives elsewhere (a task hub's other partition). */
    private readonly forward: (entityId: string, request: EntityRequest) => void = (entityId, request) => this.enqueue(entityId, request),
  ) {
    this.handlers = new Map([...handlers].map(([name, handler]) => [name.toLowerCase(), handler]));
    for (const record of store.loadAll()) this.records.set(record.id, record);
  }

  /** Resumes the entities that had operations waiting when the host stopped. */
  resume(): void {
    for (const record of this.records.values()) if (record.queue.length > 0) this.kick(record);
  }

  /** Queues an operation for the entity `id` (`@name@key`); an unknown entity function answers the caller with an error. */
  enqueue(id: string, request: EntityRequest): void {
    const record = this.records.get(id) ?? { id, exists: false, queue: [] };
    this.records.set(id, record);
    if (record.queue.some((queued) => queued.id === request.id) || record.applied?.includes(request.id)) return;
    record.queue.push(request);
    this.store.save(record);
    this.kick(record);
  }

  /** Whether an entity function of this name is registered. */
  isRegistered(name: string): boolean {
    return this.handlers.has(name.toLowerCase());
  }

  signal(name: string, key: string, operation: string, input?: unknown): void {
    this.enqueue(schedulerId(name, key), { id: randomUUID(), operation, input: input === undefined ? undefined : JSON.stringify(input) });
  }

  /** The entity's state as `readEntityState` reports it. */
  readState(name: string, key: string): EntityState {
    return entityStateOf(this.records.get(schedulerId(name, key)));
  }

  /** The existing entities of the entity function `name`, by key, as the entity query lists them. */
  list(name: string): EntityListing[] {
    return entitiesNamed(this.records.values(), name);
  }

  /** Every entity this host has. */
  all(): EntityRecord[] {
    return [...this.records.values()];
  }

  /** The record of entity `id` (`@name@key`), if this host has it. */
  record(id: string): EntityRecord | undefined {
    return this.records.get(id);
  }

  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running.values()]);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all([...this.running.values()]);
  }

  private kick(record: EntityRecord): void {
    if (this.running.has(record.id) || this.stopped) return;
    const run = (async () => {
      while (!this.stopped && record.queue.length > 0) await this.turn(record);
    })()
      .catch((error: unknown) => this.log(`entity ${record.id}: host error ${(error as Error).stack}`))
      .finally(() => {
        this.running.delete(record.id);
        // An operation queued after the loop last looked, while this run wound down, starts a new one.
        if (!this.stopped && record.queue.length > 0) this.kick(record);
      });
    this.running.set(record.id, run);
  }

  /** One batch: every queued operation, applied in order by the package's executor. */
  private async turn(record: EntityRecord): Promise<void> {
    const batch = record.queue.slice();
    const self = parseSchedulerId(record.id);
    const handler = this.handlers.get(self.name);
    let outcome: { isError: boolean; result?: string }[];
    if (!handler) {
      outcome = batch.map(() => ({ isError: true, result: JSON.stringify({ message: `No entity named '${self.name}' is registered.` }) }));
    } else {
      const operations: EntityOperation[] = batch.map((request) => ({
        name: request.operation,
        input: request.input,
        id: request.id,
        isSignal: !request.caller,
      }));
      const result = JSON.parse(await handler({ self, exists: record.exists, state: record.state, batch: operations })) as EntityBatchResult;
      record.exists = result.entityExists;
      record.state = result.entityExists ? result.entityState : undefined;
      outcome = result.results;
      for (const signal of result.signals)
        this.forward(schedulerId(signal.target.name, signal.target.key), { id: randomUUID(), operation: signal.name, input: signal.input || undefined });
    }
    record.queue = record.queue.slice(batch.length);
    record.applied = [...(record.applied ?? []), ...batch.map((request) => request.id)].slice(-REMEMBERED_OPERATIONS);
    record.lastOperationTime = this.now().toISOString();
    this.store.save(record);
    batch.forEach((request, i) => {
      if (!request.caller) return;
      const answer = outcome[i] ?? { isError: false };
      const message = answer.isError ? { result: answer.result ?? "null", exceptionType: "Error" } : { result: answer.result ?? "null" };
      this.respond({ caller: request.caller, requestId: request.id, message: JSON.stringify(message) });
    });
  }
}

/** An entity's state as `readEntityState` reports it. */
export interface EntityState {
  entityExists: boolean;
  entityState: unknown;
}

/** One entity as the entity query lists it. */
export interface EntityListing {
  entityId: { name: string; key: string };
  lastOperationTime?: string;
  state: unknown;
}

export function entityStateOf(record: EntityRecord | undefined): EntityState {
  return { entityExists: record?.exists ?? false, entityState: record?.state === undefined ? undefined : JSON.parse(record.state) };
}

/** The existing entities of the entity function `name` among `records`, by key. */
export function entitiesNamed(records: Iterable<EntityRecord>, name: string): EntityListing[] {
  return [...records]
    .filter((record) => record.exists && parseSchedulerId(record.id).name === name.toLowerCase())
    .map((record) => ({
      entityId: parseSchedulerId(record.id),
      lastOperationTime: record.lastOperationTime,
      state: record.state === undefined ? null : JSON.parse(record.state),
    }))
    .sort((a, b) => a.entityId.key.localeCompare(b.entityId.key));
}
