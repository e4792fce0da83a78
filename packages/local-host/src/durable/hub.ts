import { createHash } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { Container, Database } from "@azure/cosmos";
import { cosmosStatus } from "../change-feed/cosmos-failures";
import { LeaseSightings, shareToTake } from "../fair-share";
import { untraced } from "../telemetry";
import type { EntityRecord } from "./entities";
import {
  CLIENT_ATTEMPTS,
  createIfAbsent,
  messageDocument,
  PartitionStore,
  recordId,
  untilAnswered,
  type ClientMessage,
  type HubMessage,
  type LeaseDocument,
  type MessageDocument,
  type RecordDocument,
} from "./partition-store";
import { InstanceScheduler, type SchedulerOptions, type InstanceRouter } from "./scheduler";
import type { InstanceRecord } from "./store";

export type { ClientMessage, HubMessage } from "./partition-store";

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
 *
 * Longer than most files for a reason: its three loops (leases, messages, a client's reads)
 * share one map of the partitions held and each changes what the others see; the records'
 * writing is apart, in partition-store.ts.
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

/** How the holder applies a client's message: `sentAt` tells a start that was already applied (the instance is newer) from one to apply. */
export type ApplyClientMessage = (scheduler: InstanceScheduler, message: ClientMessage, sentAt: string) => Promise<void>;

/** How many applied message ids an instance remembers. */
const REMEMBERED_MESSAGES = 100;

/** The partition of an instance or entity id, as the provider hashes it to a control queue. */
export const partitionOf = (id: string, partitions: number) => createHash("sha256").update(id).digest().readUInt32BE(0) % partitions;

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
  /** When each lease was first seen as it is, on this host's clock (see LeaseSightings). */
  private readonly sightings = new LeaseSightings();
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
      await untilAnswered(() => createIfAbsent(container, lease));
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
    await untilAnswered(() => createIfAbsent(this.hub(), document), CLIENT_ATTEMPTS);
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
        const { share, free, steal } = shareToTake(leases, new Set(this.held.keys()), this.owner, this.timing.expirationMs, this.sightings);
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
      if (this.held.get(partition.key) === partition) {
        this.held.delete(partition.key);
        this.log(`task hub: partition ${partition.key} let go by ${this.owner}: loading its records failed: ${(error as Error).message}`);
      }
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
