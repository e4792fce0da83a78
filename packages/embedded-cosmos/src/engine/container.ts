import { badRequest, conflict, notFound, preconditionFailed } from "../wire/errors";
import { ContainerIndexes } from "../query/indexes";
import { effectivePartitionKey, keyRanges, rangeOf, type KeyRange } from "./partitions";
import { applyPatch } from "./patch";
import { runQuery, type QueryPage } from "../query/query";
import type { ShapedQuery } from "../query/sql-support";
import { systemClock, type Clock } from "./clock";
import { newEtag, secondsOf } from "./system-properties";
import { childRid } from "../wire/resource-ids";
import { isObject, type Json, type JsonObject } from "../wire/json";
import { ChangeLog } from "./change-log";
import { cost } from "../limits/request-units";
import { inScope, itemsOf, type Partition, type Scope } from "./logical-partitions";
import type { ScopeCopy } from "../query/query-thread";

export type { Scope } from "./logical-partitions";
import { checkEtag, checkItemBody, checkNesting, checkPatchCondition } from "./item-rules";
import { StoredItem, type Links, type StoredPut } from "./stored-item";
import { TtlExpiry } from "./ttl";
import { checkUniqueKeys } from "./unique-keys";

export type { StoredPut } from "./stored-item";

export type { QueryPage, QuerySpec } from "../query/query";

export interface PartitionKeyDefinition {
  paths: string[];
  kind?: string;
  version?: number;
}

interface UndoRecord {
  pk: string;
  id: string;
  previous: StoredItem | undefined;
}

export interface ChangePage {
  items: JsonObject[];
  /** The LSN to resume after. */
  lsn: number;
}

/**
 * Everything the service keeps about one container: definition, items by logical partition,
 * indexes, change log, TTL. Longer than most files for a reason: `set` is the one place items
 * change, and it keeps the undo log, indexes, expiry, change log and counts in step; the
 * operations that call it stay beside it. The concepts it uses live in their own modules
 * (stored-item, change-log, ttl, unique-keys, item-rules, logical-partitions).
 */
export class Container {
  private readonly partitions = new Map<string, Partition>();
  /** The physical partitions: each a key range with its own LSNs and its own change log. */
  readonly ranges: KeyRange[];
  private readonly changeLog: ChangeLog;
  private readonly ttl: TtlExpiry;
  private seq = 0;
  private liveCount = 0;
  private undo: UndoRecord[] | undefined;
  private readonly indexes: ContainerIndexes<StoredItem>;
  private readonly links: Links;
  /** Told about every committed transaction that changed items (the data directory's journal, the account's item watchers). */
  journal?: (puts: StoredPut[]) => void;

  constructor(
    private definition: JsonObject,
    private readonly dbRid: string,
    partitionCount = 1,
    private readonly clock: Clock = systemClock,
  ) {
    this.ranges = keyRanges(partitionCount);
    this.changeLog = new ChangeLog(this.ranges.length, (item) => this.item(item.pk, item.id) === item);
    this.ttl = new TtlExpiry(() => secondsOf(clock));
    this.indexes = new ContainerIndexes(definition.indexingPolicy as JsonObject, () => this.allItems());
    const collection = definition._rid as string;
    // A document `_rid`: the container's resource id, then its insertion ordinal (wire/resource-ids.ts),
    // a number the .NET SDK compares to order ORDER BY's ties.
    this.links = {
      rid: (seq) => childRid(collection, "document", BigInt(seq)),
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
    for (const item of this.allItems()) item.indexTerms = undefined;
  }

  get id(): string {
    return this.definition.id as string;
  }

  get partitionKey(): PartitionKeyDefinition {
    return this.definition.partitionKey as unknown as PartitionKeyDefinition;
  }

  /** The latest LSN of one key range. */
  currentLsn(range: number): number {
    return this.changeLog.currentLsn(range);
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
    const logMark = this.changeLog.mark();
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
      this.changeLog.rollback(logMark);
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
      this.changeLog.loaded(this.rangeOfKey(pk), lsn);
      this.seq = Math.max(this.seq, seq);
    }
  }

  /** After loading: the change logs in LSN order, and the counters at least where they were. */
  finishLoading(counters: { lsns?: number[]; seq?: number } = {}): void {
    this.seq = Math.max(this.seq, counters.seq ?? 0);
    const stored = [...this.partitions.values()].flatMap((partition) => [...partition.items.values()].map((item) => ({ range: partition.range, item })));
    this.changeLog.rebuild(stored, counters.lsns);
  }

  /** Everything stored, for a snapshot: counters, then every item in chunks. */
  *snapshot(chunkSize = 500): Generator<{ counters: { lsns: number[]; seq: number } } | { puts: StoredPut[] }> {
    yield { counters: { lsns: this.changeLog.counters(), seq: this.seq } };
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
    const item = this.liveItem(pk, id);
    cost.read(item?.json.length ?? 0);
    return item?.doc();
  }

  create(pk: string, body: JsonObject): JsonObject {
    checkItemBody(body, pk, this.partitionKeyOf(body));
    if (this.liveItem(pk, body.id as string)) throw conflict();
    return this.write(pk, body);
  }

  replace(pk: string, id: string, body: JsonObject, ifMatch?: string): JsonObject {
    checkItemBody(body, pk, this.partitionKeyOf(body));
    if (body.id !== id) throw badRequest("The id in the body does not match the id of the item being replaced.");
    checkEtag(this.existing(pk, id), ifMatch);
    return this.write(pk, body);
  }

  upsert(pk: string, body: JsonObject, ifMatch?: string): { doc: JsonObject; created: boolean } {
    checkItemBody(body, pk, this.partitionKeyOf(body));
    const current = this.liveItem(pk, body.id as string);
    if (current) checkEtag(current, ifMatch);
    else if (ifMatch) throw preconditionFailed();
    return { doc: this.write(pk, body), created: !current };
  }

  delete(pk: string, id: string, ifMatch?: string): JsonObject {
    const current = this.existing(pk, id);
    checkEtag(current, ifMatch);
    this.set(pk, id, undefined);
    cost.write(current.json.length, this.indexTerms(current));
    return current.doc();
  }

  /** Deletes every item of one logical partition (the service does this in the background; here at once). */
  deletePartition(pk: string): number {
    const ids = [...(this.partitions.get(pk)?.items.keys() ?? [])];
    for (const id of ids) {
      const item = this.item(pk, id)!;
      this.set(pk, id, undefined);
      cost.write(item.json.length, this.indexTerms(item));
    }
    return ids.length;
  }

  patch(pk: string, id: string, operations: unknown, condition?: string, ifMatch?: string): JsonObject {
    const current = this.existing(pk, id);
    checkEtag(current, ifMatch);
    const doc = current.doc();
    checkPatchCondition(doc, condition);
    const patched = applyPatch(doc, operations, this.partitionKey.paths);
    checkNesting(patched);
    return this.write(pk, patched);
  }

  /**
   * Runs SQL over a scope: one logical partition (through its own indexes), one key range, or
   * everything (through the container's).
   */
  query(scope: Scope, shaped: ShapedQuery, continuation?: string, maxItemCount = 100, scanPageItems?: number): QueryPage {
    const within = inScope(this.partitions, scope);
    const partition = "pk" in scope ? this.partitions.get(scope.pk) : undefined;
    const size = "pk" in scope ? (partition?.items.size ?? 0) : this.liveCount;
    const view = {
      items: () => itemsOf(this.partitions, (item) => this.isLive(item), scope),
      size,
      contains: (item: StoredItem) => within(item) && this.isLive(item),
      whole: () => itemsOf(this.partitions, (item) => this.isLive(item), { all: true }),
    };
    const indexes = partition
      ? (partition.indexes ??= new ContainerIndexes(this.definition.indexingPolicy as JsonObject, () => partition.items.values()))
      : "pk" in scope
        ? undefined
        : this.indexes;
    const page = runQuery(view, indexes, shaped, continuation, maxItemCount, scanPageItems);
    cost.query(page.retrieved, page.indexHits, JSON.stringify(page.items).length);
    return page;
  }

  /** A copy of the scope's live items, as stored, for a query evaluated on another thread (QueryThread). */
  scopeCopy(scope: Scope): ScopeCopy {
    const items = itemsOf(this.partitions, (item) => this.isLive(item), scope).map((item) => ({ put: item.stored(), rid: item.rid() }));
    return { items, docsSelf: this.links.docsSelf };
  }

  /**
   * Latest version of each item of the scope (a logical partition, or a key range: LSNs are
   * per range) changed after `afterLsn`, in LSN order, at most `max` items.
   */
  changes(scope: { pk: string } | { range: number; minEpk?: string; maxEpk?: string }, afterLsn: number, max: number, sinceTs = 0): ChangePage {
    const candidates = "pk" in scope ? this.partitionAfter(scope.pk, afterLsn) : this.changeLog.after(scope.range, afterLsn);
    const within = inScope(this.partitions, scope);
    const items: JsonObject[] = [];
    let lsn = afterLsn;
    for (const item of candidates) {
      lsn = item.lsn;
      if (!this.isLive(item) || item.ts < sinceTs || !within(item)) continue;
      items.push({ ...item.doc(), _lsn: item.lsn });
      if (items.length >= max) break;
    }
    cost.query(items.length, 0, JSON.stringify(items).length);
    // Nothing returned: stay where we are, so later writes below the scanned LSN are not skipped.
    return { items, lsn: items.length === 0 && "pk" in scope ? afterLsn : lsn };
  }

  /** Removes expired items and compacts the change log; never runs inside a transaction. */
  sweep(): void {
    if (this.undo) return;
    for (const item of this.ttl.expired()) {
      if (this.item(item.pk, item.id) === item) this.set(item.pk, item.id, undefined);
      else this.ttl.forget(item);
    }
    this.changeLog.compact(this.liveCount);
  }

  /** Recomputes expiry after the container's `defaultTtl` changed. */
  refreshTtl(): void {
    for (const item of this.allItems()) this.ttl.track(item, this.definition.defaultTtl);
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

  /** Stamps system properties and stores the document under a new LSN. */
  private write(pk: string, body: JsonObject): JsonObject {
    checkUniqueKeys(this.definition, body, () => itemsOf(this.partitions, (item) => this.isLive(item), { pk }).map((item) => item.doc()));
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
    const item = StoredItem.of(this.links, this.canonical(pk), previous?.id ?? id, doc, this.changeLog.nextLsn(range), seq);
    this.set(pk, id, item);
    this.changeLog.append(range, item);
    cost.write(item.json.length, previous && this.isLive(previous) ? this.changedTerms(previous, item) : this.indexTerms(item));
    return doc;
  }

  /**
   * Index maintenance of a replace: only the terms that differ between the two versions come out
   * or go in (the article's own figures show it: its createComment reads and replaces the post
   * for ~6.7 RU, less than creating that post cost).
   */
  private changedTerms(previous: StoredItem, next: StoredItem): number {
    const counts = new Map<string, number>();
    this.eachTerm(previous, (term) => counts.set(term, (counts.get(term) ?? 0) + 1));
    this.eachTerm(next, (term) => counts.set(term, (counts.get(term) ?? 0) - 1));
    let changed = 0;
    for (const difference of counts.values()) changed += Math.abs(difference);
    return changed;
  }

  /** How many index terms an item has: its values at the paths the indexing policy covers (counted once per version). */
  private indexTerms(item: StoredItem): number {
    if (item.indexTerms === undefined) {
      item.indexTerms = 0;
      this.eachTerm(item, () => item.indexTerms!++);
    }
    return item.indexTerms;
  }

  /** Each index term of an item: a value at a path the indexing policy covers, as `path=value`. */
  private eachTerm(item: StoredItem, visit: (term: string) => void): void {
    const walk = (value: unknown, path: string[]) => {
      if (Array.isArray(value)) value.forEach((element) => walk(element, [...path, "[]"]));
      else if (value !== null && typeof value === "object") for (const [key, child] of Object.entries(value)) walk(child, [...path, key]);
      else if (this.indexes.covers(path.filter((p) => p !== "[]"))) visit(`${path.join("/")}=${JSON.stringify(value)}`);
    };
    walk(JSON.parse(item.json), []);
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
      this.ttl.track(item, this.definition.defaultTtl);
    } else if (partition) {
      partition.items.delete(id);
      if (partition.items.size === 0) this.partitions.delete(pk);
    }
    if (previous) {
      this.ttl.forget(previous);
      this.changeLog.replaced();
    }
    this.indexes.update({ before: previous, after: item });
    partition?.indexes?.update({ before: previous, after: item });
    this.liveCount += (item ? 1 : 0) - (previous ? 1 : 0);
  }

  private isLive(item: StoredItem): boolean {
    return this.ttl.isLive(item);
  }

  private *allItems(): Generator<StoredItem> {
    for (const partition of this.partitions.values()) yield* partition.items.values();
  }

  private partitionAfter(pk: string, afterLsn: number): StoredItem[] {
    const items = [...(this.partitions.get(pk)?.items.values() ?? [])].filter((item) => item.lsn > afterLsn);
    return items.sort((a, b) => a.lsn - b.lsn);
  }
}
