import { itemProblem, type ItemContainer } from "../model/item-schemas";
import { withoutSystemFields } from "../model/items";

/**
 * Each item's verdict, kept with the item: Q6 serves the same cached objects to every reader
 * (the instance's micro-cache), so the schema check runs once per read from Cosmos DB, not per
 * request.
 */
const verdicts = new WeakMap<object, string | undefined>();

/**
 * Verdicts by version, for the lists (Q3-Q5), whose items are new objects on every read: a stored
 * version (`_rid` and `_etag`) is checked once, not on every read of a page that holds it.
 */
const verdictsByVersion = new Map<string, string | undefined>();
const VERSIONS_KEPT = 10_000;

function problemOf(container: ItemContainer, item: object): string | undefined {
  if (verdicts.has(item)) return verdicts.get(item);
  const { _rid, _etag } = item as { _rid?: unknown; _etag?: unknown };
  const version = typeof _rid === "string" && typeof _etag === "string" ? `${container} ${_rid} ${_etag}` : undefined;
  if (version !== undefined && verdictsByVersion.has(version)) return verdictsByVersion.get(version);
  const problem = itemProblem(container, item);
  verdicts.set(item, problem);
  if (version !== undefined) {
    if (verdictsByVersion.size >= VERSIONS_KEPT) verdictsByVersion.delete(verdictsByVersion.keys().next().value as string);
    verdictsByVersion.set(version, problem);
  }
  return problem;
}

/**
 * The items of a list as the API serves them: system fields removed, and an item that fails
 * its schema (written behind the API's back) left out and logged, so what is served always
 * matches the OpenAPI description.
 */
export function servedItems<T extends object>(container: ItemContainer, items: readonly T[], log: (message: string) => void): T[] {
  return items.flatMap((item) => {
    const problem = problemOf(container, item);
    if (problem === undefined) return [withoutSystemFields(item)];
    log(`left malformed ${container} item '${String((item as { id?: unknown }).id)}' out of a list: ${problem}`);
    return [];
  });
}
