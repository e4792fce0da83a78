import { createHash, randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { Container, Database, JSONObject, OperationInput, OperationResponse } from "@azure/cosmos";
import { cosmosStatus, isTransient } from "../change-feed/cosmos-failures";
import { shareToTake } from "../fair-share";
import { untraced } from "../telemetry";
import type { EntityRecord, EntityRequest, EntityStore } from "./entities";
import { InstanceScheduler, type SchedulerOptions, type InstanceRouter, type TaskAnswer } from "./scheduler";
import type { InstanceRecord, InstanceStore } from "./store";

/**
 * One task hub for every instance of the app, as the Durable Functions Azure Storage provider
 * keeps it: the instances and entities split into partitions (4, as its control queues), each
 * partition leased by one host at a time (the leases shared out as the change feed's are:
 * free and expired first, then one stolen from the busiest), its records and the messages sent
 * to it in a container of the shared Cosmos DB account. A host runs the instances of the
 * partitions it holds (a scheduler each) and sends everything else as a message to the
 * partition of its target, which its holder applies. A host killed mid-episode loses nothing:
 * its partitions' leases expire, another host loads their records and goes on (activities
 * unanswered run again, at least once, as in Azure).
 */

export interface TaskHubTiming {
  /** A partition whose holder has not renewed its lease for this long may be taken (the provider's default is 30 s). */
  expirationMs: number;
  renewMs: number;
  /** How often free, expired and excess leases are looked for. */
  acquireMs: number;
  /** How often a held partition's messages are read while they come; the wait doubles while none do, up to `idlePollMs`. */
  pollMs: number;
  idlePollMs: number;
}

export const DEFAULT_HUB_TIMING: TaskHubTiming = { expirationMs: 10_000, renewMs: 3_000, acquireMs: 2_000, pollMs: 250, idlePollMs: 1_000 };

export interface TaskHubOptions {
  /** The shared account's database: the hub's container is created in it. */
  database: Database;
  /** The hub's container (partition key `/partition`); `taskHub` unless given. */
  name?: string;
  /** This host's name on the leases: one per host, so a restarted host takes its own partitions back at once. */
  owner: string;
  partitions?: number;
  timing?: Partial<TaskHubTiming>;
}

/** What one host asks of an instance or entity that another host's partition holds. */
export type HubMessage =
  | { op: "create"; name: string; instanceId: string; input: string; parent?: InstanceRecord["parent"]; traceParent?: string }
  | { op: "deliver"; instanceId: string; executionId: string; event: TaskAnswer }
  | { op: "entity"; entityId: string; request: EntityRequest }
  | { op: "raiseEvent"; instanceId: string; name: string; data: unknown }
  | { op: "suspend" | "resume" | "rewind" | "purge"; instanceId: string }
  | { op: "terminate"; instanceId: string; reason: string };

/** A client's request (start, event, suspend...) for the instance, applied by the host holding it, as the client API applies its own. */
export type ClientMessage = Exclude<HubMessage, { op: "deliver" | "entity" }>;

/** How the holder applies a client's message: `sentAt` tells a start that was already applied (the instance is newer) from one to apply. */
export type ApplyClientMessage = (scheduler: InstanceScheduler, message: ClientMessage, sentAt: string) => Promise<void>;

interface StoredDocument {
  id: string;
  partition: string;
  kind: "lease" | "instance" | "entity" | "message";
  _etag?: string;
}

interface LeaseDocument extends StoredDocument {
  kind: "lease";
  owner: string;
  timestamp: string;
}

/** An instance or entity record, as JSON text (read back whole; nothing queries inside it). */
interface RecordDocument extends StoredDocument {
  kind: "instance" | "entity";
  text: string;
}

interface MessageDocument extends StoredDocument {
  kind: "message";
  sentAt: string;
  message: HubMessage;
}

/** How many applied message ids an instance remembers. */
const REMEMBERED_MESSAGES = 100;

/** A document id for a record: the ids an app gives instances may hold characters Cosmos DB ids may not. */
const recordId = (kind: "instance" | "entity", id: string) => `${kind[0]}-${createHash("sha256").update(id).digest("base64url")}`;

/** The partition of an instance or entity id, as the provider hashes it to a control queue. */
export const partitionOf = (id: string, partitions: number) => createHash("sha256").update(id).digest().readUInt32BE(0) % partitions;

/** How often a client's request (through the HTTP API) tries the account while it is busy or away: about 3 s in all. */
const CLIENT_ATTEMPTS = 6;

/** `request`, tried again while the account is busy or away (`attempts` in all, a minute by default); anything else it answers is thrown. */
async function untilAnswered<T>(request: () => Promise<T>, attempts = 30): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await request();
    } catch (error) {
      if (!isTransient(error) || attempt >= attempts) throw error;
      await sleep(Math.min(50 * 2 ** attempt, 2000));
    }
  }
}

/**
 * A partition's records as a scheduler keeps them: every save queued and written in order, each
 * in one transaction with the partition's lease (a batch on its partition key, conditional on the
 * lease's ETag and on the record's). A host whose lease was taken cannot write a thing more: its
 * next write is refused, and it lets the partition go; what the new holder loaded is all there
 * is. Every write renews the lease. A message to another partition goes out after a renewal in
 * the same queue: sent before the save that records it as sent, and by the holder only.
 */
class PartitionStore implements InstanceStore {
  readonly entities: EntityStore;
  private readonly etags = new Map<string, string>();
  private readonly instances: InstanceRecord[];
  private chain: Promise<void> = Promise.resolve();
  private leaseEtag: string;
  /** When the lease was last written (by a renewal or with a record). */
  renewedAt = Date.now();
  lost = false;

  constructor(
    private readonly container: Container,
    readonly key: string,
    lease: LeaseDocument,
    private readonly owner: string,
    documents: RecordDocument[],
    private readonly onLost: (why: string) => void,
    private readonly log: (line: string) => void,
  ) {
    this.leaseEtag = lease._etag!;
    for (const document of documents) this.etags.set(document.id, document._etag!);
    const parsed = (kind: string) => documents.filter((d) => d.kind === kind).map((d) => JSON.parse(d.text) as unknown);
    this.instances = parsed("instance") as InstanceRecord[];
    const entities = parsed("entity") as EntityRecord[];
    this.entities = { loadAll: () => entities, save: (record) => this.put("entity", record.id, record) };
  }

  loadAll(): InstanceRecord[] {
    return this.instances;
  }

  save(record: InstanceRecord): void {
    this.put("instance", record.instanceId, record);
  }

  remove(instanceId: string): void {
    const id = recordId("instance", instanceId);
    this.enqueue(`purge ${instanceId}`, async () => {
      // The lease is the fence: only the holder deletes (the SDK's batch delete takes no ETag).
      if (this.etags.has(id)) await this.fenced({ operationType: "Delete", id });
      this.etags.delete(id);
    });
  }

  /** Sends `message` to partition `to`, after every write queued before it. */
  send(to: string, message: HubMessage): void {
    // Named before its first attempt: one that timed out and yet arrived is not sent twice.
    const document = messageDocument(to, message);
    this.enqueue(`message to partition ${to}`, async () => {
      await this.fenced();
      await this.container.items.create(document).catch((error: unknown) => {
        if (cosmosStatus(error) !== 409) throw error;
      });
    });
  }

  /** Deletes an applied message, after the writes that recorded what it did. */
  applied(messageId: string): void {
    this.enqueue(`applied message ${messageId}`, () => this.fenced({ operationType: "Delete", id: messageId }, [404]).then(() => undefined));
  }

  /** Renews the lease after what is queued; false once the partition is lost. */
  renew(): Promise<boolean> {
    this.enqueue("the lease", () => this.fenced().then(() => undefined));
    return this.flushed();
  }

  /** Lets the lease go for others to take at once, after what is queued; nothing is written after it. */
  release(): Promise<boolean> {
    this.enqueue("the lease's release", () => this.fenced(undefined, [], "").then(() => undefined));
    const released = this.flushed();
    void released.then(() => (this.lost = true));
    return released;
  }

  /** Resolves once everything queued so far is written (true), or will never be: the partition was lost first (false). */
  flushed(): Promise<boolean> {
    return this.chain.then(() => !this.lost);
  }

  private put(kind: "instance" | "entity", key: string, record: InstanceRecord | EntityRecord): void {
    // The record as it is now: it goes on changing while the write waits its turn.
    const document: RecordDocument = { id: recordId(kind, key), partition: this.key, kind, text: JSON.stringify(record) };
    this.enqueue(`${kind} ${key}`, async () => {
      const etag = this.etags.get(document.id);
      const written = await this.fenced(
        etag
          ? { operationType: "Replace", id: document.id, resourceBody: document as unknown as JSONObject, ifMatch: etag }
          : { operationType: "Create", resourceBody: document as unknown as JSONObject },
      );
      this.etags.set(document.id, written!.eTag!);
    });
  }

  /**
   * Writes the lease (renewed, or released with owner "") and `operation` in one transaction,
   * conditional on the lease being as this host last wrote it. `tolerated`: statuses of the
   * operation that leave the partition as wanted (a message already deleted).
   */
  private async fenced(operation?: OperationInput, tolerated: number[] = [], owner = this.owner): Promise<OperationResponse | undefined> {
    const lease: LeaseDocument = { id: "lease", partition: this.key, kind: "lease", owner, timestamp: new Date().toISOString() };
    const operations: OperationInput[] = [{ operationType: "Replace", id: "lease", resourceBody: lease as unknown as JSONObject, ifMatch: this.leaseEtag }];
    if (operation) operations.push(operation);
    const response = await this.container.items.batch(operations, this.key);
    const results = response.result ?? [];
    const refused = results.findIndex((result) => result.statusCode >= 400 && result.statusCode !== 424);
    if (refused === 1 && tolerated.includes(results[1].statusCode)) return this.fenced(); // the lease alone, then
    const status = results[refused]?.statusCode ?? response.code ?? 0;
    if (refused >= 0 || status >= 400 || results.length !== operations.length)
      throw Object.assign(new Error(`${refused === 0 ? "the lease" : "the write"} was refused (${status})`), { code: status });
    this.leaseEtag = results[0].eTag!;
    this.renewedAt = Date.now();
    return results[1];
  }

  private enqueue(what: string, write: () => Promise<void>): void {
    this.chain = this.chain.then(async () => {
      for (let attempt = 1; !this.lost; attempt++) {
        try {
          return await untraced(write);
        } catch (error) {
          const status = cosmosStatus(error);
          if (status === 409 || status === 412 || status === 404) {
            // Another host took the partition, or wrote it since this one loaded it: it is not ours any more.
            this.lost = true;
            this.onLost(`writing ${what} was refused (${status})`);
            return;
          }
          if (!isTransient(error)) this.log(`task hub partition ${this.key}: writing ${what} failed: ${(error as Error).message}; trying again`);
          await sleep(Math.min(50 * 2 ** attempt, 2000));
        }
      }
    });
  }
}

function messageDocument(partition: string, message: HubMessage): MessageDocument {
  return { id: `m-${randomUUID()}`, partition, kind: "message", sentAt: new Date().toISOString(), message };
}

/** A partition this host holds: its lease, and once loaded, its records and the scheduler that runs them. */
interface Partition {
  key: string;
  /** As taken: the store writes it from then on. */
  lease: LeaseDocument;
  store?: PartitionStore;
  scheduler?: InstanceScheduler;
  /** The messages handed to the scheduler since it loaded (their deletion may lag behind the next read). */
  seen: Set<string>;
  /** The read of its messages under way: one at a time, so none is applied twice or out of order. */
  receiving: Promise<unknown>;
}

export class TaskHub {
  private readonly timing: TaskHubTiming;
  private readonly count: number;
  private readonly owner: string;
  private readonly held = new Map<string, Partition>();
  private readonly abort = new AbortController();
  private readonly loops: Promise<void>[] = [];
  private container?: Container;
  private readonly log: (line: string) => void;

  constructor(
    private readonly options: TaskHubOptions,
    private readonly host: SchedulerOptions,
    private readonly applyClient: ApplyClientMessage,
  ) {
    this.timing = { ...DEFAULT_HUB_TIMING, ...options.timing };
    this.count = options.partitions ?? 4;
    this.owner = options.owner;
    this.log = host.log ?? (() => {});
  }

  /** Creates the hub's container and leases if absent, then takes this host's share of the partitions and keeps it. */
  async start(): Promise<void> {
    const container = (this.container = await untilAnswered(() => this.createContainer()));
    for (let index = 0; index < this.count; index++) {
      const lease: LeaseDocument = { id: "lease", partition: String(index), kind: "lease", owner: "", timestamp: new Date(0).toISOString() };
      await untilAnswered(() =>
        container.items.create(lease).catch((error: unknown) => {
          if (cosmosStatus(error) !== 409) throw error;
        }),
      );
    }
    this.loops.push(this.balance(), this.receive());
  }

  /** The hub's container; hosts starting together may race to create it, and all go on with the one that was made. */
  private async createContainer(): Promise<Container> {
    const definition = { id: this.options.name ?? "taskHub", partitionKey: { paths: ["/partition"] } };
    for (;;) {
      try {
        return (await this.options.database.containers.createIfNotExists(definition)).container;
      } catch (error) {
        if (cosmosStatus(error) !== 409) throw error;
      }
    }
  }

  /** Lets every partition go for others to take at once; what is queued is written first. */
  async stop(): Promise<void> {
    this.abort.abort();
    await Promise.all(this.loops);
    await Promise.all([...this.held.values()].map((partition) => this.drop(partition, "released")));
  }

  /** The partitions this host holds and runs (their keys). */
  partitions(): string[] {
    return [...this.held.values()]
      .filter((partition) => partition.scheduler)
      .map((partition) => partition.key)
      .sort();
  }

  /** A start of the instance sent to its partition and not applied yet (its holder has not read it). */
  async pendingStart(instanceId: string): Promise<{ name: string; input: string; sentAt: string } | undefined> {
    const query = {
      query: "SELECT * FROM c WHERE c.kind = 'message' AND c.message.op = 'create' AND c.message.instanceId = @id",
      parameters: [{ name: "@id", value: instanceId }],
    };
    const { resources } = await untilAnswered(
      () =>
        this.hub()
          .items.query<MessageDocument>(query, { partitionKey: this.partitionKeyOf(instanceId) })
          .fetchAll(),
      CLIENT_ATTEMPTS,
    );
    const start = resources.sort((a, b) => b.sentAt.localeCompare(a.sentAt))[0];
    return start?.message.op === "create" ? { name: start.message.name, input: start.message.input, sentAt: start.sentAt } : undefined;
  }

  /** The partition an instance or entity id belongs to. */
  partitionKeyOf(id: string): string {
    return String(partitionOf(id, this.count));
  }

  /** The scheduler running `id`'s partition, if this host holds and has loaded it. */
  schedulerOf(id: string): InstanceScheduler | undefined {
    return this.placement(id)?.scheduler;
  }

  /** Every scheduler this host runs. */
  schedulers(): InstanceScheduler[] {
    return [...this.held.values()].flatMap((partition) => partition.scheduler ?? []);
  }

  /**
   * Where `id` runs, if this host runs it: its partition's scheduler, and whether what it has
   * queued so far got written (a client's request is acknowledged only then).
   */
  placement(id: string): { scheduler: InstanceScheduler; written(): Promise<boolean> } | undefined {
    const { scheduler, store } = this.held.get(this.partitionKeyOf(id)) ?? {};
    return scheduler && store && { scheduler, written: () => store.flushed() };
  }

  /** Sends a client's request to the partition of the instance or entity `id`. */
  async send(id: string, message: HubMessage): Promise<void> {
    const document = messageDocument(this.partitionKeyOf(id), message);
    await untilAnswered(
      () =>
        this.hub()
          .items.create(document)
          .catch((error: unknown) => {
            if (cosmosStatus(error) !== 409) throw error; // an attempt that timed out arrived after all
          }),
      CLIENT_ATTEMPTS,
    );
  }

  /** The stored record of an instance (as its holder last wrote it). */
  async readInstance(instanceId: string): Promise<InstanceRecord | undefined> {
    return this.readRecord<InstanceRecord>("instance", instanceId);
  }

  async readEntity(entityId: string): Promise<EntityRecord | undefined> {
    return this.readRecord<EntityRecord>("entity", entityId);
  }

  /** Every instance, or every entity: as this host runs them where it holds the partition, as stored elsewhere. */
  async all(kind: "instance"): Promise<InstanceRecord[]>;
  async all(kind: "entity"): Promise<EntityRecord[]>;
  async all(kind: "instance" | "entity"): Promise<(InstanceRecord | EntityRecord)[]> {
    const records: (InstanceRecord | EntityRecord)[] = [];
    for (let index = 0; index < this.count; index++) {
      const scheduler = this.held.get(String(index))?.scheduler;
      if (scheduler) {
        records.push(...(kind === "instance" ? scheduler.records.values() : scheduler.entities.all()));
        continue;
      }
      const query = { query: "SELECT * FROM c WHERE c.kind = @kind", parameters: [{ name: "@kind", value: kind }] };
      const { resources } = await untilAnswered(
        () =>
          this.hub()
            .items.query<RecordDocument>(query, { partitionKey: String(index) })
            .fetchAll(),
        CLIENT_ATTEMPTS,
      );
      records.push(...resources.map((document) => JSON.parse(document.text) as InstanceRecord | EntityRecord));
    }
    return records;
  }

  private async readRecord<T>(kind: "instance" | "entity", id: string): Promise<T | undefined> {
    const { resource } = await untilAnswered(() => this.hub().item(recordId(kind, id), this.partitionKeyOf(id)).read<RecordDocument>(), CLIENT_ATTEMPTS);
    return resource ? (JSON.parse(resource.text) as T) : undefined;
  }

  private hub(): Container {
    if (!this.container) throw new Error("the task hub has not started");
    return this.container;
  }

  private pause(ms: number): Promise<void> {
    return sleep(ms, undefined, { signal: this.abort.signal }).catch(() => undefined);
  }

  /** The lease loop: renew what is held, take this host's share, load what was taken. */
  private async balance(): Promise<void> {
    while (!this.abort.signal.aborted) {
      try {
        this.renew();
        // Shared out by partition: every lease document has the id `lease`, in its own partition.
        const leases = await Promise.all([...Array(this.count).keys()].map(async (index) => ({ ...(await this.readLease(String(index))), id: String(index) })));
        const { share, free, steal } = shareToTake(leases, new Set(this.held.keys()), this.owner, this.timing.expirationMs);
        const document = (lease: LeaseDocument): LeaseDocument => ({ ...lease, id: "lease" });
        for (const lease of free) {
          if (this.held.size >= share && lease.owner !== this.owner) break;
          await this.take(document(lease), lease.owner && lease.owner !== this.owner ? `taken from ${lease.owner} (expired)` : "acquired");
        }
        if (this.held.size < share && steal) await this.take(document(steal), `stolen from ${steal.owner}`);
      } catch (error) {
        this.log(`task hub: balancing partitions failed: ${(error as Error).message}`);
      }
      await this.pause(this.timing.acquireMs);
    }
  }

  private async readLease(key: string): Promise<LeaseDocument> {
    const { resource } = await untraced(() => this.hub().item("lease", key).read<LeaseDocument>());
    if (!resource) throw new Error(`the lease of task hub partition ${key} is missing`);
    return resource;
  }

  /** Writes the lease for `owner` if nobody changed it since it was read; undefined when someone did. */
  private async writeLease(lease: LeaseDocument, owner: string): Promise<LeaseDocument | undefined> {
    const next: LeaseDocument = { id: lease.id, partition: lease.partition, kind: "lease", owner, timestamp: new Date().toISOString() };
    try {
      const { resource } = await untraced(() =>
        this.hub()
          .item(lease.id, lease.partition)
          .replace(next, { accessCondition: { type: "IfMatch", condition: lease._etag! } }),
      );
      return resource as LeaseDocument;
    } catch (error) {
      if (cosmosStatus(error) === 412 || cosmosStatus(error) === 404) return undefined;
      throw error;
    }
  }

  /** Renews the leases not written lately (a write renews its partition's), in each partition's write queue; a lease taken meanwhile is let go. */
  private renew(): void {
    for (const partition of this.held.values()) {
      const { store } = partition;
      if (!store || Date.now() - store.renewedAt < this.timing.renewMs) continue;
      void store.renew().then(async (held) => {
        if (!held) await this.drop(partition, "taken by another host");
      });
    }
  }

  private async take(lease: LeaseDocument, how: string): Promise<void> {
    const taken = await this.writeLease(lease, this.owner);
    if (!taken) return; // another host was quicker
    const partition: Partition = { key: lease.partition, lease: taken, seen: new Set(), receiving: Promise.resolve() };
    this.held.set(partition.key, partition);
    this.log(`task hub: partition ${partition.key} ${how} by ${this.owner}`);
    await this.load(partition).catch((error: unknown) => {
      // Not held after all: the next round takes it again (the lease names this host) and loads it.
      if (this.held.get(partition.key) === partition) this.held.delete(partition.key);
      throw error;
    });
  }

  /** Reads the partition's records and runs them: timers armed again, unanswered activities run again. */
  private async load(partition: Partition): Promise<void> {
    const query = { query: "SELECT * FROM c WHERE c.kind = 'instance' OR c.kind = 'entity'" };
    const { resources } = await untraced(() => this.hub().items.query<RecordDocument>(query, { partitionKey: partition.key }).fetchAll());
    if (this.held.get(partition.key) !== partition) return; // dropped meanwhile
    const store = new PartitionStore(this.hub(), partition.key, partition.lease, this.owner, resources, (why) => void this.drop(partition, why), this.log);
    partition.store = store;
    partition.scheduler = new InstanceScheduler({ ...this.host, store }, this.routerFor(partition));
    partition.scheduler.resume();
  }

  /**
   * Stops running the partition: its lease lost (to another host, or a write the new holder's
   * refused) or released. Whatever it had queued is written first where its lease still allows.
   */
  private async drop(partition: Partition, why: string): Promise<void> {
    if (this.held.get(partition.key) !== partition) return;
    this.held.delete(partition.key);
    if (why !== "released") this.log(`task hub: partition ${partition.key} let go by ${this.owner}: ${why}`);
    await partition.scheduler?.stop();
    if (why === "released") await partition.store?.release();
  }

  /** What an instance of `from` sends elsewhere: straight in when it stays in the partition, else a message in the partition's write queue. */
  private routerFor(from: Partition): InstanceRouter {
    const to = (id: string, local: (scheduler: InstanceScheduler) => void, message: HubMessage) => {
      const key = this.partitionKeyOf(id);
      if (key === from.key && from.scheduler) local(from.scheduler);
      else from.store!.send(key, message);
    };
    return {
      createChild: (name, instanceId, input, parent, traceParent) =>
        to(instanceId, (s) => s.createChild(name, instanceId, input, parent, traceParent), { op: "create", name, instanceId, input, parent, traceParent }),
      deliver: (instanceId, executionId, event) =>
        to(instanceId, (s) => s.deliverTo(instanceId, executionId, event), { op: "deliver", instanceId, executionId, event }),
      enqueueEntity: (entityId, request) => to(entityId, (s) => s.entities.enqueue(entityId, request), { op: "entity", entityId, request }),
    };
  }

  /** The message loop: each loaded partition's messages, oldest first, applied by its scheduler. */
  private async receive(): Promise<void> {
    for (let wait = this.timing.pollMs; !this.abort.signal.aborted;) {
      let applied = 0;
      for (const partition of [...this.held.values()]) {
        try {
          applied += await this.receiveFor(partition);
        } catch (error) {
          this.log(`task hub: reading partition ${partition.key}'s messages failed: ${(error as Error).message}`);
        }
      }
      // An idle hub costs a read per partition and second at most; a busy one is read often.
      wait = applied > 0 ? this.timing.pollMs : Math.min(wait * 2, this.timing.idlePollMs);
      await this.pause(wait);
    }
  }

  /**
   * Applies what was sent to `id`'s partition so far, when this host runs it: a client's request
   * applied here then comes after those sent before it through other hosts (a start, then a
   * terminate), as the partition's queue orders them on Azure.
   */
  async caughtUp(id: string): Promise<void> {
    const partition = this.held.get(this.partitionKeyOf(id));
    if (partition) await untilAnswered(() => this.receiveFor(partition), CLIENT_ATTEMPTS);
  }

  /** Applies the partition's messages not applied yet; how many. */
  private receiveFor(partition: Partition): Promise<number> {
    const read = partition.receiving.then(() => this.receiveNow(partition));
    partition.receiving = read.then(
      () => undefined,
      () => undefined,
    );
    return read;
  }

  private async receiveNow(partition: Partition): Promise<number> {
    const { scheduler, store } = partition;
    if (!scheduler || !store) return 0;
    let applied = 0;
    const query = { query: "SELECT * FROM c WHERE c.kind = 'message'" };
    const { resources } = await untraced(() => this.hub().items.query<MessageDocument>(query, { partitionKey: partition.key }).fetchAll());
    resources.sort((a, b) => a.sentAt.localeCompare(b.sentAt) || a.id.localeCompare(b.id));
    for (const document of resources) {
      if (store.lost || partition.seen.has(document.id)) continue;
      partition.seen.add(document.id);
      await this.apply(scheduler, document);
      store.applied(document.id);
      applied++;
    }
    return applied;
  }

  private async apply(scheduler: InstanceScheduler, { id, message, sentAt }: MessageDocument): Promise<void> {
    if (message.op === "entity") return scheduler.entities.enqueue(message.entityId, message.request);
    // Marked on the record before it is applied: the save that records its effect records that it was applied.
    const record = scheduler.records.get(message.instanceId);
    if (record) {
      if (record.received?.includes(id)) return;
      record.received = [...(record.received ?? []), id].slice(-REMEMBERED_MESSAGES);
    }
    try {
      if (message.op === "deliver") scheduler.deliverTo(message.instanceId, message.executionId, message.event);
      else if (message.op === "create" && message.parent)
        scheduler.createChild(message.name, message.instanceId, message.input, message.parent, message.traceParent);
      else await this.applyClient(scheduler, message as ClientMessage, sentAt);
    } catch (error) {
      // A request its instance refuses now (a start of one that runs, an event for one that ended): the sender was answered already.
      this.log(`task hub: ${message.op} for ${message.instanceId} not applied: ${(error as Error).message}`);
    }
  }
}
