import type { Account, ScriptKind } from "../engine/account";
import type { Container, StoredPut } from "../engine/container";
import type { JsonObject } from "../wire/json";
import type { JournalRecord } from "../engine/account";

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
        case "database":
          account.databases.set((record.resource as JsonObject).id as string, { resource: record.resource as JsonObject, containers: new Map() });
          break;
        case "dropDatabase":
          account.databases.delete(record.id as string);
          break;
        case "container": {
          const resource = record.resource as JsonObject;
          const existing = account.database(db).containers.get(resource.id as string);
          if (existing) existing.data.resource = resource;
          else account.addContainer(db, resource, typeof record.partitions === "number" ? record.partitions : 1);
          break;
        }
        case "dropContainer":
          account.database(db).containers.delete(record.id as string);
          break;
        case "script":
          account
            .container(db, record.container as string)
            .scripts[record.kind as ScriptKind].set((record.resource as JsonObject).id as string, record.resource as JsonObject);
          break;
        case "dropScript":
          account.container(db, record.container as string).scripts[record.kind as ScriptKind].delete(record.id as string);
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
        }
      }
    },
  };
}

/** The whole account as journal records: what a snapshot holds. */
export function* accountRecords(account: Account): Generator<JournalRecord> {
  for (const [dbId, db] of account.databases) {
    yield { op: "database", resource: db.resource };
    for (const [id, state] of db.containers) {
      yield { op: "container", db: dbId, resource: state.data.resource, partitions: state.data.ranges.length };
      for (const kind of ["sprocs", "triggers"] as const)
        for (const resource of state.scripts[kind].values()) yield { op: "script", db: dbId, container: id, kind, resource };
      for (const part of state.data.snapshot())
        yield "counters" in part
          ? { op: "counters", db: dbId, container: id, counters: part.counters }
          : { op: "items", db: dbId, container: id, puts: part.puts };
    }
  }
}
