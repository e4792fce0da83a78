import { badRequest, conflict, notFound, preconditionFailed } from "./errors";
import { ContainerIndexes } from "./indexes";
import { effectivePartitionKey, keyRanges, rangeOf, type KeyRange } from "./partitions";
import { applyPatch } from "./patch";
import { runQuery, satisfies, type QueryPage, type QuerySpec } from "./query";
import { systemClock, type Clock } from "../clock";
import { checkId, newEtag, secondsOf } from "./system-properties";
import { isObject, type Json, type JsonObject } from "./json";

export type { QueryPage, QuerySpec } from "./query";

export interface PartitionKeyDefinition {
  paths: string[];
  kind?: string;
  version?: number;
}

/** Replaced versions the change log may hold before it is compacted (each compaction is one pass over it). */
const SUPERSEDED_BEFORE_COMPACTION = 10_000;

/** What every item of one container shares: how its system links are spelled. */
interface Links {
  /** The `_rid` of the item with ordinal `seq`. */
  rid(seq: number): string;
  /** `dbs/<db rid>/colls/<coll rid>/docs/`. */
  docsSelf: string;
}

const SYSTEM_FIELDS = new Set(["_rid", "_self", "_etag", "_attachments", "_ts"]);

/**
 * A stored item: its document as JSON text without the system properties (a fraction of the
 * memory of the parsed object; those are kept as fields or derived), parsed when read; the
 * log sequence number of its last write, and its insertion ordinal.
 */
class StoredItem {
  expiresAt?: number;

  constructor(
    private readonly links: Links,
    readonly pk: string,
    readonly id: string,
    readonly json: string,
    readonly lsn: number,
    /** Assigned on the item's first write and kept by updates: the order of `_rid`, in which scans return items. */
    readonly seq: number,
    readonly etag: string,
    readonly ts: number,
    readonly ttl: number | undefined,
  ) {}

  static of(links: Links, pk: string, id: string, doc: JsonObject, lsn: number, seq: number): StoredItem {
    const json = JSON.stringify(doc, (key, value: unknown) => (SYSTEM_FIELDS.has(key) ? undefined : value));
    return new StoredItem(links, pk, id, json, lsn, seq, doc._etag as string, doc._ts as number, typeof doc.ttl === "number" ? doc.ttl : undefined);
  }

  /** The item as the journal records it. */
  stored(): StoredPut {
    return [this.pk, this.id, this.json, this.lsn, this.seq, this.etag, this.ts, this.ttl];
  }

  /** The document as the service returns it: its own properties, then the system properties. */
  doc(): JsonObject {
    const doc = JSON.parse(this.json) as JsonObject;
    doc._rid = this.links.rid(this.seq);
    doc._self = `${this.links.docsSelf}${doc._rid}/`;
    doc._etag = this.etag;
    doc._attachments = "attachments/";
    doc._ts = this.ts;
    return doc;
  }
}

/**
 * One item's state after a committed transaction, as the journal records it: [pk, id, the
 * stored JSON text (null once deleted), lsn, seq, etag, ts, ttl]. The text is journaled as
 * stored, so a write is serialized once.
 */
export type StoredPut = [string, string, string | null, number, number, string?, number?, number?];

interface UndoRecord {
  pk: string;
  id: string;
  previous: StoredItem | undefined;
}

/** One logical partition: its key (one string shared by all its items), where it lives, and its items by id. */
interface Partition {
  pk: string;
  epk: string;
  /** The physical partition (key range) holding it. */
  range: number;
  items: Map<string, StoredItem>;
  /** Its own indexes, built when a query of this partition first needs them (Azure's index lookups are scoped by key too). */
  indexes?: ContainerIndexes<StoredItem>;
}

/** Which items a query or change feed read covers: one logical partition, one key range (optionally narrowed by EPKs), or all. */
export type Scope = { pk: string } | { range: number; minEpk?: string; maxEpk?: string } | { all: true };

export interface ChangePage {
  items: JsonObject[];
  /** The LSN to resume after. */
  lsn: number;
}

/** Everything the service keeps about one container: definition, items by logical partition, indexes, change log. */
export class Container {
  private readonly partitions = new Map<string, Partition>();
  /** The physical partitions: each a key range with its own LSNs and its own change log. */
  readonly ranges: KeyRange[];
  /** Per range, append-only change log in LSN order; items superseded by a later write are skipped when read. */
  private logs: StoredItem[][];
  private lsns: number[];
  private seq = 0;
  private liveCount = 0;
  /** Versions replaced since the change log was last compacted: each still holds its whole text there. */
  private superseded = 0;
  private readonly expiring = new Set<StoredItem>();
  private undo: UndoRecord[] | undefined;
  private readonly indexes: ContainerIndexes<StoredItem>;
  private readonly links: Links;
  /** Told about every committed transaction that changed items (the data directory's journal). */
  journal?: (puts: StoredPut[]) => void;

  constructor(
    private definition: JsonObject,
    private readonly dbRid: string,
    partitionCount = 1,
    private readonly clock: Clock = systemClock,
  ) {
    this.ranges = keyRanges(partitionCount);
    this.logs = this.ranges.map(() => []);
    this.lsns = this.ranges.map(() => 0);
    this.indexes = new ContainerIndexes(definition.indexingPolicy as JsonObject, () => this.allItems());
    const ridPrefix = Buffer.from(definition._rid as string, "base64")
      .subarray(0, 4)
      .toString("hex")
      .toUpperCase();
    // A document `_rid`: the container's resource id, then the ordinal in fixed-width hex, so `_rid` order is insertion order.
    this.links = {
      rid: (seq) => `${ridPrefix}${seq.toString(16).toUpperCase().padStart(12, "0")}`,
      docsSelf: `dbs/${dbRid}/colls/${definition._rid as string}/docs/`,
    };
  }

  get resource(): JsonObject {
    return this.definition;
  }

  /** A new definition (indexing, TTL): indexes are rebuilt under the new policy when next needed. */
  set resource(resource: JsonObject) {
    this.definition = resource;
    this.indexes.setPolicy(resource.indexingPolicy as JsonObject);
    for (const partition of this.partitions.values()) partition.indexes = undefined;
  }

  get id(): string {
    return this.definition.id as string;
  }

  get partitionKey(): PartitionKeyDefinition {
    return this.definition.partitionKey as unknown as PartitionKeyDefinition;
  }

  /** The latest LSN of one key range. */
  currentLsn(range: number): number {
    return this.lsns[range];
  }

  /** The key range a logical partition key belongs to. */
  rangeOfKey(pk: string): number {
    return this.partitions.get(pk)?.range ?? rangeOf(this.ranges, this.epkOf(pk));
  }

  private epkOf(pk: string): string {
    return effectivePartitionKey(JSON.parse(pk) as Json[], this.partitionKey.kind);
  }

  /** The logical partition key of a document, serialized as the SDK's header carries it. */
  partitionKeyOf(doc: JsonObject): string {
    const values = this.partitionKey.paths.map((path) => {
      let node: Json | undefined = doc;
      for (const part of path.slice(1).split("/")) node = isObject(node) ? node[part] : undefined;
      return node === undefined ? {} : node;
    });
    return JSON.stringify(values);
  }

  /** Runs `work` atomically: if it throws, every write it made is undone. Nested calls join the outer one. */
  transaction<T>(work: () => T): T {
    if (this.undo) return work();
    this.undo = [];
    const logLengths = this.logs.map((log) => log.length);
    try {
      const result = work();
      const records = this.undo;
      this.undo = undefined;
      if (this.journal && records.length > 0) this.journal(this.committed(records));
      return result;
    } catch (error) {
      const records = this.undo ?? [];
      this.undo = undefined;
      for (const record of records.reverse()) this.set(record.pk, record.id, record.previous);
      this.logs.forEach((log, range) => (log.length = logLengths[range]));
      throw error;
    }
  }

  /** The final state of every item a transaction touched. */
  private committed(records: UndoRecord[]): StoredPut[] {
    const touched = new Map(records.map((r) => [`${r.pk}\u0000${r.id}`, r]));
    return [...touched.values()].map(({ pk, id }) => {
      const item = this.item(pk, id);
      return item ? item.stored() : [pk, id, null, 0, 0];
    });
  }

  /** Applies journaled item states (on start, from the data directory), keeping the LSN and ordinal counters ahead of them. */
  load(puts: StoredPut[]): void {
    for (const [pk, id, json, lsn, seq, etag, ts, ttl] of puts) {
      this.set(pk, id, json === null ? undefined : new StoredItem(this.links, this.canonical(pk), id, json, lsn, seq, etag!, ts!, ttl));
      const range = this.rangeOfKey(pk);
      this.lsns[range] = Math.max(this.lsns[range], lsn);
      this.seq = Math.max(this.seq, seq);
    }
  }

  /** After loading: the change logs in LSN order, and the counters at least where they were. */
  finishLoading(counters: { lsns?: number[]; seq?: number } = {}): void {
    this.lsns = this.lsns.map((lsn, range) => Math.max(lsn, counters.lsns?.[range] ?? 0));
    this.seq = Math.max(this.seq, counters.seq ?? 0);
    this.logs = this.ranges.map(() => []);
    for (const partition of this.partitions.values()) this.logs[partition.range].push(...partition.items.values());
    for (const log of this.logs) log.sort((a, b) => a.lsn - b.lsn);
  }

  /** Everything stored, for a snapshot: counters, then every item in chunks. */
  *snapshot(chunkSize = 500): Generator<{ counters: { lsns: number[]; seq: number } } | { puts: StoredPut[] }> {
    yield { counters: { lsns: [...this.lsns], seq: this.seq } };
    let puts: StoredPut[] = [];
    for (const { items } of this.partitions.values()) {
      for (const item of items.values()) {
        puts.push(item.stored());
        if (puts.length >= chunkSize) {
          yield { puts };
          puts = [];
        }
      }
    }
    if (puts.length > 0) yield { puts };
  }

  read(pk: string, id: string): JsonObject | undefined {
    return this.liveItem(pk, id)?.doc();
  }

  create(pk: string, body: JsonObject): JsonObject {
    this.validate(pk, body);
    if (this.liveItem(pk, body.id as string)) throw conflict();
    return this.write(pk, body);
  }

  replace(pk: string, id: string, body: JsonObject, ifMatch?: string): JsonObject {
    this.validate(pk, body);
    if (body.id !== id) throw badRequest("The id in the body does not match the id of the item being replaced.");
    this.checkEtag(this.existing(pk, id), ifMatch);
    return this.write(pk, body);
  }

  upsert(pk: string, body: JsonObject, ifMatch?: string): { doc: JsonObject; created: boolean } {
    this.validate(pk, body);
    const current = this.liveItem(pk, body.id as string);
    if (current) this.checkEtag(current, ifMatch);
    else if (ifMatch) throw preconditionFailed();
    return { doc: this.write(pk, body), created: !current };
  }

  delete(pk: string, id: string, ifMatch?: string): JsonObject {
    const current = this.existing(pk, id);
    this.checkEtag(current, ifMatch);
    this.set(pk, id, undefined);
    return current.doc();
  }

  /** Deletes every item of one logical partition (the service does this in the background; here at once). */
  deletePartition(pk: string): number {
    const ids = [...(this.partitions.get(pk)?.items.keys() ?? [])];
    for (const id of ids) this.set(pk, id, undefined);
    return ids.length;
  }

  patch(pk: string, id: string, operations: unknown, condition?: string, ifMatch?: string): JsonObject {
    const current = this.existing(pk, id);
    this.checkEtag(current, ifMatch);
    const doc = current.doc();
    if (condition !== undefined && !this.matchesCondition(doc, condition)) throw preconditionFailed();
    return this.write(pk, applyPatch(doc, operations, this.partitionKey.paths));
  }

  /**
   * Runs SQL over a scope: one logical partition (through its own indexes), one key range, or
   * everything (through the container's).
   */
  query(scope: Scope, spec: QuerySpec, continuation?: string, maxItemCount = 100, scanPageItems?: number): QueryPage {
    const inScope = this.inScope(scope);
    const partition = "pk" in scope ? this.partitions.get(scope.pk) : undefined;
    const size = "pk" in scope ? (partition?.items.size ?? 0) : this.liveCount;
    const view = { items: () => this.liveItems(scope), size, contains: (item: StoredItem) => inScope(item) && this.isLive(item) };
    const indexes = partition
      ? (partition.indexes ??= new ContainerIndexes(this.definition.indexingPolicy as JsonObject, () => partition.items.values()))
      : "pk" in scope
        ? undefined
        : this.indexes;
    return runQuery(view, indexes, spec, continuation, maxItemCount, scanPageItems);
  }

  /** Whether an item lies in the scope. */
  private inScope(scope: Scope): (item: StoredItem) => boolean {
    if ("pk" in scope) return (item) => item.pk === scope.pk;
    if ("all" in scope) return () => true;
    return (item) => {
      const partition = this.partitions.get(item.pk);
      return (
        partition !== undefined &&
        partition.range === scope.range &&
        (scope.minEpk === undefined || partition.epk >= scope.minEpk) &&
        (scope.maxEpk === undefined || partition.epk < scope.maxEpk)
      );
    };
  }

  /**
   * Latest version of each item of the scope (a logical partition, or a key range: LSNs are
   * per range) changed after `afterLsn`, in LSN order, at most `max` items.
   */
  changes(scope: { pk: string } | { range: number; minEpk?: string; maxEpk?: string }, afterLsn: number, max: number, sinceTs = 0): ChangePage {
    const candidates = "pk" in scope ? this.partitionAfter(scope.pk, afterLsn) : this.logAfter(scope.range, afterLsn);
    const inScope = this.inScope(scope);
    const items: JsonObject[] = [];
    let lsn = afterLsn;
    for (const item of candidates) {
      lsn = item.lsn;
      if (!this.isLive(item) || item.ts < sinceTs || !inScope(item)) continue;
      items.push({ ...item.doc(), _lsn: item.lsn });
      if (items.length >= max) break;
    }
    // Nothing returned: stay where we are, so later writes below the scanned LSN are not skipped.
    return { items, lsn: items.length === 0 && "pk" in scope ? afterLsn : lsn };
  }

  /** Removes expired items and compacts the change log; never runs inside a transaction. */
  sweep(): void {
    if (this.undo) return;
    const now = secondsOf(this.clock);
    for (const item of this.expiring) {
      if (item.expiresAt === undefined) this.expiring.delete(item);
      else if (item.expiresAt <= now) {
        if (this.item(item.pk, item.id) === item) this.set(item.pk, item.id, undefined);
        else this.expiring.delete(item);
      }
    }
    // The change feed serves latest versions only: replaced ones are dropped once they add up to
    // SUPERSEDED_BEFORE_COMPACTION (a hot post's every counter change is a full copy of its text).
    if (this.superseded > SUPERSEDED_BEFORE_COMPACTION || this.logs.reduce((n, log) => n + log.length, 0) > 2 * this.liveCount + 1000) {
      this.logs = this.logs.map((log) => log.filter((item) => this.item(item.pk, item.id) === item));
      this.superseded = 0;
    }
  }

  /** Recomputes expiry after the container's `defaultTtl` changed. */
  refreshTtl(): void {
    for (const item of this.allItems()) this.trackExpiry(item);
  }

  private item(pk: string, id: string): StoredItem | undefined {
    return this.partitions.get(pk)?.items.get(id);
  }

  private liveItem(pk: string, id: string): StoredItem | undefined {
    const item = this.item(pk, id);
    return item && this.isLive(item) ? item : undefined;
  }

  /** The one string instance every item of a partition shares as its key. */
  private canonical(pk: string): string {
    return this.partitions.get(pk)?.pk ?? pk;
  }

  private existing(pk: string, id: string): StoredItem {
    const item = this.liveItem(pk, id);
    if (!item) throw notFound();
    return item;
  }

  private checkEtag(item: StoredItem, ifMatch?: string): void {
    if (ifMatch && ifMatch !== "*" && ifMatch !== item.etag) throw preconditionFailed();
  }

  private matchesCondition(doc: JsonObject, condition: string): boolean {
    try {
      return satisfies(doc, condition);
    } catch (error) {
      throw badRequest(`Invalid patch condition: ${(error as Error).message}`);
    }
  }

  private validate(pk: string, body: JsonObject): void {
    const idError = checkId(body.id);
    if (idError) throw badRequest(idError);
    if (this.partitionKeyOf(body) !== pk) {
      throw badRequest("PartitionKey extracted from document doesn't match the one specified in the header.");
    }
    if (body.ttl !== undefined && (typeof body.ttl !== "number" || !Number.isInteger(body.ttl) || body.ttl === 0 || body.ttl < -1)) {
      throw badRequest("The value of the 'ttl' property must be a positive integer or -1.");
    }
  }

  /** Stamps system properties and stores the document under a new LSN. */
  private write(pk: string, body: JsonObject): JsonObject {
    this.checkUniqueKeys(pk, body);
    const id = body.id as string;
    const previous = this.item(pk, id);
    const seq = previous?.seq ?? ++this.seq;
    const rid = this.links.rid(seq);
    const doc: JsonObject = {
      ...body,
      _rid: rid,
      _self: `${this.links.docsSelf}${rid}/`,
      _etag: newEtag(),
      _attachments: "attachments/",
      _ts: secondsOf(this.clock),
    };
    const range = this.rangeOfKey(pk);
    const item = StoredItem.of(this.links, this.canonical(pk), previous?.id ?? id, doc, ++this.lsns[range], seq);
    this.set(pk, id, item);
    this.logs[range].push(item);
    return doc;
  }

  private checkUniqueKeys(pk: string, body: JsonObject): void {
    const uniqueKeys = (this.definition.uniqueKeyPolicy as { uniqueKeys?: { paths: string[] }[] } | undefined)?.uniqueKeys ?? [];
    if (uniqueKeys.length === 0) return;
    const valueAt = (doc: JsonObject, path: string) => {
      let node: Json | undefined = doc;
      for (const part of path.slice(1).split("/")) node = isObject(node) ? node[part] : undefined;
      return JSON.stringify(node ?? null);
    };
    for (const { paths } of uniqueKeys) {
      const tuple = paths.map((p) => valueAt(body, p)).join("\u0000");
      for (const other of this.liveItems({ pk }).map((item) => item.doc())) {
        if (other.id !== body.id && paths.map((p) => valueAt(other, p)).join("\u0000") === tuple) {
          throw conflict("Unique index constraint violation.");
        }
      }
    }
  }

  /** The only place items change: records the undo step, and keeps counts, indexes and expiry in step. */
  private set(pk: string, id: string, item: StoredItem | undefined): void {
    let partition = this.partitions.get(pk);
    const previous = partition?.items.get(id);
    this.undo?.push({ pk, id, previous });
    if (item) {
      if (!partition) {
        const epk = this.epkOf(item.pk);
        this.partitions.set(item.pk, (partition = { pk: item.pk, epk, range: rangeOf(this.ranges, epk), items: new Map() }));
      }
      partition.items.set(item.id, item);
      this.trackExpiry(item);
    } else if (partition) {
      partition.items.delete(id);
      if (partition.items.size === 0) this.partitions.delete(pk);
    }
    if (previous) {
      this.expiring.delete(previous);
      this.superseded++;
    }
    this.indexes.update({ before: previous, after: item });
    partition?.indexes?.update({ before: previous, after: item });
    this.liveCount += (item ? 1 : 0) - (previous ? 1 : 0);
  }

  private trackExpiry(item: StoredItem): void {
    const defaultTtl = this.definition.defaultTtl;
    const ttl = typeof defaultTtl !== "number" ? -1 : (item.ttl ?? defaultTtl);
    if (ttl > 0) {
      item.expiresAt = item.ts + ttl;
      this.expiring.add(item);
    } else {
      item.expiresAt = undefined;
      this.expiring.delete(item);
    }
  }

  private isLive(item: StoredItem): boolean {
    return item.expiresAt === undefined || item.expiresAt > secondsOf(this.clock);
  }

  private *allItems(): Generator<StoredItem> {
    for (const partition of this.partitions.values()) yield* partition.items.values();
  }

  /** Live items of a scope, in insertion (`_rid`) order. */
  private liveItems(scope: Scope): StoredItem[] {
    const partitions = "pk" in scope ? [this.partitions.get(scope.pk)].filter((p): p is Partition => p !== undefined) : [...this.partitions.values()];
    const inScope = this.inScope(scope);
    const items: StoredItem[] = [];
    for (const partition of partitions) for (const item of partition.items.values()) if (this.isLive(item) && inScope(item)) items.push(item);
    if (partitions.length > 1) items.sort((a, b) => a.seq - b.seq);
    return items;
  }

  private *logAfter(range: number, afterLsn: number): Generator<StoredItem> {
    const log = this.logs[range];
    let low = 0;
    let high = log.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (log[mid].lsn <= afterLsn) low = mid + 1;
      else high = mid;
    }
    for (let i = low; i < log.length; i++) {
      const item = log[i];
      if (this.item(item.pk, item.id) === item) yield item;
    }
  }

  private partitionAfter(pk: string, afterLsn: number): StoredItem[] {
    const items = [...(this.partitions.get(pk)?.items.values() ?? [])].filter((item) => item.lsn > afterLsn);
    return items.sort((a, b) => a.lsn - b.lsn);
  }
}
