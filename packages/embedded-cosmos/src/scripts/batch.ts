import type { Container } from "../engine/container";
import { badRequest, CosmosError, notFound } from "../wire/errors";
import type { ScriptedTransactions } from "./transactions";
import { isObject, type JsonObject } from "../wire/json";
import type { BatchResult } from "../wire/batch-rows";

/** Signals the first failing operation so the transaction unwinds with its status. */
class BatchAbort extends Error {
  constructor(
    readonly index: number,
    readonly status: number,
  ) {
    super("batch operation failed");
  }
}

/**
 * A transactional batch: every operation in one transaction on one logical partition.
 * On the first failure everything is rolled back; that operation reports its own status,
 * every other one 424, and the response is 207 Multi-Status as the gateway sends it.
 */
export function batch(container: Container, transactions: ScriptedTransactions, dbId: string, collId: string, pk: string, body: unknown) {
  if (!Array.isArray(body) || body.length === 0) throw badRequest("A batch needs a non-empty array of operations.");
  if (body.length > 100) throw badRequest("A batch may contain at most 100 operations.");
  const results: BatchResult[] = [];
  try {
    container.transaction(() => {
      body.forEach((operation: unknown, index) => {
        try {
          results.push(runOperation(container, transactions, dbId, collId, pk, operation));
        } catch (error) {
          if (error instanceof CosmosError) throw new BatchAbort(index, error.status);
          throw error;
        }
      });
    });
  } catch (error) {
    if (!(error instanceof BatchAbort)) throw error;
    const failed = body.map((_, i): BatchResult => ({ statusCode: i === error.index ? error.status : 424, requestCharge: 0 }));
    return { status: 207, body: failed };
  }
  return { status: 200, body: results };
}

/**
 * A bulk request (non-atomic batch): operations the SDK grouped by key range, each with its own
 * partition key, each run and committed on its own. Every operation reports its own status; with
 * continueOnError false, the first failure stops the rest (424). 207 when any failed.
 */
export function bulk(
  container: Container,
  transactions: ScriptedTransactions,
  dbId: string,
  collId: string,
  range: number,
  body: unknown,
  continueOnError: boolean,
) {
  if (!Array.isArray(body) || body.length === 0) throw badRequest("A bulk request needs a non-empty array of operations.");
  if (body.length > 100) throw badRequest("A bulk request may contain at most 100 operations.");
  const results: BatchResult[] = [];
  let stopped = false;
  for (const operation of body as unknown[]) {
    if (stopped) {
      results.push({ statusCode: 424, requestCharge: 0 });
      continue;
    }
    try {
      if (!isObject(operation) || typeof operation.partitionKey !== "string") throw badRequest("Each bulk operation needs its partitionKey.");
      const pk = bulkPartitionKey(operation.partitionKey);
      // The SDK routes by the key's hash; an operation for another range was routed by a stale map.
      if (container.rangeOfKey(pk) !== range) throw new CosmosError(410, "Gone", "The partition key does not belong to this partition key range.", 1002);
      results.push(container.transaction(() => runOperation(container, transactions, dbId, collId, pk, operation)));
    } catch (error) {
      if (!(error instanceof CosmosError)) throw error;
      results.push({ statusCode: error.status, requestCharge: 0 });
      stopped = !continueOnError;
    }
  }
  return { status: results.some((r) => r.statusCode >= 400) ? 207 : 200, body: results };
}

/** A bulk operation's partition key, a JSON array as the header carries it. */
function bulkPartitionKey(text: string): string {
  try {
    const value = JSON.parse(text) as unknown;
    if (Array.isArray(value)) return JSON.stringify(value);
  } catch {
    // answered below
  }
  throw badRequest(`The operation's partition key '${text}' is not a JSON array.`);
}

function runOperation(container: Container, transactions: ScriptedTransactions, dbId: string, collId: string, pk: string, operation: unknown): BatchResult {
  if (!isObject(operation)) throw badRequest("Invalid batch operation.");
  if (operation.partitionKey !== undefined && operation.partitionKey !== pk) {
    throw badRequest("All operations of a batch must target the batch's partition key.");
  }
  const id = operation.id as string;
  const ifMatch = typeof operation.ifMatch === "string" ? operation.ifMatch : undefined;
  const resourceBody = operation.resourceBody;
  // A write may ask for no body back (the .NET SDK's EnableContentResponseOnWrite = false); a read always has one.
  const minimal = operation.minimalReturnPreference === true && operation.operationType !== "Read";
  const done = (statusCode: number, doc?: JsonObject): BatchResult => ({
    statusCode,
    requestCharge: 0,
    eTag: doc?._etag as string | undefined,
    resourceBody: minimal ? undefined : doc,
  });
  const bodyObject = () => {
    if (!isObject(resourceBody)) throw badRequest("The operation's resourceBody must be an object.");
    return resourceBody;
  };
  switch (operation.operationType) {
    case "Create":
      return done(
        201,
        transactions.write(dbId, collId, pk, "Create", {}, (input) => ({ doc: container.create(pk, input as JsonObject), status: 201 }), bodyObject()).doc,
      );
    case "Upsert": {
      let status = 200;
      const { doc } = transactions.write(
        dbId,
        collId,
        pk,
        "Upsert",
        {},
        (input) => {
          const result = container.upsert(pk, input as JsonObject, ifMatch);
          status = result.created ? 201 : 200;
          return { doc: result.doc, status };
        },
        bodyObject(),
      );
      return done(status, doc);
    }
    case "Replace":
      return done(200, container.replace(pk, id, bodyObject(), ifMatch));
    case "Read": {
      const doc = container.read(pk, id);
      if (!doc) throw notFound();
      return done(200, doc);
    }
    case "Delete":
      container.delete(pk, id, ifMatch);
      return done(204);
    case "Patch": {
      const patch = Array.isArray(resourceBody) ? { operations: resourceBody } : bodyObject();
      const condition = typeof patch.condition === "string" ? patch.condition : undefined;
      return done(200, container.patch(pk, id, patch.operations, condition, ifMatch));
    }
    default:
      throw badRequest(`Operation type '${String(operation.operationType)}' is not supported in a batch.`);
  }
}
