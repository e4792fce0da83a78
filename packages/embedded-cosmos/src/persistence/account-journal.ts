import { SCRIPT_KINDS, SCRIPT_RID_KIND, type Account, type ScriptKind } from "../engine/account";
import type { Container, StoredPut } from "../engine/container";
import type { JsonObject } from "../wire/json";
import type { JournalRecord } from "../engine/account";
import { collectionRid, databaseRid, isChildOf, newChildRid, ridLevel } from "../wire/resource-ids";
import { DEFAULT_THROUGHPUT } from "../engine/offers";

// The account as the data directory keeps it: the journal records every change is written as,
// the records a snapshot holds, and the account rebuilt from them on start.

/**
 * Rebuilds the account from journal records (snapshot first, then the journal): `apply` each
 * record as it is read, then `finish` once all are in.
 */
export function accountLoader(account: Account): { apply(record: JournalRecord): void; finish(): void } {
  const counters = new Map<Container, { lsns?: number[]; seq?: number }>();
  return {
    apply: (record) => {
      const db = record.db as string;
      switch (record.op) {
        case "database": {
          const resource = wellFormed(record.resource as JsonObject, "database");
          account.databases.set(resource.id as string, { resource, containers: new Map() });
          break;
        }
        case "dropDatabase":
          account.databases.delete(record.id as string);
          break;
        case "container": {
          const resource = wellFormed(record.resource as JsonObject, "collection", account.database(db).resource);
          const existing = account.database(db).containers.get(resource.id as string);
          if (existing) existing.data.resource = resource;
          else account.addContainer(db, resource, typeof record.partitions === "number" ? record.partitions : 1);
          break;
        }
        case "dropContainer":
          account.database(db).containers.delete(record.id as string);
          break;
        case "script": {
          const state = account.container(db, record.container as string);
          const kind = record.kind as ScriptKind;
          state.scripts[kind].set((record.resource as JsonObject).id as string, wellFormed(record.resource as JsonObject, kind, state.data.resource));
          break;
        }
        case "dropScript":
          account.container(db, record.container as string).scripts[record.kind as ScriptKind].delete(record.id as string);
          break;
        case "offer":
          account.offers.load(record.resource as JsonObject);
          break;
        case "dropOffer":
          account.offers.remove(record.rid as string);
          break;
        case "counters":
          counters.set(account.container(db, record.container as string).data, record.counters as { lsns: number[]; seq: number });
          break;
        case "items":
          account.container(db, record.container as string).data.load(record.puts as StoredPut[]);
          break;
      }
    },
    finish: () => {
      for (const database of account.databases.values()) {
        for (const { data } of database.containers.values()) {
          data.finishLoading(counters.get(data));
          data.refreshTtl();
          // Data from before offers were kept: the default throughput, under an id derived from the container's.
          if (!account.offers.ofContainer(data.resource._rid as string)) account.offers.create(data.resource, DEFAULT_THROUGHPUT, data.resource._rid as string);
        }
      }
    },
  };
}

/**
 * A resource of a data directory written before resource ids had Cosmos DB's shape (6 random
 * bytes) gets a well-formed id under its parent's, derived from the old one, so it is the same
 * on every load until a snapshot writes it; its documents' ids follow from its own.
 */
function wellFormed(resource: JsonObject, level: "database" | "collection" | ScriptKind, parent?: JsonObject): JsonObject {
  const rid = resource._rid as string;
  const parentRid = parent?._rid as string | undefined;
  const expected = level === "database" || level === "collection" ? level : SCRIPT_RID_KIND[level];
  if (ridLevel(rid) === expected && (parentRid === undefined || isChildOf(rid, parentRid))) return resource;
  const next =
    level === "database"
      ? databaseRid(rid)
      : level === "collection"
        ? collectionRid(parentRid!, rid)
        : newChildRid(parentRid!, expected as (typeof SCRIPT_RID_KIND)[ScriptKind], rid);
  const parentSelf = (parent?._self as string | undefined) ?? "";
  const self = level === "database" ? `dbs/${next}/` : `${parentSelf}${level === "collection" ? "colls" : level}/${next}/`;
  return { ...resource, _rid: next, _self: self };
}

/** The whole account as journal records: what a snapshot holds. */
export function* accountRecords(account: Account): Generator<JournalRecord> {
  for (const offer of account.offers.list()) yield { op: "offer", resource: offer };
  for (const [dbId, db] of account.databases) {
    yield { op: "database", resource: db.resource };
    for (const [id, state] of db.containers) {
      yield { op: "container", db: dbId, resource: state.data.resource, partitions: state.data.ranges.length };
      for (const kind of SCRIPT_KINDS) for (const resource of state.scripts[kind].values()) yield { op: "script", db: dbId, container: id, kind, resource };
      for (const part of state.data.snapshot())
        yield "counters" in part
          ? { op: "counters", db: dbId, container: id, counters: part.counters }
          : { op: "items", db: dbId, container: id, puts: part.puts };
    }
  }
}
