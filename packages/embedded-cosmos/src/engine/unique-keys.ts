import { conflict } from "../wire/errors";
import { isObject, type Json, type JsonObject } from "../wire/json";

const valueAt = (doc: JsonObject, path: string) => {
  let node: Json | undefined = doc;
  for (const part of path.slice(1).split("/")) node = isObject(node) ? node[part] : undefined;
  return JSON.stringify(node ?? null);
};

/**
 * The container's unique key policy: within one logical partition, no two items share the
 * values of any unique key's paths. `others` are the partition's live items.
 */
export function checkUniqueKeys(definition: JsonObject, body: JsonObject, others: () => JsonObject[]): void {
  const uniqueKeys = (definition.uniqueKeyPolicy as { uniqueKeys?: { paths: string[] }[] } | undefined)?.uniqueKeys ?? [];
  if (uniqueKeys.length === 0) return;
  const existing = others();
  for (const { paths } of uniqueKeys) {
    const tuple = paths.map((p) => valueAt(body, p)).join("\u0000");
    if (existing.some((other) => other.id !== body.id && paths.map((p) => valueAt(other, p)).join("\u0000") === tuple)) {
      throw conflict("Unique index constraint violation.");
    }
  }
}
