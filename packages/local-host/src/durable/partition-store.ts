import { createHash, randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { Container, JSONObject, OperationInput, OperationResponse } from "@azure/cosmos";
import { cosmosStatus, isTransient } from "../change-feed/cosmos-failures";
import { untraced } from "../telemetry";
import type { EntityRecord, EntityRequest, EntityStore } from "./entities";
import type { TaskAnswer } from "./scheduler";
import type { InstanceRecord, InstanceStore } from "./store";

// What a task hub keeps in its container (hub.ts): the leases, records and messages of its
// partitions, and how the holder of a partition writes them.

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

export interface StoredDocument {
  id: string;
  partition: string;
  kind: "lease" | "instance" | "entity" | "message";
  _etag?: string;
}

export interface LeaseDocument extends StoredDocument {
  kind: "lease";
  owner: string;
  timestamp: string;
}

/** An instance or entity record, as JSON text (read back whole; nothing queries inside it). */
export interface RecordDocument extends StoredDocument {
  kind: "instance" | "entity";
  text: string;
}

export interface MessageDocument extends StoredDocument {
  kind: "message";
  sentAt: string;
  message: HubMessage;
}

/** A document id for a record: the ids an app gives instances may hold characters Cosmos DB ids may not. */
export const recordId = (kind: "instance" | "entity", id: string) => `${kind[0]}-${createHash("sha256").update(id).digest("base64url")}`;

/** How often a client's request (through the HTTP API) tries the account while it is busy or away: about 3 s in all. */
export const CLIENT_ATTEMPTS = 6;

/** `request`, tried again while the account is busy or away (`attempts` in all, a minute by default); anything else it answers is thrown. */
export async function untilAnswered<T>(request: () => Promise<T>, attempts = 30): Promise<T> {
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
export class PartitionStore implements InstanceStore {
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
      await createIfAbsent(this.container, document);
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

/**
 * Creates `document` unless it is there already (409): an attempt that timed out may have
 * arrived after all, and hosts starting together make the same leases.
 */
export async function createIfAbsent(container: Container, document: StoredDocument): Promise<void> {
  await container.items.create(document).catch((error: unknown) => {
    if (cosmosStatus(error) !== 409) throw error;
  });
}

export function messageDocument(partition: string, message: HubMessage): MessageDocument {
  return { id: `m-${randomUUID()}`, partition, kind: "message", sentAt: new Date().toISOString(), message };
}
