import type { Account } from "../engine/account";
import { batch, bulk } from "../scripts/batch";
import { readBatchOperations, writeBatchResults, type BatchResult } from "../wire/batch-rows";
import { badRequest, notFound } from "../wire/errors";
import { isObject, type Json, type JsonObject } from "../wire/json";
import { hasJoins, SCAN_PAGE_ITEMS, userFunctionNames, type QueryPage } from "../query/query";
import type { QueryJob, QueryThread } from "../query/query-thread";
import type { Container } from "../engine/container";
import { cost, withMeter } from "../limits/request-units";
import { needsPipeline, pipelineRequired, planOf } from "../query/query-plan";
import { prepareQuery } from "../query/sql-support";
import { resumeFilterOf } from "../query/resume-filter";

const QUERY_EXECUTION_INFO = JSON.stringify({ reverseRidEnabled: false, reverseIndexScan: false });
import { docsOperation, isTrue, maxItemCountOf, partitionKeyHeader, querySpecOf, scopeOf, type Call, type Reply } from "./rest";
import type { ScriptedTransactions } from "../scripts/transactions";

/** The bodies of the user-defined functions `names`, by name (undefined for none); a 400 for one the container lacks, as Azure answers. */
function functionBodies(names: string[], defined: Map<string, JsonObject>): Record<string, string> | undefined {
  if (names.length === 0) return undefined;
  const missing = names.find((name) => !defined.has(name));
  if (missing !== undefined) throw badRequest(`Unknown user-defined function udf.${missing}: the container has no function with that id.`);
  return Object.fromEntries(names.map((name) => [name, defined.get(name)!.body as string]));
}

/** A batch or bulk request run on its operations, answered in the format it came in: HybridRow (the .NET SDK) or JSON (the JavaScript SDK). */
function inFormatOf(body: unknown, run: (operations: unknown) => { status: number; body: BatchResult[] }): Reply {
  if (!Buffer.isBuffer(body)) return run(body);
  const { status, body: results } = run(readBatchOperations(body));
  return { status, body: writeBatchResults(results) };
}

/** The documents of a container over REST: item reads and writes, queries, the change feed, batches and bulk. */
export class DocumentRoutes {
  constructor(
    private readonly account: Account,
    private readonly transactions: ScriptedTransactions,
    /** Where queries with JOINs or user-defined functions are evaluated, apart from the server's thread. */
    private readonly queries: QueryThread,
    /** Items an unindexed scan reads per page before it returns (possibly short) with a continuation. */
    private readonly scanPageItems = SCAN_PAGE_ITEMS,
  ) {}

  /** A request to a container's documents (`.../docs`): change feed, read all, query plan, query, bulk, batch, upsert or create. */
  collection(call: Call, dbId: string, collId: string): Reply | Promise<Reply> {
    const { data } = this.account.container(dbId, collId);
    const operation = docsOperation(call);
    switch (operation) {
      case "change feed":
        return this.changeFeed(call, dbId, collId);
      case "read all":
        return this.query(call, dbId, collId, { query: "SELECT * FROM c" });
      case "query plan":
        return this.queryPlan(call);
      case "query":
        return this.query(call, dbId, collId, querySpecOf(call.body));
      case "bulk": {
        const scope = scopeOf(call, data);
        if (!("range" in scope)) throw badRequest("A bulk request must name its partition key range.");
        const continueOnError = call.header("x-ms-cosmos-batch-continue-on-error")?.toLowerCase() !== "false";
        return inFormatOf(call.body, (operations) => bulk(data, this.transactions, dbId, collId, scope.range, operations, continueOnError));
      }
      case "batch":
        return inFormatOf(call.body, (operations) => batch(data, this.transactions, dbId, collId, this.fullPartitionKey(call, data), operations));
      case "upsert":
      case "create":
        return this.createOrUpsert(call, dbId, collId, operation);
    }
  }

  private createOrUpsert(call: Call, dbId: string, collId: string, operation: "create" | "upsert"): Reply {
    const { data } = this.account.container(dbId, collId);
    const body = this.requireObject(call.body);
    const pk = partitionKeyHeader(call, data.partitionKey.paths.length > 0) ?? data.partitionKeyOf(body);
    const options = this.writeOptions(call);
    const { doc, status } =
      operation === "upsert"
        ? this.transactions.write(
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
          )
        : this.transactions.write(dbId, collId, pk, "Create", options, (input) => ({ doc: data.create(pk, input as JsonObject), status: 201 }), body);
    return this.docReply(status, doc);
  }

  /** A request to one document: read, replace, delete or patch. */
  item(call: Call, dbId: string, collId: string, id: string): Reply {
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

  /** Deletes every item of the partition key the request names (Azure does it in the background, here at once). */
  deletePartitionKey(call: Call, dbId: string, collId: string): Reply {
    const { data } = this.account.container(dbId, collId);
    const pk = this.fullPartitionKey(call, data);
    data.transaction(() => data.deletePartition(pk));
    return { status: 200 };
  }

  /** A partition key header naming one logical partition: as many components as the container's key has paths. */
  private fullPartitionKey(call: Call, data: { partitionKey: { paths: string[] } }): string {
    const pk = partitionKeyHeader(call, true) as string;
    if ((JSON.parse(pk) as unknown[]).length !== data.partitionKey.paths.length) {
      throw badRequest(
        "Partition key provided either doesn't correspond to definition in the collection or doesn't match partition key field values specified in the document.",
      );
    }
    return pk;
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

  private docReply(status: number, doc: JsonObject): Reply {
    return { status, body: doc, headers: { etag: doc._etag as string } };
  }

  private query(call: Call, dbId: string, collId: string, spec: { query: string; parameters?: { name: string; value: Json }[] }): Reply | Promise<Reply> {
    const { data, scripts } = this.account.container(dbId, collId);
    const scope = scopeOf(call, data);
    // As the gateway does: ORDER BY, TOP and aggregates across partitions are merged by the SDK, range by range.
    // Vetted, shaped and parsed once, for the plan and the execution alike.
    const resumeFilter = resumeFilterOf(call.body);
    const prepared = prepareQuery(spec, resumeFilter);
    if ("all" in scope) {
      const plan = planOf(prepared);
      if (needsPipeline(plan)) throw pipelineRequired(plan);
    }
    const started = performance.now();
    const continuation = call.header("x-ms-continuation") || undefined;
    const maxItemCount = maxItemCountOf(call);
    const functions = functionBodies(userFunctionNames(prepared), scripts.udfs);
    if (hasJoins(prepared) || functions)
      return this.queryElsewhere(
        call,
        data,
        { ...data.scopeCopy(scope), spec, resumeFilter, continuation, maxItemCount, scanPageItems: this.scanPageItems, functions },
        started,
      );
    return this.queryReply(call, data, data.query(scope, prepared, continuation, maxItemCount, this.scanPageItems), started);
  }

  /** A query with JOINs, evaluated on the query thread; charged as the container charges a query. */
  private async queryElsewhere(call: Call, data: Container, job: QueryJob, started: number): Promise<Reply> {
    const page = await this.queries.run(job);
    withMeter(call.meter!, () => cost.query(page.retrieved, page.indexHits, JSON.stringify(page.items).length));
    return this.queryReply(call, data, page, started);
  }

  private queryReply(call: Call, data: Container, page: QueryPage, started: number): Reply {
    const headers: Record<string, string> = {
      "x-ms-item-count": String(page.items.length),
      // ORDER BY's ties come in ascending document order whatever the direction: the .NET SDK resumes by it.
      "x-ms-cosmos-query-execution-info": QUERY_EXECUTION_INFO,
    };
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
    return { status: 200, body: planOf(prepareQuery(querySpecOf(call.body))) };
  }

  private changeFeed(call: Call, dbId: string, collId: string): Reply {
    const { data } = this.account.container(dbId, collId);
    const requested = scopeOf(call, data);
    // LSNs are per key range: a read of the whole container must name one (the SDK always does).
    if ("all" in requested && data.ranges.length > 1) throw badRequest("A change feed read must name a partition key or a partition key range.");
    if ("prefix" in requested) throw badRequest("A change feed read by a partition key prefix must name its feed range (the SDKs do).");
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
    const page = data.changes(scope, after, maxItemCountOf(call), sinceTs);
    const headers = { etag: `"${page.lsn}"`, "x-ms-item-count": String(page.items.length) };
    if (page.items.length === 0) return { status: 304, headers };
    return { status: 200, body: { _rid: data.resource._rid, Documents: page.items, _count: page.items.length }, headers };
  }
}
