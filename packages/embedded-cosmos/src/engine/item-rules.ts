import { badRequest, preconditionFailed } from "../wire/errors";
import type { JsonObject } from "../wire/json";
import { satisfies } from "../query/query";
import type { StoredItem } from "./stored-item";
import { checkId } from "./system-properties";

/** Azure's limit on how deep objects and arrays nest in an item. */
export const MAX_NESTING = 128;

/** Whether `value` has objects or arrays nested more than `levels` deep (stops at the limit, so never recurses far). */
function nestedDeeper(value: unknown, levels: number): boolean {
  if (typeof value !== "object" || value === null) return false;
  if (levels === 0) return true;
  for (const child of Array.isArray(value) ? value : Object.values(value)) if (nestedDeeper(child, levels - 1)) return true;
  return false;
}

/** An item whose objects and arrays nest deeper than Azure allows is refused (400), so no query or read ever meets one. */
export function checkNesting(body: JsonObject): void {
  if (nestedDeeper(body, MAX_NESTING)) throw badRequest(`The document nests objects and arrays more than ${MAX_NESTING} levels deep.`);
}

/**
 * What the service checks of an item write before it happens: a valid id, the partition key
 * in the body matching the header's, a valid `ttl`, nesting within the limit, the `If-Match`
 * ETag, a patch's condition.
 */
export function checkItemBody(body: JsonObject, pk: string, pkOfBody: string): void {
  checkNesting(body);
  const idError = checkId(body.id);
  if (idError) throw badRequest(idError);
  if (pkOfBody !== pk) throw badRequest("PartitionKey extracted from document doesn't match the one specified in the header.");
  if (body.ttl !== undefined && (typeof body.ttl !== "number" || !Number.isInteger(body.ttl) || body.ttl === 0 || body.ttl < -1)) {
    throw badRequest("The value of the 'ttl' property must be a positive integer or -1.");
  }
}

export function checkEtag(item: StoredItem, ifMatch?: string): void {
  if (ifMatch && ifMatch !== "*" && ifMatch !== item.etag) throw preconditionFailed();
}

/** A conditional patch: the item must satisfy the SQL filter `condition` (412 otherwise). */
export function checkPatchCondition(doc: JsonObject, condition: string | undefined): void {
  if (condition === undefined) return;
  let met: boolean;
  try {
    met = satisfies(doc, condition);
  } catch (error) {
    throw badRequest(`Invalid patch condition: ${(error as Error).message}`);
  }
  if (!met) throw preconditionFailed();
}
