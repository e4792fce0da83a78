import { badRequest, CosmosError } from "../wire/errors";
import type { Scope } from "../engine/container";
import { effectivePartitionKey } from "../engine/partitions";
import type { OperationKind } from "../limits/faults";
import type { CostFeatures } from "../limits/request-units";
import { isObject, type Json } from "../wire/json";

/**
 * The Cosmos DB REST protocol's request and reply, as the server parses and answers them, and
 * what a request's headers say: its partition key, its scope, what kind of operation it is.
 */

export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** One parsed request: path segments, lower-cased headers, JSON body (if any). */
export interface Call {
  method: string;
  segments: string[];
  header: (name: string) => string | undefined;
  body: unknown;
  /** An injected fault for a stored procedure call: run it, then roll back and answer this. */
  failAfterWork?: CosmosError;
  /** The physical partition whose throughput budget admitted this request (budget on only). */
  budgetPartition?: string;
  /** What the request is charged for: work done after an await (a query on its thread) is metered into it. */
  meter?: CostFeatures;
}

export const isTrue = (value: string | undefined) => value?.toLowerCase() === "true";

/** A query of a container's documents, as the SDK marks one (header, or the query content type). */
const isQueryRequest = (call: Call) =>
  isTrue(call.header("x-ms-documentdb-isquery")) || Boolean(call.header("content-type")?.startsWith("application/query+json"));

/** What a request to a container's documents (`.../docs`) is, by its method and headers. */
export type DocsOperation = "change feed" | "read all" | "query plan" | "query" | "bulk" | "batch" | "upsert" | "create";

export function docsOperation(call: Call): DocsOperation {
  if (call.method === "GET") return call.header("a-im") !== undefined ? "change feed" : "read all";
  if (call.method !== "POST") throw badRequest(`${call.method} is not supported on documents.`);
  if (isTrue(call.header("x-ms-cosmos-is-query-plan-request"))) return "query plan";
  if (isQueryRequest(call)) return "query";
  if (isTrue(call.header("x-ms-cosmos-is-batch-request"))) return call.header("x-ms-cosmos-batch-atomic")?.toLowerCase() === "false" ? "bulk" : "batch";
  return isTrue(call.header("x-ms-documentdb-is-upsert")) ? "upsert" : "create";
}

const KIND_OF: Record<DocsOperation, OperationKind> = {
  "change feed": "changefeed",
  "read all": "query",
  "query plan": "query",
  query: "query",
  bulk: "batch",
  batch: "batch",
  upsert: "write",
  create: "write",
};

/** The kind of a data-plane request (items, queries, batches, sprocs, change feed); undefined for metadata. */
export function operationKind(call: Call): OperationKind | undefined {
  const [, , , , kind, id] = call.segments;
  if (kind === "sprocs") return id !== undefined && call.method === "POST" ? "sproc" : undefined;
  if (kind !== "docs") return undefined;
  if (id !== undefined) return call.method === "GET" ? "read" : "write";
  if (call.method !== "GET" && call.method !== "POST") return undefined;
  return KIND_OF[docsOperation(call)];
}

/** What a query or change feed request covers: the logical partition (or a hierarchical key's prefix), or the key range (narrowed by EPKs), it names. */
export function scopeOf(call: Call, data: { ranges: { id: string }[]; partitionKey: { paths: string[]; kind?: string } }): Scope {
  const pk = partitionKeyHeader(call, false);
  if (pk !== undefined) {
    // A hierarchical key's first components name every logical partition under them (the SDKs send a prefix so).
    if (data.partitionKey.kind !== "MultiHash") return { pk };
    const components = JSON.parse(pk) as Json[];
    return components.length < data.partitionKey.paths.length ? { prefix: effectivePartitionKey(components, "MultiHash") } : { pk };
  }
  const rangeId = call.header("x-ms-documentdb-partitionkeyrangeid");
  if (rangeId === undefined) return { all: true };
  const range = data.ranges.findIndex((r) => r.id === rangeId.split(",").pop());
  if (range < 0) throw new CosmosError(410, "Gone", `The partition key range '${rangeId}' is gone.`, 1002);
  return { range, minEpk: call.header("x-ms-start-epk") || undefined, maxEpk: call.header("x-ms-end-epk") || undefined };
}

/** A query's body (`{query, parameters}`), checked: a container's documents and the offers are queried alike. */
export function querySpecOf(body: unknown): { query: string; parameters: { name: string; value: Json }[] } {
  if (!isObject(body) || typeof body.query !== "string") throw badRequest("The query body must have a 'query' string.");
  const parameters = body.parameters ?? [];
  if (!Array.isArray(parameters) || !parameters.every((p) => isObject(p) && typeof p.name === "string")) {
    throw badRequest("Query parameters must be a list of {name, value}.");
  }
  return { query: body.query, parameters: parameters as { name: string; value: Json }[] };
}

/** The partition key the request names, or undefined for a cross-partition request. */
export function partitionKeyHeader(call: Call, required: boolean): string | undefined {
  const header = call.header("x-ms-documentdb-partitionkey");
  if (header === undefined) {
    if (required) throw badRequest("PartitionKey value must be supplied for this operation.");
    return undefined;
  }
  let value: unknown;
  try {
    value = JSON.parse(header);
  } catch {
    throw badRequest(`The partition key header '${header}' is invalid JSON.`);
  }
  // Components are primitives; `{}` stands for an undefined one (a document without the key).
  const component = (c: unknown) => c === null || ["string", "number", "boolean"].includes(typeof c) || (isObject(c) && Object.keys(c).length === 0);
  if (!Array.isArray(value) || !value.every(component)) {
    throw badRequest(`The partition key header '${header}' must be a JSON array of strings, numbers, booleans or nulls.`);
  }
  return JSON.stringify(value);
}

/** The page size a request asks for (`x-ms-max-item-count`): an integer; absent, 0 or negative is the default. */
export function maxItemCountOf(call: Call): number {
  const header = call.header("x-ms-max-item-count");
  if (header === undefined || header === "") return 100;
  const value = Number(header);
  if (!Number.isInteger(value)) throw badRequest(`The value '${header}' specified for the header 'x-ms-max-item-count' is invalid.`);
  return value > 0 ? value : 100;
}
