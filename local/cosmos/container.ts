import query, { SyntaxError as QuerySyntaxError } from "@zeit/cosmosdb-query";
import { equalityFilters, matches } from "./candidates";
import { badRequest, conflict, CosmosError, notFound, preconditionFailed } from "./errors";
import { applyPatch } from "./patch";
import { checkId, isObject, newEtag, nowSeconds, type Json, type JsonObject } from "./resources";

export interface PartitionKeyDefinition {
  paths: string[];
  kind?: string;
  version?: number;
}

/** A stored item: the document the client sees, the log sequence number of its last write, and its insertion order. */
interface Entry {
  doc: JsonObject;
  lsn: number;
  /** Assigned on the item's first write and kept by updates: the order of `_rid`, in which scans return items. */
  seq: number;
  expiresAt?: number;
}

/** One item's state after a committed transaction, as the journal records it: [pk, id, document or null, lsn, seq]. */
export type StoredPut = [string, string, JsonObject | null, number, number];

interface UndoRecord {
  pk: string;
  id: string;
  previous: Entry | undefined;
}

export interface QueryPage {
  items: Json[];
  continuation?: string;
  /** How many stored items the query had to read: the SDK's `retrievedDocumentCount`. */
  retrieved: number;
}

export interface ChangePage {
  items: JsonObject[];
  /** The LSN to resume after. */
  lsn: number;
}

export interface QuerySpec {
  query: string;
  parameters?: { name: string; value: Json }[];
}

type Query = ReturnType<typeof query>;

/** The continuation tokens the query engine issues (`+RID:...#RT:n#TRC:n[#RTD:...]`); anything else is a client error. */
const CONTINUATION = /^\+RID:[^#]*#RT:\d+(#SRC:\d+)?#TRC:\d+(#RTD:[A-Za-z0-9+/=]*)?$/;
const parsedQueries = new Map<string, Query>();

/** Parsed queries, cached: the same few queries run over and over. */
function compiled(sql: string): Query {
  let parsed = parsedQueries.get(sql);
  if (!parsed) {
    parsed = query(sql); // parses at once: a syntax error surfaces here
    if (parsedQueries.size >= 1000) parsedQueries.delete(parsedQueries.keys().next().value as string);
    parsedQueries.set(sql, parsed);
  }
  return parsed;
}

/** Everything the service keeps about one container: definition, items by logical partition, change log. */
export class Container {
  private readonly partitions = new Map<string, Map<string, Entry>>();
  /** Append-only change log in LSN order; entries superseded by a later write are skipped when read. */
  private log: { lsn: number; pk: string; id: string }[] = [];
  private lsn = 0;
  private seq = 0;
  private liveCount = 0;
  private readonly expiring = new Set<string>();
  private undo: UndoRecord[] | undefined;
  /** Told about every committed transaction that changed items (the data directory's journal). */
  journal?: (puts: StoredPut[]) => void;

  constructor(
    public resource: JsonObject,
    private readonly dbRid: string,
  ) {}

  get id(): string {
    return this.resource.id as string;
  }

  get partitionKey(): PartitionKeyDefinition {
    return this.resource.partitionKey as unknown as PartitionKeyDefinition;
  }

  get currentLsn(): number {
    return this.lsn;
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
    const logLength = this.log.length;
    try {
      const result = work();
      const records = this.undo;
      this.undo = undefined;
      if (this.journal && records.length > 0) this.journal(this.committed(records));
      return result;
    } catch (error) {
      const records = this.undo ?? [];
      this.undo = undefined;
      for (const record of records.reverse()) this.restore(record);
      this.log.length = logLength;
      throw error;
    }
  }

  /** The final state of every item a transaction touched. */
  private committed(records: UndoRecord[]): StoredPut[] {
    const touched = new Map(records.map((r) => [`${r.pk}\u0000${r.id}`, r]));
    return [...touched.values()].map(({ pk, id }) => {
      const entry = this.partitions.get(pk)?.get(id);
      return [pk, id, entry?.doc ?? null, entry?.lsn ?? 0, entry?.seq ?? 0];
    });
  }

  /** Applies journaled item states (on start, from the data directory), keeping the LSN and ordinal counters ahead of them. */
  load(puts: StoredPut[]): void {
    for (const [pk, id, doc, lsn, seq] of puts) {
      this.put(pk, id, doc ? { doc, lsn, seq } : undefined);
      this.lsn = Math.max(this.lsn, lsn);
      this.seq = Math.max(this.seq, seq);
    }
  }

  /** After loading: the change log in LSN order, and the counters at least where they were. */
  finishLoading(counters: { lsn?: number; seq?: number } = {}): void {
    this.lsn = Math.max(this.lsn, counters.lsn ?? 0);
    this.seq = Math.max(this.seq, counters.seq ?? 0);
    const entries: { lsn: number; pk: string; id: string }[] = [];
    for (const [pk, partition] of this.partitions) for (const [id, entry] of partition) entries.push({ lsn: entry.lsn, pk, id });
    this.log = entries.sort((a, b) => a.lsn - b.lsn);
  }

  /** Everything stored, for a snapshot: counters, then every item in chunks. */
  *snapshot(chunkSize = 500): Generator<{ counters: { lsn: number; seq: number } } | { puts: StoredPut[] }> {
    yield { counters: { lsn: this.lsn, seq: this.seq } };
    let puts: StoredPut[] = [];
    for (const [pk, partition] of this.partitions) {
      for (const [id, entry] of partition) {
        puts.push([pk, id, entry.doc, entry.lsn, entry.seq]);
        if (puts.length >= chunkSize) {
          yield { puts };
          puts = [];
        }
      }
    }
    if (puts.length > 0) yield { puts };
  }

  read(pk: string, id: string): JsonObject | undefined {
    const entry = this.partitions.get(pk)?.get(id);
    return entry && this.isLive(entry) ? entry.doc : undefined;
  }

  create(pk: string, body: JsonObject): JsonObject {
    this.validate(pk, body);
    if (this.read(pk, body.id as string)) throw conflict();
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
    const current = this.read(pk, body.id as string);
    if (current) this.checkEtag(current, ifMatch);
    else if (ifMatch) throw preconditionFailed();
    return { doc: this.write(pk, body), created: !current };
  }

  delete(pk: string, id: string, ifMatch?: string): JsonObject {
    const current = this.existing(pk, id);
    this.checkEtag(current, ifMatch);
    this.put(pk, id, undefined);
    return current;
  }

  /** Deletes every item of one logical partition (the service does this in the background; here at once). */
  deletePartition(pk: string): number {
    const ids = [...(this.partitions.get(pk)?.keys() ?? [])];
    for (const id of ids) this.put(pk, id, undefined);
    return ids.length;
  }

  patch(pk: string, id: string, operations: unknown, condition?: string, ifMatch?: string): JsonObject {
    const current = this.existing(pk, id);
    this.checkEtag(current, ifMatch);
    if (condition !== undefined && !this.matchesCondition(current, condition)) throw preconditionFailed();
    const patched = applyPatch(current, operations, this.partitionKey.paths);
    return this.write(pk, patched);
  }

  /** Runs SQL over one logical partition (`pk`) or, when `pk` is undefined, over all of them. */
  query(pk: string | undefined, spec: QuerySpec, continuation?: string, maxItemCount = 100): QueryPage {
    if (continuation !== undefined && !CONTINUATION.test(continuation)) throw badRequest("Invalid Continuation Token: the query continuation was not issued for this query.");
    try {
      const parsed = compiled(spec.query);
      const filters = equalityFilters(parsed.ast, spec.parameters ?? []);
      const docs = filters.length > 0 ? this.liveDocs(pk).filter((doc) => matches(doc, filters)) : this.liveDocs(pk);
      const { result, continuation: next } = parsed.exec(docs, {
        parameters: spec.parameters ?? [],
        maxItemCount: maxItemCount > 0 ? maxItemCount : 100,
        continuation: continuation ? { token: continuation } : undefined,
      });
      return { items: result as Json[], continuation: next?.token, retrieved: docs.length };
    } catch (error) {
      if (error instanceof QuerySyntaxError) throw badRequest(`Syntax error, ${error.message}`);
      if (error instanceof CosmosError) throw error;
      throw badRequest(`Query could not be executed: ${(error as Error).message}`);
    }
  }

  /** Latest version of each item changed after `afterLsn`, in LSN order, at most `max` items. */
  changes(pk: string | undefined, afterLsn: number, max: number, sinceTs = 0): ChangePage {
    const candidates = pk === undefined ? this.logAfter(afterLsn) : this.partitionAfter(pk, afterLsn);
    const items: JsonObject[] = [];
    let lsn = afterLsn;
    for (const entry of candidates) {
      lsn = entry.lsn;
      if (!this.isLive(entry) || (entry.doc._ts as number) < sinceTs) continue;
      items.push({ ...entry.doc, _lsn: entry.lsn });
      if (items.length >= max) break;
    }
    // Nothing returned: stay where we are, so later writes below the scanned LSN are not skipped.
    return { items, lsn: items.length === 0 && pk !== undefined ? afterLsn : lsn };
  }

  /** Removes expired items and compacts the change log; never runs inside a transaction. */
  sweep(): void {
    if (this.undo) return;
    const now = nowSeconds();
    for (const key of this.expiring) {
      const [pk, id] = JSON.parse(key) as [string, string];
      const entry = this.partitions.get(pk)?.get(id);
      if (!entry || entry.expiresAt === undefined) this.expiring.delete(key);
      else if (entry.expiresAt <= now) this.put(pk, id, undefined);
    }
    if (this.log.length > 2 * this.liveCount + 1000) {
      this.log = this.log.filter((e) => this.partitions.get(e.pk)?.get(e.id)?.lsn === e.lsn);
    }
  }

  /** Recomputes expiry after the container's `defaultTtl` changed. */
  refreshTtl(): void {
    for (const [pk, partition] of this.partitions) {
      for (const [id, entry] of partition) this.trackExpiry(pk, id, entry);
    }
  }

  private existing(pk: string, id: string): JsonObject {
    const doc = this.read(pk, id);
    if (!doc) throw notFound();
    return doc;
  }

  private checkEtag(doc: JsonObject, ifMatch?: string): void {
    if (ifMatch && ifMatch !== "*" && ifMatch !== doc._etag) throw preconditionFailed();
  }

  private matchesCondition(doc: JsonObject, condition: string): boolean {
    try {
      return query(`SELECT * ${condition}`).exec([doc]).result.length > 0;
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
    const previous = this.partitions.get(pk)?.get(id);
    const seq = previous?.seq ?? ++this.seq;
    const rid = (previous?.doc._rid as string | undefined) ?? this.ridOf(seq);
    const doc: JsonObject = {
      ...body,
      _rid: rid,
      _self: `dbs/${this.dbRid}/colls/${this.resource._rid as string}/docs/${rid}/`,
      _etag: newEtag(),
      _attachments: "attachments/",
      _ts: nowSeconds(),
    };
    this.lsn += 1;
    this.put(pk, id, { doc, lsn: this.lsn, seq });
    this.log.push({ lsn: this.lsn, pk, id });
    return doc;
  }

  private checkUniqueKeys(pk: string, body: JsonObject): void {
    const uniqueKeys = (this.resource.uniqueKeyPolicy as { uniqueKeys?: { paths: string[] }[] } | undefined)?.uniqueKeys ?? [];
    if (uniqueKeys.length === 0) return;
    const valueAt = (doc: JsonObject, path: string) => {
      let node: Json | undefined = doc;
      for (const part of path.slice(1).split("/")) node = isObject(node) ? node[part] : undefined;
      return JSON.stringify(node ?? null);
    };
    for (const { paths } of uniqueKeys) {
      const tuple = paths.map((p) => valueAt(body, p)).join("\u0000");
      for (const other of this.liveDocs(pk)) {
        if (other.id !== body.id && paths.map((p) => valueAt(other, p)).join("\u0000") === tuple) {
          throw conflict("Unique index constraint violation.");
        }
      }
    }
  }

  /** The only place items change: records the undo step and keeps counts and expiry in step. */
  private put(pk: string, id: string, entry: Entry | undefined): void {
    let partition = this.partitions.get(pk);
    const previous = partition?.get(id);
    this.undo?.push({ pk, id, previous });
    if (entry) {
      if (!partition) this.partitions.set(pk, (partition = new Map()));
      partition.set(id, entry);
      this.trackExpiry(pk, id, entry);
    } else if (partition) {
      partition.delete(id);
      if (partition.size === 0) this.partitions.delete(pk);
    }
    this.liveCount += (entry ? 1 : 0) - (previous ? 1 : 0);
  }

  private restore(record: UndoRecord): void {
    const partition = this.partitions.get(record.pk);
    const current = partition?.get(record.id);
    this.liveCount += (record.previous ? 1 : 0) - (current ? 1 : 0);
    if (record.previous) {
      if (!partition) this.partitions.set(record.pk, new Map([[record.id, record.previous]]));
      else partition.set(record.id, record.previous);
      this.trackExpiry(record.pk, record.id, record.previous);
    } else if (partition) {
      partition.delete(record.id);
      if (partition.size === 0) this.partitions.delete(record.pk);
    }
  }

  private trackExpiry(pk: string, id: string, entry: Entry): void {
    const defaultTtl = this.resource.defaultTtl;
    const key = JSON.stringify([pk, id]);
    const ttl = typeof defaultTtl !== "number" ? -1 : typeof entry.doc.ttl === "number" ? entry.doc.ttl : defaultTtl;
    if (ttl > 0) {
      entry.expiresAt = (entry.doc._ts as number) + ttl;
      this.expiring.add(key);
    } else {
      entry.expiresAt = undefined;
      this.expiring.delete(key);
    }
  }

  private isLive(entry: Entry): boolean {
    return entry.expiresAt === undefined || entry.expiresAt > nowSeconds();
  }

  /** Live documents of one logical partition, or of all, in insertion (`_rid`) order. */
  private liveDocs(pk: string | undefined): JsonObject[] {
    const partitions = pk === undefined ? [...this.partitions.values()] : [this.partitions.get(pk) ?? new Map<string, Entry>()];
    const entries: Entry[] = [];
    for (const partition of partitions) for (const entry of partition.values()) if (this.isLive(entry)) entries.push(entry);
    if (partitions.length > 1) entries.sort((a, b) => a.seq - b.seq);
    return entries.map((entry) => entry.doc);
  }

  /**
   * A document `_rid`: the container's resource id, then the document's ordinal, in fixed-width
   * hex so that `_rid` order (which scans and continuations follow) is insertion order.
   */
  private ridOf(seq: number): string {
    return `${Buffer.from(this.resource._rid as string, "base64").subarray(0, 4).toString("hex").toUpperCase()}${seq.toString(16).toUpperCase().padStart(12, "0")}`;
  }


  private *logAfter(afterLsn: number): Generator<Entry> {
    let low = 0;
    let high = this.log.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (this.log[mid].lsn <= afterLsn) low = mid + 1;
      else high = mid;
    }
    for (let i = low; i < this.log.length; i++) {
      const { lsn, pk, id } = this.log[i];
      const entry = this.partitions.get(pk)?.get(id);
      if (entry?.lsn === lsn) yield entry;
    }
  }

  private partitionAfter(pk: string, afterLsn: number): Entry[] {
    const entries = [...(this.partitions.get(pk)?.values() ?? [])].filter((e) => e.lsn > afterLsn);
    return entries.sort((a, b) => a.lsn - b.lsn);
  }
}
