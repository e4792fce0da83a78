import { itemProblem, type ItemContainer } from "../model/item-schemas";
import { withoutSystemFields } from "../model/items";

/**
 * The items of a list as the API serves them: system fields removed, and an item that fails
 * its schema (written behind the API's back) left out and logged, so what is served always
 * matches the OpenAPI description.
 */
export function servedItems<T extends object>(container: ItemContainer, items: readonly T[], log: (message: string) => void): T[] {
  return items.flatMap((item) => {
    const problem = itemProblem(container, item);
    if (problem === undefined) return [withoutSystemFields(item)];
    log(`left malformed ${container} item '${String((item as { id?: unknown }).id)}' out of a list: ${problem}`);
    return [];
  });
}
