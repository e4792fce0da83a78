import { badRequest, CosmosError } from "../wire/errors";
import type { QuerySpec } from "./query";
import { compiled, groupingOf } from "./query";
import { aggregateName, AGGREGATE_TYPES, groupByPlan, partialAggregate } from "./group-by";
import type { Json } from "../wire/json";
import { fromAlias, printExpression, printFromWhere, projectionExpression } from "./sql-print";
import type { ShapedQuery } from "./sql-support";

type Node = { type: string; [key: string]: unknown };

const FILTER = "{documentdb-formattableorderbyquery-filter}";

export interface QueryPlan {
  partitionedQueryExecutionInfoVersion: number;
  queryInfo: {
    distinctType: "None" | "Unordered";
    top: number | null;
    offset: number | null;
    limit: number | null;
    orderBy: ("Ascending" | "Descending")[];
    orderByExpressions: string[];
    groupByExpressions: string[];
    groupByAliases: string[];
    aggregates: string[];
    groupByAliasToAggregateType: Record<string, string | null>;
    rewrittenQuery: string;
    hasSelectValue: boolean;
    dCountInfo: null;
    hasNonStreamingOrderBy: boolean;
  };
  queryRanges: { min: string; max: string; isMinInclusive: boolean; isMaxInclusive: boolean }[];
}

/** TOP's count: a number, or a parameter holding one. */
function resolveTop(top: Node | null, parameters: QuerySpec["parameters"]): number | null {
  if (!top) return null;
  const node = top.value as Node;
  const value: Json | undefined = node.type === "parameter_name" ? parameters?.find((p) => p.name === node.name)?.value : (node.value as Json);
  if (typeof value !== "number") throw badRequest("TOP needs a number.");
  return value;
}

/** The one aggregate a `SELECT VALUE AGG(...)` query computes, if that is its shape. */
function valueAggregate(select: Node): { name: string; argument: Node } | undefined {
  const value = select.value as Node | undefined;
  const name = value && aggregateName(value);
  return name ? { name, argument: (value.arguments as Node[])[0] } : undefined;
}

/**
 * The query plan the gateway answers the SDK's plan request with: for ORDER BY, TOP, VALUE
 * aggregates and GROUP BY, how to split the query into per-range queries (`rewrittenQuery`) and how to merge
 * their results; for anything else, run it as is.
 */
export function planOf(shaped: ShapedQuery): QueryPlan {
  const spec = shaped.source;
  const body = compiled(shaped.spec.query).ast.body as Node;
  const select = body.select as Node;
  const alias = fromAlias(body);
  const top = resolveTop(body.top as Node | null, spec.parameters);
  const orderBy = ((body.orderBy as Node | null)?.expressions as Node[] | undefined) ?? [];
  const grouping = groupingOf(shaped);
  const grouped = grouping ? groupByPlan(body, grouping) : undefined;
  const aggregate = grouped ? undefined : valueAggregate(select);
  let rewrittenQuery = "";
  if (grouped) {
    rewrittenQuery = grouped.rewrittenQuery;
  } else if (orderBy.length > 0) {
    const items = orderBy.map((e) => `{"item": ${printExpression(e.expression as Node)}}`).join(", ");
    const order = orderBy.map((e) => `${printExpression(e.expression as Node)} ${(e.order as string) ?? "ASC"}`).join(", ");
    // With OFFSET ... LIMIT, each range gives its first offset + limit; the SDK merges, skips and takes.
    const first = shaped.limit !== undefined ? shaped.offset! + shaped.limit : top;
    rewrittenQuery = `SELECT ${first !== null ? `TOP ${first} ` : ""}${alias}._rid, [${items}] AS orderByItems, ${projectionExpression(body, alias)} AS payload ${printFromWhere(body, FILTER)} ORDER BY ${order}`;
  } else if (aggregate) {
    rewrittenQuery = `SELECT VALUE [{"item": ${partialAggregate(aggregate.name, aggregate.argument)}}] ${printFromWhere(body)}`;
  } else if (shaped.limit !== undefined && !shaped.distinct) {
    // Each range gives what the whole page could need; the SDK skips and takes across ranges.
    rewrittenQuery = `${shaped.spec.query} OFFSET 0 LIMIT ${shaped.offset! + shaped.limit}`;
  } else if (shaped.limit !== undefined) {
    // DISTINCT across ranges first: each range gives all its distinct values.
    rewrittenQuery = spec.query.replace(/\s+OFFSET\s+\S+\s+LIMIT\s+\S+\s*$/i, "");
  }
  return {
    partitionedQueryExecutionInfoVersion: 2,
    queryInfo: {
      distinctType: shaped.distinct ? "Unordered" : "None",
      top,
      offset: shaped.offset ?? null,
      limit: shaped.limit ?? null,
      orderBy: orderBy.map((e) => ((e.order as string)?.toUpperCase() === "DESC" ? "Descending" : "Ascending")),
      orderByExpressions: orderBy.map((e) => printExpression(e.expression as Node)),
      groupByExpressions: grouped?.groupByExpressions ?? [],
      groupByAliases: grouped?.groupByAliases ?? [],
      aggregates: grouped?.aggregates ?? (aggregate ? [AGGREGATE_TYPES[aggregate.name]] : []),
      groupByAliasToAggregateType: grouped?.groupByAliasToAggregateType ?? {},
      rewrittenQuery,
      hasSelectValue: select.value !== undefined,
      dCountInfo: null,
      hasNonStreamingOrderBy: false,
    },
    queryRanges: [{ min: "", max: "FF", isMinInclusive: true, isMaxInclusive: false }],
  };
}

/** Whether the results of per-range queries must be merged by the SDK (ORDER BY, TOP, aggregates, GROUP BY, DISTINCT, OFFSET ... LIMIT). */
export function needsPipeline(plan: QueryPlan): boolean {
  const info = plan.queryInfo;
  return (
    info.orderBy.length > 0 ||
    info.top !== null ||
    info.aggregates.length > 0 ||
    info.groupByExpressions.length > 0 ||
    info.distinctType !== "None" ||
    info.limit !== null
  );
}

/**
 * What the gateway answers a cross-partition query that only the SDK's pipeline can run: 400
 * with the plan attached, which makes the SDK build its pipeline and query each range.
 */
export function pipelineRequired(plan: QueryPlan): CosmosError {
  const error = new CosmosError(
    400,
    "BadRequest",
    "Cross partition query only supports 'VALUE <AggregateFunc>' for aggregates; this query needs the client's query pipeline.",
  );
  error.additionalErrorInfo = JSON.stringify(plan);
  return error;
}
