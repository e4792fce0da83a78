import type { Account, ScriptKind } from "../engine/account";
import { requestedThroughput } from "../engine/offers";
import type { ThroughputBudget } from "../limits/throughput";
import { queryResources } from "../query/query";
import type { ScriptedTransactions } from "../scripts/transactions";
import { badRequest } from "../wire/errors";
import type { Json, JsonObject } from "../wire/json";
import { childRid } from "../wire/resource-ids";
import { isTrue, partitionKeyHeader, querySpecOf, type Call, type Reply } from "./rest";

/**
 * Every resource of the REST API but documents (documents.ts): the account, databases,
 * containers, their partition key ranges, throughput offers, stored procedures, triggers and
 * user-defined functions.
 */
export class ResourceRoutes {
  constructor(
    private readonly account: Account,
    private readonly transactions: ScriptedTransactions,
    /** Charged for a stored procedure's own operations, when a throughput budget is on. */
    private readonly budget?: ThroughputBudget,
  ) {}

  /** The account: its endpoint (as the request named it), its one region, its consistency. */
  accountResource(call: Call): JsonObject {
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

  databases(call: Call, dbId: string | undefined): Reply {
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

  containers(call: Call, dbId: string, collId: string | undefined): Reply {
    if (collId === undefined) {
      if (call.method === "POST" && !isTrue(call.header("x-ms-documentdb-isquery")))
        return { status: 201, body: this.account.createContainer(dbId, call.body, requestedThroughput(call.header)) };
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

  /**
   * The container's physical partitions, as key ranges: what the SDKs route by. The .NET SDK
   * reads them as an incremental feed (`A-IM`), asking again with the last ETag until 304 says
   * nothing changed; the ranges never split here, so the ETag is their count.
   */
  partitionKeyRanges(call: Call, dbId: string, collId: string): Reply {
    const { data } = this.account.container(dbId, collId);
    const etag = `"${data.ranges.length}"`;
    if (call.header("if-none-match") === etag) return { status: 304, headers: { etag } };
    const ranges = data.ranges.map((range, i) => ({
      ...range,
      _rid: childRid(data.resource._rid as string, "pkrange", BigInt(i + 1)),
      ridPrefix: i,
      throughputFraction: 1 / data.ranges.length,
      status: "online",
      parents: [],
      _etag: `"${data.currentLsn(i)}"`,
    }));
    return { status: 200, body: { _rid: data.resource._rid, PartitionKeyRanges: ranges, _count: ranges.length }, headers: { etag } };
  }

  /** Throughput offers: listed, queried (as the SDKs find a container's), read and replaced. */
  offers(call: Call, rid: string | undefined): Reply {
    if (rid === undefined) {
      let list = this.account.offers.list();
      if (call.method === "POST") list = queryResources(querySpecOf(call.body), list) as JsonObject[];
      else if (call.method !== "GET") throw badRequest(`${call.method} is not supported on offers.`);
      return { status: 200, body: { _rid: "", Offers: list, _count: list.length } };
    }
    if (call.method === "GET") return { status: 200, body: this.account.offers.read(rid) };
    if (call.method === "PUT") return { status: 200, body: this.account.offers.replace(rid, call.body) };
    throw badRequest(`${call.method} is not supported on an offer.`);
  }

  scripts(call: Call, dbId: string, collId: string, kind: ScriptKind, id: string | undefined): Reply {
    if (id === undefined) {
      if (call.method === "POST" && !isTrue(call.header("x-ms-documentdb-isquery")))
        return { status: 201, body: this.account.saveScript(dbId, collId, kind, call.body) };
      let list = [...this.account.container(dbId, collId).scripts[kind].values()];
      if (call.method === "POST") list = queryResources(querySpecOf(call.body), list) as JsonObject[];
      const key = { sprocs: "StoredProcedures", triggers: "Triggers", udfs: "UserDefinedFunctions" }[kind];
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
        const pk = partitionKeyHeader(call, true) as string;
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
