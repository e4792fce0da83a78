import { badRequest } from "../wire/errors";
import type { Json, JsonObject } from "../wire/json";
import { printExpression, printFromWhere } from "./sql-print";

/**
 * GROUP BY, which the SQL engine cannot parse: the server takes the clause out (sql-support.ts),
 * has the engine read each row's group key and item, groups them here, and has the engine
 * evaluate the projection once per group (query.ts). Across partitions, the query plan hands the
 * SDK a per-range query in the gateway's form (`groupByItems`, `payload` with partial
 * aggregates) that the SDK merges, and the server runs that form the same way.
 */

type Node = { type: string; [key: string]: unknown };

/** The aggregate functions, by the names the query plan gives their merge in the SDK. */
export const AGGREGATE_TYPES: Record<string, string> = { COUNT: "Count", SUM: "Sum", MIN: "Min", MAX: "Max", AVG: "Average" };

export const aggregateName = (node: Node): string | undefined => {
  if (node.type !== "scalar_function_expression" || node.udf) return undefined;
  const name = String((node.name as Node).name).toUpperCase();
  return Object.hasOwn(AGGREGATE_TYPES, name) ? name : undefined;
};

/** The aggregate calls in `node`, depth first (an aggregate's own argument is not searched). */
export function aggregateCalls(node: unknown): Node[] {
  const found: Node[] = [];
  const walk = (value: unknown) => {
    if (typeof value !== "object" || value === null) return;
    if (aggregateName(value as Node)) found.push(value as Node);
    else Object.values(value).forEach(walk);
  };
  walk(node);
  return found;
}

/** A value's identity for DISTINCT and for groups: equal JSON, whatever the order of object keys. */
export function distinctKey(value: Json): string {
  if (Array.isArray(value)) return `[${value.map(distinctKey).join(",")}]`;
  if (value !== null && typeof value === "object")
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${distinctKey((value as JsonObject)[key])}`)
      .join(",")}}`;
  return JSON.stringify(value) ?? "undefined";
}

/**
 * Refuses a projection that reads the item outside the grouped expressions and the aggregates
 * (`SELECT c.id ... GROUP BY c.kind`), as Azure does: a group has no one `c.id`.
 */
export function checkGrouped(select: Node, grouping: Node[]): void {
  const grouped = new Set(grouping.map((expression) => printExpression(expression)));
  const walk = (value: unknown): void => {
    if (typeof value !== "object" || value === null) return;
    const node = value as Node;
    if (aggregateName(node)) return;
    const printed = safePrint(node);
    if (printed !== undefined && grouped.has(printed)) return;
    switch (node.type) {
      case "identifier":
      case "scalar_member_expression":
        throw badRequest(`'${printed}' in the SELECT clause is neither in the GROUP BY clause nor in an aggregate.`);
      case "scalar_function_expression":
        return (node.arguments as Node[]).forEach(walk);
      case "scalar_object_expression":
      case "object_constant":
        return (node.properties as { value: Node }[]).forEach((p) => walk(p.value));
      case "select_specification":
        if (node["*"]) throw badRequest("SELECT * is not valid with GROUP BY.");
        if (node.value !== undefined) return walk(node.value);
        return (((node.properties as Node | undefined)?.properties as { property: Node }[] | undefined) ?? []).forEach((p) => walk(p.property));
      default:
        Object.values(node).forEach(walk);
    }
  };
  walk(select);
}

const safePrint = (node: Node): string | undefined => {
  try {
    return printExpression(node);
  } catch {
    return undefined;
  }
};

/** The query the engine runs for the rows: each one's group key (undefined kept apart from null) and item. */
export function rowsQuery(body: Node, alias: string, grouping: Node[]): string {
  const key = grouping.map((e) => `{"v": ${printExpression(e)}}`).join(", ");
  return `SELECT VALUE {"key": [${key}], "item": ${alias}} ${printFromWhere(body)}`;
}

/** The items of each group, in the order their groups first appear. */
export function groupRows(rows: Json[]): JsonObject[][] {
  const groups = new Map<string, JsonObject[]>();
  for (const row of rows as { key: Json; item: JsonObject }[]) {
    const key = distinctKey(row.key);
    const items = groups.get(key);
    if (items) items.push(row.item);
    else groups.set(key, [row.item]);
  }
  return [...groups.values()];
}

/** What one range reports of an aggregate for the SDK to merge: MIN and MAX with a count (so an empty range is ignored), AVG as sum and count. */
export function partialAggregate(name: string, argument: Node | undefined): string {
  const of = argument ? printExpression(argument) : "1";
  if (name === "AVG") return `{"sum": SUM(${of}), "count": COUNT(${of})}`;
  if (name === "MIN" || name === "MAX") return `{"${name.toLowerCase()}": ${name}(${of}), "count": COUNT(${of})}`;
  return `${name}(${of})`;
}

/** The query plan's part for a GROUP BY query: the per-range query in the gateway's form, and how the SDK merges each alias. */
export function groupByPlan(body: Node, grouping: Node[]) {
  const select = body.select as Node;
  const printed = grouping.map((expression) => printExpression(expression));
  const partial = (node: Node) => `{"item": ${partialAggregate(aggregateName(node)!, (node.arguments as Node[])[0])}}`;
  const plain = (node: Node) => {
    if (aggregateCalls(node).length > 0)
      throw badRequest("An aggregate inside a larger expression of a GROUP BY query is not supported by the embedded server across partitions.");
    return printExpression(node);
  };
  const aliasToAggregate: Record<string, string | null> = {};
  let payload: string;
  const aggregates: string[] = [];
  if (select.value !== undefined) {
    const value = select.value as Node;
    const name = aggregateName(value);
    if (name) aggregates.push(AGGREGATE_TYPES[name]);
    payload = name ? `[${partial(value)}]` : plain(value);
  } else {
    const properties = ((select.properties as Node | undefined)?.properties as { property: Node; alias: Node | null }[] | undefined) ?? [];
    if (properties.length === 0) throw badRequest("SELECT * is not valid with GROUP BY.");
    const fields = properties.map(({ property, alias }, i) => {
      const key = (alias?.name ?? ((property.property as Node | undefined)?.name as string | undefined) ?? `$${i + 1}`) as string;
      const name = aggregateName(property);
      aliasToAggregate[key] = name ? AGGREGATE_TYPES[name] : null;
      return `${JSON.stringify(key)}: ${name ? partial(property) : plain(property)}`;
    });
    payload = `{${fields.join(", ")}}`;
  }
  const items = printed.map((e) => `{"item": ${e}}`).join(", ");
  return {
    rewrittenQuery: `SELECT [${items}] AS groupByItems, ${payload} AS payload ${printFromWhere(body)} GROUP BY ${printed.join(", ")}`,
    groupByExpressions: printed,
    groupByAliases: Object.keys(aliasToAggregate),
    groupByAliasToAggregateType: aliasToAggregate,
    aggregates,
  };
}
