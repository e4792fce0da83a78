import type { JsonObject } from "../wire/json";

/** What every item of one container shares: how its system links are spelled. */
export interface Links {
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
export class StoredItem {
  expiresAt?: number;
  /** Its `_rid`, made on first use (base64 of 16 bytes: worth keeping). */
  private madeRid?: string;
  /** Its index terms under the container's indexing policy, counted once (for the cost model); cleared when the policy changes. */
  indexTerms?: number;

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

  rid(): string {
    return (this.madeRid ??= this.links.rid(this.seq));
  }

  /** The document as the service returns it: its own properties, then the system properties. */
  doc(): JsonObject {
    const doc = JSON.parse(this.json) as JsonObject;
    doc._rid = this.rid();
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
