import type { Clock } from "../clock";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { randomUUID } from "node:crypto";
import { Account, type ScriptKind } from "./account";
import { verifyMasterKey } from "./auth";
import { batch, bulk } from "./batch";
import { needsPipeline, pipelineRequired, planOf } from "./query-plan";
import { badRequest, CosmosError, entityTooLarge, notFound } from "./errors";
import type { Scope } from "./container";
import { ScriptedTransactions } from "./transactions";
import { SCAN_PAGE_ITEMS } from "./query";
import type { ThroughputBudget } from "./throughput";
import type { FaultInjector, OperationKind } from "./faults";
import { isObject, type Json, type JsonObject } from "./json";
import type { ScriptLimits } from "./sandbox";

const MAX_REQUEST_BYTES = 2 * 1024 * 1024;

interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** One parsed request: path segments, lower-cased headers, JSON body (if any). */
interface Call {
  method: string;
  segments: string[];
  header: (name: string) => string | undefined;
  body: unknown;
  /** An injected fault for a stored procedure call: run it, then roll back and answer this. */
  failAfterWork?: CosmosError;
  /** The physical partition whose throughput budget admitted this request (budget on only). */
  budgetPartition?: string;
}

const isTrue = (value: string | undefined) => value?.toLowerCase() === "true";

/** A query of a container's documents, as the SDK marks one (header, or the query content type). */
const isQueryRequest = (call: Call) =>
  isTrue(call.header("x-ms-documentdb-isquery")) || Boolean(call.header("content-type")?.startsWith("application/query+json"));

/** The kind of a data-plane request (items, queries, batches, sprocs, change feed); undefined for metadata. */
function operationKind(call: Call): OperationKind | undefined {
  const [, , , , kind, id] = call.segments;
  if (kind === "sprocs") return id !== undefined && call.method === "POST" ? "sproc" : undefined;
  if (kind !== "docs") return undefined;
  if (id !== undefined) return call.method === "GET" ? "read" : "write";
  if (call.method === "GET") return call.header("a-im") !== undefined ? "changefeed" : "query";
  if (isTrue(call.header("x-ms-cosmos-is-batch-request"))) return "batch";
  return isQueryRequest(call) || isTrue(call.header("x-ms-cosmos-is-query-plan-request")) ? "query" : "write";
}

/** The Cosmos DB REST protocol over the in-memory account, as `@azure/cosmos` speaks it. */
export class CosmosServer {
  readonly account: Account;
  private readonly transactions: ScriptedTransactions;
  private readonly http: Server;
  private sweeper?: NodeJS.Timeout;

  private readonly limits: ScriptLimits;
  /** Item operations per second per physical partition; unlimited when absent. */
  private readonly budget?: ThroughputBudget;
  /** Injects Azure's failures into data-plane requests; none when absent. */
  readonly faults?: FaultInjector;
  /** Items an unindexed scan reads per page before it returns (possibly short) with a continuation. */
  private readonly scanPageItems: number;

  constructor(
    /** The account key every request must be signed with (master-key authorization). */
    private readonly key: string,
    options: { limits: ScriptLimits; partitions?: number; budget?: ThroughputBudget; faults?: FaultInjector; scanPageItems?: number; clock?: Clock },
  ) {
    this.limits = options.limits;
    this.budget = options.budget;
    this.faults = options.faults;
    this.scanPageItems = options.scanPageItems ?? SCAN_PAGE_ITEMS;
    this.account = new Account(options.partitions ?? 1, options.clock);
    this.transactions = new ScriptedTransactions(this.account, this.limits);
    this.http = createServer((req, res) => void this.serve(req, res));
    this.http.keepAliveTimeout = 60_000;
  }

  listen(port: number, host: string): Promise<number> {
    return new Promise((resolve, reject) => {
      this.http.once("error", reject);
      this.http.listen(port, host, () => {
        this.sweeper = setInterval(() => this.sweep(), 1000).unref();
        const address = this.http.address();
        resolve(typeof address === "object" && address ? address.port : port);
      });
    });
  }

  close(): Promise<void> {
    clearInterval(this.sweeper);
    this.http.closeAllConnections();
    return new Promise((resolve) => this.http.close(() => resolve()));
  }

  private sweep(): void {
    for (const db of this.account.databases.values()) for (const c of db.containers.values()) c.data.sweep();
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let reply: Reply;
    try {
      const call = await this.parse(req);
      // What the fault injector has injected is no data: chaos runs read it without the key.
      if (!(call.segments[0] === "_embedded" && call.segments.length === 2)) verifyMasterKey(this.key, call.method, call.segments, call.header);
      await this.injectFaults(call);
      reply = this.route(call);
    } catch (error) {
      const cosmosError = error instanceof CosmosError ? error : new CosmosError(500, "InternalServerError", (error as Error).message);
      if (cosmosError.status === 500) console.error("[cosmos] internal error", error);
      const headers: Record<string, string> = { ...cosmosError.headers };
      if (cosmosError.subStatus !== undefined) headers["x-ms-substatus"] = String(cosmosError.subStatus);
      reply = { status: cosmosError.status, body: cosmosError.toBody(), headers };
    }
    const headers: Record<string, string> = {
      "content-type": "application/json",
      "x-ms-activity-id": randomUUID(),
      // Not Azure's figure: the embedded server measures no request units.
      "x-ms-request-charge": "0",
      "x-ms-schemaversion": "1.14",
      ...reply.headers,
    };
    const text = reply.body === undefined ? "" : JSON.stringify(reply.body);
    res.writeHead(reply.status, { ...headers, "content-length": Buffer.byteLength(text) });
    res.end(text);
  }

  private async parse(req: IncomingMessage): Promise<Call> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > MAX_REQUEST_BYTES) throw entityTooLarge("Request size is too large.");
      chunks.push(chunk as Buffer);
    }
    const text = Buffer.concat(chunks).toString("utf8");
    let body: unknown;
    if (text.length > 0) {
      try {
        body = JSON.parse(text);
      } catch {
        throw badRequest("The request payload is invalid JSON.");
      }
    }
    const url = new URL(req.url ?? "/", "http://localhost");
    const segments = url.pathname
      .split("/")
      .filter(Boolean)
      .map((s) => decodeURIComponent(s));
    return { method: req.method ?? "GET", segments, header: (name) => req.headers[name] as string | undefined, body };
  }

  private route(call: Call): Reply {
    const [dbs, dbId, colls, collId, kind, resourceId] = call.segments;
    const n = call.segments.length;
    if (n === 0 && call.method === "GET") return { status: 200, body: this.accountResource(call) };
    // Not part of Azure's protocol: what the fault injector has injected, for runs that restart the process.
    if (dbs === "_embedded" && dbId === "faults" && n === 2 && call.method === "GET")
      return { status: 200, body: { ...this.faults?.injected, total: this.faults?.total ?? 0 } };
    if (dbs !== "dbs") throw notFound("Unknown resource path.");
    if (n <= 2) return this.databases(call, dbId);
    if (colls !== "colls") throw notFound("Unknown resource path.");
    if (n <= 4) return this.containers(call, dbId, collId);
    if (this.budget && (kind === "docs" || (kind === "sprocs" && n === 6 && call.method === "POST")))
      call.budgetPartition = this.spendBudget(call, dbId, collId);
    if (kind === "docs") return n === 5 ? this.documentFeed(call, dbId, collId) : this.document(call, dbId, collId, resourceId);
    if (kind === "pkranges" && n === 5) return this.partitionKeyRanges(dbId, collId);
    if (kind === "operations" && resourceId === "partitionkeydelete" && n === 6 && call.method === "POST") return this.deletePartitionKey(call, dbId, collId);
    if ((kind === "sprocs" || kind === "triggers") && n <= 6) return this.scripts(call, dbId, collId, kind, resourceId);
    throw notFound("Unknown resource path.");
  }

  /** Draws this request's faults (data-plane requests only): waits, fails, or marks a sproc call to fail after its work. */
  private async injectFaults(call: Call): Promise<void> {
    const kind = this.faults && operationKind(call);
    if (!kind) return;
    const plan = this.faults!.plan(kind, call.segments[3]);
    call.failAfterWork = plan.afterWork;
    await this.faults!.apply(plan);
  }

  /** Charges the physical partition the request lands on (a cross-partition request: the first), and names it. */
  private spendBudget(call: Call, dbId: string, collId: string): string {
    const { data } = this.account.container(dbId, collId);
    const scope = this.scopeOf(call, data);
    const range = "pk" in scope ? data.rangeOfKey(scope.pk) : "range" in scope ? scope.range : 0;
    const partition = `${dbId}/${collId}/${range}`;
    this.budget!.spend(partition);
    return partition;
  }

  private accountResource(call: Call): JsonObject {
    const endpoint = `http://${call.header("host") ?? "localhost"}/`;
    const location = { name: "Local", databaseAccountEndpoint: endpoint };
    return {
      id: "localcosmos",
      _rid: "localcosmos",
      _self: "",
      _dbs: "//dbs/",
      media: "//media/",
      addresses: "//addresses/",
      writableLocations: [location],
      readableLocations: [location],
      enableMultipleWriteLocations: false,
      userConsistencyPolicy: { defaultConsistencyLevel: "Session" },
      userReplicationPolicy: { asyncReplication: false, minReplicaSetSize: 1, maxReplicasetSize: 1 },
      systemReplicationPolicy: { minReplicaSetSize: 1, maxReplicasetSize: 1 },
      readPolicy: { primaryReadCoefficient: 1, secondaryReadCoefficient: 1 },
      queryEngineConfiguration: JSON.stringify({ maxSqlQueryInputLength: 262144, sqlAllowTop: true, sqlAllowAggregateFunctions: true }),
    };
  }

  private databases(call: Call, dbId: string | undefined): Reply {
    if (dbId === undefined) {
      if (call.method === "POST" && !isTrue(call.header("x-ms-documentdb-isquery"))) return { status: 201, body: this.account.createDatabase(call.body) };
      const list = [...this.account.databases.values()].map((d) => d.resource);
      return { status: 200, body: { _rid: "", Databases: list, _count: list.length } };
    }
    if (call.method === "GET") return { status: 200, body: this.account.database(dbId).resource };
    if (call.method === "DELETE") {
      this.account.deleteDatabase(dbId);
      return { status: 204 };
    }
    throw badRequest(`${call.method} is not supported on a database.`);
  }

  private containers(call: Call, dbId: string, collId: string | undefined): Reply {
    if (collId === undefined) {
      if (call.method === "POST" && !isTrue(call.header("x-ms-documentdb-isquery")))
        return { status: 201, body: this.account.createContainer(dbId, call.body) };
      const list = [...this.account.database(dbId).containers.values()].map((c) => c.data.resource);
      return { status: 200, body: { _rid: this.account.database(dbId).resource._rid, DocumentCollections: list, _count: list.length } };
    }
    switch (call.method) {
      case "GET":
        return { status: 200, body: this.account.container(dbId, collId).data.resource };
      case "PUT":
        return { status: 200, body: this.account.replaceContainer(dbId, collId, call.body) };
      case "DELETE":
        this.account.deleteContainer(dbId, collId);
        return { status: 204 };
      default:
        throw badRequest(`${call.method} is not supported on a container.`);
    }
  }

  /** One physical partition covering the whole hash range, as a small real container has. */
  /** The container's physical partitions, as key ranges: what the SDK routes cross-partition work by. */
  private partitionKeyRanges(dbId: string, collId: string): Reply {
    const { data } = this.account.container(dbId, collId);
    const ranges = data.ranges.map((range, i) => ({
      ...range,
      _rid: `${data.resource._rid as string}${range.id}`,
      ridPrefix: i,
      throughputFraction: 1 / data.ranges.length,
      status: "online",
      parents: [],
      _etag: `"${data.currentLsn(i)}"`,
    }));
    return { status: 200, body: { _rid: data.resource._rid, PartitionKeyRanges: ranges, _count: ranges.length }, headers: { etag: `"${data.ranges.length}"` } };
  }

  /** What a query or change feed request covers: the logical partition, or the key range (narrowed by EPKs), it names. */
  private scopeOf(call: Call, data: { ranges: { id: string }[] }): Scope {
    const pk = this.partitionKey(call, false);
    if (pk !== undefined) return { pk };
    const rangeId = call.header("x-ms-documentdb-partitionkeyrangeid");
    if (rangeId === undefined) return { all: true };
    const range = data.ranges.findIndex((r) => r.id === rangeId.split(",").pop());
    if (range < 0) throw new CosmosError(410, "Gone", `The partition key range '${rangeId}' is gone.`, 1002);
    return { range, minEpk: call.header("x-ms-start-epk") || undefined, maxEpk: call.header("x-ms-end-epk") || undefined };
  }

  /** The partition key the request names, or undefined for a cross-partition request. */
  private partitionKey(call: Call, required: boolean): string | undefined {
    const header = call.header("x-ms-documentdb-partitionkey");
    if (header === undefined) {
      if (required) throw badRequest("PartitionKey value must be supplied for this operation.");
      return undefined;
    }
    try {
      const value = JSON.parse(header) as unknown;
      if (!Array.isArray(value)) throw new Error("not an array");
      return JSON.stringify(value);
    } catch {
      throw badRequest(`The partition key header '${header}' is invalid JSON.`);
    }
  }

  private writeOptions(call: Call) {
    const list = (name: string) =>
      call
        .header(name)
        ?.split(",")
        .map((s) => s.trim())
        .filter(Boolean);
    return {
      ifMatch: call.header("if-match"),
      preTriggers: list("x-ms-documentdb-pre-trigger-include"),
      postTriggers: list("x-ms-documentdb-post-trigger-include"),
    };
  }

  private requireObject(body: unknown): JsonObject {
    if (!isObject(body)) throw badRequest("The request body must be a JSON object.");
    return body;
  }

  private documentFeed(call: Call, dbId: string, collId: string): Reply {
    const { data } = this.account.container(dbId, collId);
    if (call.method === "GET") {
      if (call.header("a-im") !== undefined) return this.changeFeed(call, dbId, collId);
      return this.query(call, dbId, collId, { query: "SELECT * FROM c" });
    }
    if (call.method !== "POST") throw badRequest(`${call.method} is not supported on documents.`);
    if (isTrue(call.header("x-ms-cosmos-is-query-plan-request"))) return this.queryPlan(call);
    if (isQueryRequest(call)) {
      return this.query(call, dbId, collId, this.querySpec(call.body));
    }
    if (isTrue(call.header("x-ms-cosmos-is-batch-request"))) {
      if (call.header("x-ms-cosmos-batch-atomic")?.toLowerCase() === "false") {
        const scope = this.scopeOf(call, data);
        if (!("range" in scope)) throw badRequest("A bulk request must name its partition key range.");
        return bulk(
          data,
          this.transactions,
          dbId,
          collId,
          scope.range,
          call.body,
          call.header("x-ms-cosmos-batch-continue-on-error")?.toLowerCase() !== "false",
        );
      }
      return batch(data, this.transactions, dbId, collId, this.fullPartitionKey(call, data), call.body);
    }
    const body = this.requireObject(call.body);
    const pk = this.partitionKey(call, data.partitionKey.paths.length > 0) ?? data.partitionKeyOf(body);
    const options = this.writeOptions(call);
    if (isTrue(call.header("x-ms-documentdb-is-upsert"))) {
      const { doc, status } = this.transactions.write(
        dbId,
        collId,
        pk,
        "Upsert",
        options,
        (input) => {
          const result = data.upsert(pk, input as JsonObject, options.ifMatch);
          return { doc: result.doc, status: result.created ? 201 : 200 };
        },
        body,
      );
      return this.docReply(status, doc);
    }
    const { doc, status } = this.transactions.write(
      dbId,
      collId,
      pk,
      "Create",
      options,
      (input) => ({ doc: data.create(pk, input as JsonObject), status: 201 }),
      body,
    );
    return this.docReply(status, doc);
  }

  /** Deletes every item of the partition key the request names (Azure does it in the background, here at once). */
  private deletePartitionKey(call: Call, dbId: string, collId: string): Reply {
    const { data } = this.account.container(dbId, collId);
    const pk = this.fullPartitionKey(call, data);
    data.transaction(() => data.deletePartition(pk));
    return { status: 200 };
  }

  /** A partition key header naming one logical partition: as many components as the container's key has paths. */
  private fullPartitionKey(call: Call, data: { partitionKey: { paths: string[] } }): string {
    const pk = this.partitionKey(call, true) as string;
    if ((JSON.parse(pk) as unknown[]).length !== data.partitionKey.paths.length) {
      throw badRequest(
        "Partition key provided either doesn't correspond to definition in the collection or doesn't match partition key field values specified in the document.",
      );
    }
    return pk;
  }

  private document(call: Call, dbId: string, collId: string, id: string): Reply {
    const { data } = this.account.container(dbId, collId);
    const pk = this.fullPartitionKey(call, data);
    const options = this.writeOptions(call);
    switch (call.method) {
      case "GET": {
        const doc = data.read(pk, id);
        if (!doc) throw notFound();
        if (call.header("if-none-match") === doc._etag) return { status: 304, headers: { etag: doc._etag as string } };
        return this.docReply(200, doc);
      }
      case "PUT": {
        const body = this.requireObject(call.body);
        const { doc } = this.transactions.write(
          dbId,
          collId,
          pk,
          "Replace",
          options,
          (input) => ({ doc: data.replace(pk, id, input as JsonObject, options.ifMatch), status: 200 }),
          body,
        );
        return this.docReply(200, doc);
      }
      case "DELETE":
        this.transactions.write(dbId, collId, pk, "Delete", options, () => ({ doc: data.delete(pk, id, options.ifMatch), status: 204 }));
        return { status: 204 };
      case "PATCH": {
        // The SDK sends either a bare list of operations or {operations, condition}.
        const body = Array.isArray(call.body) ? { operations: call.body as Json } : this.requireObject(call.body);
        const condition = typeof body.condition === "string" ? body.condition : undefined;
        const { doc } = this.transactions.write(dbId, collId, pk, "Replace", options, () => ({
          doc: data.patch(pk, id, body.operations, condition, options.ifMatch),
          status: 200,
        }));
        return this.docReply(200, doc);
      }
      default:
        throw badRequest(`${call.method} is not supported on a document.`);
    }
  }

  private docReply(status: number, doc: JsonObject): Reply {
    return { status, body: doc, headers: { etag: doc._etag as string } };
  }

  private querySpec(body: unknown): { query: string; parameters?: { name: string; value: Json }[] } {
    if (!isObject(body) || typeof body.query !== "string") throw badRequest("The query body must have a 'query' string.");
    const parameters = body.parameters ?? [];
    if (!Array.isArray(parameters) || !parameters.every((p) => isObject(p) && typeof p.name === "string")) {
      throw badRequest("Query parameters must be a list of {name, value}.");
    }
    return { query: body.query, parameters: parameters as { name: string; value: Json }[] };
  }

  private query(call: Call, dbId: string, collId: string, spec: { query: string; parameters?: { name: string; value: Json }[] }): Reply {
    const { data } = this.account.container(dbId, collId);
    const scope = this.scopeOf(call, data);
    // As the gateway does: ORDER BY, TOP and aggregates across partitions are merged by the SDK, range by range.
    if ("all" in scope) {
      const plan = planOf(spec);
      if (needsPipeline(plan)) throw pipelineRequired(plan);
    }
    const started = performance.now();
    const page = data.query(scope, spec, call.header("x-ms-continuation") || undefined, Number(call.header("x-ms-max-item-count") ?? 100), this.scanPageItems);
    const headers: Record<string, string> = { "x-ms-item-count": String(page.items.length) };
    if (page.continuation) headers["x-ms-continuation"] = page.continuation;
    if (isTrue(call.header("x-ms-documentdb-populatequerymetrics"))) {
      const ms = (performance.now() - started).toFixed(2);
      headers["x-ms-documentdb-query-metrics"] =
        `totalExecutionTimeInMs=${ms};queryCompileTimeInMs=0;queryLogicalPlanBuildTimeInMs=0;queryPhysicalPlanBuildTimeInMs=0;` +
        `queryOptimizationTimeInMs=0;VMExecutionTimeInMs=${ms};indexLookupTimeInMs=0;documentLoadTimeInMs=0;systemFunctionExecuteTimeInMs=0;` +
        `userFunctionExecuteTimeInMs=0;retrievedDocumentCount=${page.retrieved};retrievedDocumentSize=0;outputDocumentCount=${page.items.length};` +
        `outputDocumentSize=0;writeOutputTimeInMs=0;indexUtilizationRatio=1`;
    }
    return { status: 200, body: { _rid: data.resource._rid, Documents: page.items, _count: page.items.length }, headers };
  }

  /** The gateway's query plan: how the SDK splits a cross-partition query into per-range queries and merges them. */
  private queryPlan(call: Call): Reply {
    return { status: 200, body: planOf(this.querySpec(call.body)) };
  }

  private changeFeed(call: Call, dbId: string, collId: string): Reply {
    const { data } = this.account.container(dbId, collId);
    const requested = this.scopeOf(call, data);
    // LSNs are per key range: a read of the whole container must name one (the SDK always does).
    if ("all" in requested && data.ranges.length > 1) throw badRequest("A change feed read must name a partition key or a partition key range.");
    const scope = "all" in requested ? { range: 0 } : requested;
    const range = "pk" in scope ? data.rangeOfKey(scope.pk) : scope.range;
    const ifNoneMatch = call.header("if-none-match");
    const since = call.header("if-modified-since");
    const sinceTs = since ? Math.floor(Date.parse(since) / 1000) : 0;
    if (since && Number.isNaN(sinceTs)) throw badRequest("Invalid If-Modified-Since header.");
    let after = 0;
    if (ifNoneMatch === "*") after = data.currentLsn(range);
    else if (ifNoneMatch) {
      after = Number(ifNoneMatch.replace(/"/g, ""));
      if (!Number.isInteger(after) || after < 0) throw badRequest("Invalid change feed continuation.");
    }
    const max = Number(call.header("x-ms-max-item-count") ?? 100);
    const page = data.changes(scope, after, max > 0 ? max : 100, sinceTs);
    const headers = { etag: `"${page.lsn}"`, "x-ms-item-count": String(page.items.length) };
    if (page.items.length === 0) return { status: 304, headers };
    return { status: 200, body: { _rid: data.resource._rid, Documents: page.items, _count: page.items.length }, headers };
  }

  private scripts(call: Call, dbId: string, collId: string, kind: ScriptKind, id: string | undefined): Reply {
    if (id === undefined) {
      if (call.method === "POST" && !isTrue(call.header("x-ms-documentdb-isquery")))
        return { status: 201, body: this.account.saveScript(dbId, collId, kind, call.body) };
      const list = [...this.account.container(dbId, collId).scripts[kind].values()];
      const key = kind === "sprocs" ? "StoredProcedures" : "Triggers";
      return { status: 200, body: { _rid: "", [key]: list, _count: list.length } };
    }
    switch (call.method) {
      case "GET":
        return { status: 200, body: this.account.script(dbId, collId, kind, id) };
      case "PUT":
        return { status: 200, body: this.account.saveScript(dbId, collId, kind, call.body, id) };
      case "DELETE":
        this.account.deleteScript(dbId, collId, kind, id);
        return { status: 204 };
      case "POST": {
        if (kind !== "sprocs") break;
        const params = call.body === undefined ? [] : Array.isArray(call.body) ? (call.body as Json[]) : [call.body as Json];
        const pk = this.partitionKey(call, true) as string;
        const result = this.transactions.executeProcedure(
          dbId,
          collId,
          id,
          pk,
          params,
          isTrue(call.header("x-ms-documentdb-script-enable-logging")),
          call.failAfterWork,
        );
        // Admission spent one operation; the script's own collection calls are its real cost.
        if (call.budgetPartition) this.budget?.charge(call.budgetPartition, result.operations - 1);
        const headers: Record<string, string> = {};
        if (result.logs.length > 0) headers["x-ms-documentdb-script-log-results"] = encodeURIComponent(result.logs.join("\n"));
        return { status: 200, body: result.body, headers };
      }
    }
    throw badRequest(`${call.method} is not supported on ${kind}.`);
  }
}
