import { Container } from "./container";
import { badRequest, conflict, notFound } from "../wire/errors";
import { systemClock, type Clock } from "./clock";
import { checkId, newEtag, secondsOf, systemProperties } from "./system-properties";
import { collectionRid, databaseRid, newChildRid } from "../wire/resource-ids";
import { DEFAULT_THROUGHPUT, Offers, type Throughput } from "./offers";
import { isObject, type JsonObject } from "../wire/json";
import { checkFullText } from "./full-text-policy";

/** Each kind of script, as its path names it, and the resource id kind of its scripts. */
export const SCRIPT_RID_KIND = { sprocs: "sproc", triggers: "trigger", udfs: "udf" } as const;

export type ScriptKind = keyof typeof SCRIPT_RID_KIND;

export const SCRIPT_KINDS = Object.keys(SCRIPT_RID_KIND) as ScriptKind[];

export const isScriptKind = (kind: string | undefined): kind is ScriptKind => kind !== undefined && Object.hasOwn(SCRIPT_RID_KIND, kind);

export interface Database {
  resource: JsonObject;
  containers: Map<string, ContainerState>;
}

/** A container with its server-side scripts (stored procedures, triggers, user-defined functions). */
export interface ContainerState {
  data: Container;
  scripts: Record<ScriptKind, Map<string, JsonObject>>;
}

// The service compares these case-insensitively (the SDK sends "pre", "all", ...).
const TRIGGER_TYPES = ["pre", "post"];
const TRIGGER_OPERATIONS = ["all", "create", "update", "delete", "replace", "upsert"];

const ETAG_PATH = '/"_etag"/?';

/**
 * An indexing policy as the service stores it: the client's, completed with the defaults it
 * left out (consistent, automatic, everything included) and with `_etag` always excluded.
 */
function completeIndexingPolicy(given: unknown): JsonObject {
  const policy: JsonObject = isObject(given) ? { ...given } : {};
  policy.indexingMode = typeof policy.indexingMode === "string" ? policy.indexingMode.toLowerCase() : "consistent";
  policy.automatic = policy.automatic ?? true;
  const none = policy.indexingMode === "none";
  const included = Array.isArray(policy.includedPaths) ? policy.includedPaths : [];
  policy.includedPaths = none ? [] : included.length > 0 ? included : [{ path: "/*" }];
  const excluded = Array.isArray(policy.excludedPaths) ? policy.excludedPaths : [];
  const hasEtag = excluded.some((p) => isObject(p) && p.path === ETAG_PATH);
  policy.excludedPaths = none || hasEtag ? excluded : [...excluded, { path: ETAG_PATH }];
  return policy;
}

/** One change to the account, as a data directory journals it (persistence/ writes and replays them). */
export type JournalRecord = { [key: string]: unknown };

/** Which container's items a committed transaction changed. */
export interface ItemsChanged {
  database: string;
  container: string;
}

/** The whole in-memory account: databases, containers, scripts. */
export class Account {
  readonly databases = new Map<string, Database>();

  /**
   * @param partitions physical partitions (key ranges) of every container created from now on
   * @param clock what `_ts` and TTL expiry read
   */
  constructor(
    private readonly partitions = 1,
    readonly clock: Clock = systemClock,
  ) {}

  /** Told about every change (the data directory's journal); absent in memory-only mode. */
  journal?: (record: JournalRecord) => void;

  /** Told after each committed write to a container's items (see `watchItems`). */
  private readonly itemWatchers = new Set<(change: ItemsChanged) => void>();

  /**
   * Calls `listener` after every committed transaction that changed a container's items, in this
   * process: an in-process change feed reader can wait for a change instead of polling for it.
   * Returns the function that stops the calls.
   */
  watchItems(listener: (change: ItemsChanged) => void): () => void {
    this.itemWatchers.add(listener);
    return () => this.itemWatchers.delete(listener);
  }

  /** Each container's throughput offer. */
  readonly offers = new Offers(
    () => secondsOf(this.clock),
    (record) => this.journal?.(record),
  );

  createDatabase(body: unknown): JsonObject {
    const id = this.requireId(body);
    if (this.databases.has(id)) throw conflict();
    const props = systemProperties(databaseRid(), "", secondsOf(this.clock));
    const resource: JsonObject = { id, ...props, _self: `dbs/${props._rid}/`, _colls: "colls/", _users: "users/" };
    this.databases.set(id, { resource, containers: new Map() });
    this.journal?.({ op: "database", resource });
    return resource;
  }

  database(id: string): Database {
    const db = this.databases.get(id);
    if (!db) throw notFound(`Resource Not Found. Database '${id}' does not exist.`);
    return db;
  }

  deleteDatabase(id: string): void {
    for (const { data } of this.database(id).containers.values()) this.offers.drop(data.resource._rid as string);
    this.databases.delete(id);
    this.journal?.({ op: "dropDatabase", id });
  }

  createContainer(dbId: string, body: unknown, throughput: Throughput = DEFAULT_THROUGHPUT): JsonObject {
    const db = this.database(dbId);
    const id = this.requireId(body);
    if (db.containers.has(id)) throw conflict();
    const definition = body as JsonObject;
    const partitionKey = this.partitionKeyOf(definition);
    this.checkTtl(definition.defaultTtl);
    checkFullText(definition);
    this.offers.check(throughput);
    const props = systemProperties(collectionRid(db.resource._rid as string), "", secondsOf(this.clock));
    const resource: JsonObject = {
      ...definition,
      indexingPolicy: completeIndexingPolicy(definition.indexingPolicy),
      partitionKey,
      conflictResolutionPolicy: { mode: "LastWriterWins", conflictResolutionPath: "/_ts", conflictResolutionProcedure: "" },
      geospatialConfig: { type: "Geography" },
      ...props,
      _self: `${db.resource._self as string}colls/${props._rid}/`,
      _docs: "docs/",
      _sprocs: "sprocs/",
      _triggers: "triggers/",
      _udfs: "udfs/",
      _conflicts: "conflicts/",
    };
    if (definition.uniqueKeyPolicy === undefined) resource.uniqueKeyPolicy = { uniqueKeys: [] };
    this.addContainer(dbId, resource, this.partitions);
    this.journal?.({ op: "container", db: dbId, resource, partitions: this.partitions });
    this.offers.create(resource, throughput);
    return resource;
  }

  container(dbId: string, id: string): ContainerState {
    const state = this.database(dbId).containers.get(id);
    if (!state) throw notFound(`Resource Not Found. Container '${id}' does not exist.`);
    return state;
  }

  /** Replace may change indexing, the full-text policy and TTL, never the partition key or unique keys (as in the service). */
  replaceContainer(dbId: string, id: string, body: unknown): JsonObject {
    const { data } = this.container(dbId, id);
    if (!isObject(body) || body.id !== id) throw badRequest("The id in the body must match the container being replaced.");
    if (JSON.stringify(this.partitionKeyOf(body).paths) !== JSON.stringify(data.partitionKey.paths)) {
      throw badRequest("Partition key paths of a container cannot be changed.");
    }
    this.checkTtl(body.defaultTtl);
    checkFullText(body);
    const next: JsonObject = {
      ...data.resource,
      indexingPolicy: completeIndexingPolicy(body.indexingPolicy ?? data.resource.indexingPolicy),
      // The full-text policy is replaced with the container, as Azure allows.
      ...(body.fullTextPolicy === undefined ? {} : { fullTextPolicy: body.fullTextPolicy }),
      _etag: newEtag(),
      _ts: secondsOf(this.clock),
    };
    if (body.defaultTtl === undefined) delete next.defaultTtl;
    else next.defaultTtl = body.defaultTtl;
    data.resource = next;
    data.refreshTtl();
    this.journal?.({ op: "container", db: dbId, resource: next, partitions: data.ranges.length });
    return next;
  }

  deleteContainer(dbId: string, id: string): void {
    this.offers.drop(this.container(dbId, id).data.resource._rid as string);
    this.database(dbId).containers.delete(id);
    this.journal?.({ op: "dropContainer", db: dbId, id });
  }

  saveScript(dbId: string, collId: string, kind: ScriptKind, body: unknown, replaceId?: string): JsonObject {
    const state = this.container(dbId, collId);
    const id = this.requireId(body);
    const definition = body as JsonObject;
    if (typeof definition.body !== "string") throw badRequest("The script 'body' must be a string.");
    if (kind === "triggers") {
      if (!TRIGGER_TYPES.includes(String(definition.triggerType).toLowerCase())) throw badRequest("triggerType must be 'Pre' or 'Post'.");
      if (!TRIGGER_OPERATIONS.includes(String(definition.triggerOperation).toLowerCase())) throw badRequest("Invalid triggerOperation.");
    }
    const scripts = state.scripts[kind];
    if (replaceId === undefined && scripts.has(id)) throw conflict();
    if (replaceId !== undefined && (!scripts.has(replaceId) || replaceId !== id)) throw notFound();
    const rid = scripts.get(id)?._rid ?? newChildRid(state.data.resource._rid as string, SCRIPT_RID_KIND[kind]);
    const props = systemProperties(rid as string, "", secondsOf(this.clock));
    const resource: JsonObject = { ...definition, ...props, _self: `${state.data.resource._self as string}${kind}/${props._rid}/` };
    scripts.set(id, resource);
    this.journal?.({ op: "script", db: dbId, container: collId, kind, resource });
    return resource;
  }

  script(dbId: string, collId: string, kind: ScriptKind, id: string): JsonObject {
    const script = this.container(dbId, collId).scripts[kind].get(id);
    if (!script) throw notFound();
    return script;
  }

  deleteScript(dbId: string, collId: string, kind: ScriptKind, id: string): void {
    this.script(dbId, collId, kind, id);
    this.container(dbId, collId).scripts[kind].delete(id);
    this.journal?.({ op: "dropScript", db: dbId, container: collId, kind, id });
  }

  /** Adds a container as it is, without checks or journaling (creation checks first; loading trusts the journal). */
  addContainer(dbId: string, resource: JsonObject, partitions: number): ContainerState {
    const db = this.database(dbId);
    const data = new Container(resource, db.resource._rid as string, partitions, this.clock);
    data.journal = (puts) => {
      this.journal?.({ op: "items", db: dbId, container: resource.id, puts });
      for (const listener of this.itemWatchers) listener({ database: dbId, container: resource.id as string });
    };
    const state: ContainerState = { data, scripts: { sprocs: new Map(), triggers: new Map(), udfs: new Map() } };
    db.containers.set(resource.id as string, state);
    return state;
  }

  private requireId(body: unknown): string {
    if (!isObject(body)) throw badRequest("The request body must be a JSON object.");
    const error = checkId(body.id);
    if (error) throw badRequest(error);
    return body.id as string;
  }

  private partitionKeyOf(definition: JsonObject): JsonObject {
    const pk = definition.partitionKey;
    if (!isObject(pk) || !Array.isArray(pk.paths) || pk.paths.length === 0 || !pk.paths.every((p) => typeof p === "string" && /^\/[^/]/.test(p))) {
      throw badRequest("A container needs a partitionKey with at least one path like '/key'.");
    }
    return { kind: pk.paths.length > 1 ? "MultiHash" : "Hash", version: 2, ...pk };
  }

  private checkTtl(ttl: unknown): void {
    if (ttl !== undefined && (typeof ttl !== "number" || !Number.isInteger(ttl) || ttl === 0 || ttl < -1)) {
      throw badRequest("The value of 'defaultTtl' must be a positive integer or -1.");
    }
  }
}
