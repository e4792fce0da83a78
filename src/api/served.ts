import { itemProblem, type ItemContainer } from "../model/item-schemas";
import { withoutSystemFields } from "../model/items";

/**
 * Each item's verdict, kept with the item: Q6 serves the same cached objects to every reader
 * (the instance's micro-cache), so the schema check runs once per read from Cosmos DB, not per
 * request.
 */
const verdicts = new WeakMap<object, string | undefined>();

function problemOf(container: ItemContainer, item: object): string | undefined {
  if (verdicts.has(item)) return verdicts.get(item);
  const problem = itemProblem(container, item);
  verdicts.set(item, problem);
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
