import { badRequest } from "./errors";
import { layoutOf, readRecords, readRow, writeRecords, writeRow, type RowValues } from "./hybrid-row";
import type { Json, JsonObject } from "./json";

/**
 * Transactional batch and bulk operations and their results in the Batch API's HybridRow
 * schemas, the .NET SDK's format, turned into and from the JSON shape the JavaScript SDK sends
 * (`{ operationType: "Create", id, resourceBody, ... }`), so one code path runs both.
 */

/** One operation's outcome, as both formats report it. */
export interface BatchResult {
  statusCode: number;
  requestCharge: number;
  subStatusCode?: number;
  eTag?: string;
  resourceBody?: JsonObject;
  retryAfterMilliseconds?: number;
}

const OPERATION = layoutOf({
  id: 2145473648,
  fields: [
    { path: "operationType", type: "int32", storage: "fixed" },
    { path: "resourceType", type: "int32", storage: "fixed" },
    { path: "partitionKey", type: "utf8", storage: "variable" },
    { path: "effectivePartitionKey", type: "binary", storage: "variable" },
    { path: "id", type: "utf8", storage: "variable" },
    { path: "binaryId", type: "binary", storage: "variable" },
    { path: "resourceBody", type: "binary", storage: "variable" },
    { path: "indexingDirective", type: "utf8", storage: "sparse" },
    { path: "ifMatch", type: "utf8", storage: "sparse" },
    { path: "ifNoneMatch", type: "utf8", storage: "sparse" },
    { path: "timeToLiveInSeconds", type: "int32", storage: "sparse" },
    { path: "minimalReturnPreference", type: "bool", storage: "sparse" },
  ],
});
const RESULT = layoutOf({
  id: 2145473649,
  fields: [
    { path: "statusCode", type: "int32", storage: "fixed" },
    { path: "subStatusCode", type: "int32", storage: "fixed" },
    { path: "eTag", type: "utf8", storage: "variable" },
    { path: "resourceBody", type: "binary", storage: "variable" },
    { path: "retryAfterMilliseconds", type: "uint32", storage: "sparse" },
    { path: "requestCharge", type: "float64", storage: "sparse" },
  ],
});

/** The service's operation type numbers for the operations a batch may hold. */
const OPERATION_TYPES: Record<number, string> = { 0: "Create", 1: "Patch", 2: "Read", 4: "Delete", 5: "Replace", 20: "Upsert" };

function jsonOf(bytes: Buffer): Json {
  try {
    return JSON.parse(bytes.toString("utf8")) as Json;
  } catch {
    throw badRequest("A batch operation's resource body is invalid JSON.");
  }
}

function operationOf(row: RowValues): JsonObject {
  const operation: JsonObject = {};
  const type = row.operationType as number | undefined;
  operation.operationType = type === undefined ? null : (OPERATION_TYPES[type] ?? String(type));
  for (const path of ["id", "partitionKey", "ifMatch", "ifNoneMatch"] as const) {
    if (row[path] !== undefined) operation[path] = row[path] as string;
  }
  if (row.resourceBody !== undefined) operation.resourceBody = jsonOf(row.resourceBody as Buffer);
  if (row.minimalReturnPreference === true) operation.minimalReturnPreference = true;
  return operation;
}

/** The operations of a HybridRow batch or bulk body, in the JavaScript SDK's JSON shape. */
export function readBatchOperations(body: Buffer): JsonObject[] {
  return readRecords(body).map((row) => operationOf(readRow(OPERATION, row)));
}

/** Results as a HybridRow RecordIO stream, one row each, in order. */
export function writeBatchResults(results: BatchResult[]): Buffer {
  return writeRecords(
    results.map((r) =>
      writeRow(RESULT, {
        statusCode: r.statusCode,
        subStatusCode: r.subStatusCode,
        eTag: r.eTag,
        resourceBody: r.resourceBody === undefined ? undefined : Buffer.from(JSON.stringify(r.resourceBody), "utf8"),
        retryAfterMilliseconds: r.retryAfterMilliseconds,
        requestCharge: r.requestCharge,
      }),
    ),
  );
}
