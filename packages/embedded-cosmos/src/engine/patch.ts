import { badRequest } from "../wire/errors";
import { isObject, type Json, type JsonObject } from "../wire/json";

export interface PatchOperation {
  op: string;
  path: string;
  value?: Json;
  from?: string;
}

function segments(path: unknown): string[] {
  if (typeof path !== "string" || !path.startsWith("/") || path === "/") throw badRequest(`Invalid patch path '${String(path)}'.`);
  return path
    .slice(1)
    .split("/")
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
}

/** The container (object or array) holding the last segment, which must exist. */
function parentOf(doc: JsonObject, parts: string[], path: string): { parent: JsonObject | Json[]; key: string } {
  let node: Json = doc;
  for (const part of parts.slice(0, -1)) {
    const next: Json | undefined = Array.isArray(node) || isObject(node) ? read(node, part) : undefined;
    if (next === undefined || next === null || typeof next !== "object") throw badRequest(`Patch path '${path}' does not exist.`);
    node = next;
  }
  return { parent: node as JsonObject | Json[], key: parts[parts.length - 1] };
}

function arrayIndex(array: Json[], key: string, path: string, allowEnd: boolean): number {
  if (key === "-" && allowEnd) return array.length;
  const index = Number(key);
  if (!Number.isInteger(index) || index < 0 || index > array.length - (allowEnd ? 0 : 1)) {
    throw badRequest(`Patch path '${path}' has an invalid array index.`);
  }
  return index;
}

function exists(parent: JsonObject | Json[], key: string): boolean {
  return Array.isArray(parent) ? Number(key) >= 0 && Number(key) < parent.length : Object.hasOwn(parent, key);
}

/** Own properties only: a path such as `/__proto__/x` names a property of the item, never Object.prototype (which would pollute every object in the server). */
function read(parent: JsonObject | Json[], key: string): Json | undefined {
  if (Array.isArray(parent)) return parent[Number(key)];
  return Object.hasOwn(parent, key) ? parent[key] : undefined;
}

/** Sets an own property, `__proto__` included (an ordinary property name in a JSON document), never the prototype. */
function write(parent: JsonObject, key: string, value: Json): void {
  Object.defineProperty(parent, key, { value, writable: true, enumerable: true, configurable: true });
}

function remove(parent: JsonObject | Json[], key: string, path: string): Json | undefined {
  if (!exists(parent, key)) throw badRequest(`Patch path '${path}' for remove operation does not exist.`);
  const old = read(parent, key);
  if (Array.isArray(parent)) parent.splice(Number(key), 1);
  else delete parent[key];
  return old;
}

function apply(doc: JsonObject, operation: PatchOperation): void {
  const { op, path } = operation;
  const parts = segments(path);
  const { parent, key } = parentOf(doc, parts, path);
  const value = operation.value as Json;
  switch (op) {
    case "add":
      if (Array.isArray(parent)) parent.splice(arrayIndex(parent, key, path, true), 0, value);
      else write(parent, key, value);
      return;
    case "set":
      if (Array.isArray(parent)) parent[arrayIndex(parent, key, path, true)] = value;
      else write(parent, key, value);
      return;
    case "replace":
      if (!exists(parent, key)) throw badRequest(`Patch path '${path}' for replace operation does not exist.`);
      if (Array.isArray(parent)) parent[Number(key)] = value;
      else write(parent, key, value);
      return;
    case "remove":
      remove(parent, key, path);
      return;
    case "incr": {
      if (typeof value !== "number") throw badRequest(`Increment value for '${path}' must be a number.`);
      const current = exists(parent, key) ? read(parent, key) : 0;
      if (typeof current !== "number") throw badRequest(`Patch path '${path}' is not a number.`);
      if (Array.isArray(parent)) parent[Number(key)] = current + value;
      else write(parent, key, current + value);
      return;
    }
    case "move": {
      if (typeof operation.from !== "string") throw badRequest("Move operation requires 'from'.");
      const source = parentOf(doc, segments(operation.from), operation.from);
      const moved = remove(source.parent, source.key, operation.from);
      apply(doc, { op: "set", path, value: moved as Json });
      return;
    }
    default:
      throw badRequest(`Invalid patch operation type '${String(op)}'.`);
  }
}

/**
 * Applies patch operations to a copy of `doc`, refusing paths that would change the
 * id or the partition key (the service rejects those too).
 */
export function applyPatch(doc: JsonObject, operations: unknown, protectedPaths: string[]): JsonObject {
  if (!Array.isArray(operations) || operations.length === 0 || operations.length > 10) {
    throw badRequest("Patch request must have between 1 and 10 operations.");
  }
  const copy = structuredClone(doc);
  for (const operation of operations as PatchOperation[]) {
    if (!isObject(operation as unknown)) throw badRequest("Invalid patch operation.");
    const touched = [operation.path, operation.from].filter((p): p is string => typeof p === "string");
    if (touched.some((p) => p === "/id" || protectedPaths.some((pk) => p === pk || p.startsWith(pk + "/")))) {
      throw badRequest("Patch cannot modify the id or the partition key of an item.");
    }
    apply(copy, operation);
  }
  return copy;
}
