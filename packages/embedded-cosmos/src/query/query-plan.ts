import { badRequest, CosmosError } from "../wire/errors";
import type { QuerySpec } from "./query";
import { compiled, groupingOf } from "./query";
import { aggregateName, AGGREGATE_TYPES, groupByPlan, partialAggregate } from "./group-by";
import type { Json } from "../wire/json";
import { fromAlias, printExpression, printFromWhere, projectionExpression } from "./sql-print";
import type { ShapedQuery } from "./sql-support";
import { hybridSearchQueryInfo, type HybridSearchQueryInfo } from "./hybrid-plan";
import { rankOf } from "./full-text-ranking";

type Node = { type: string; [key: string]: unknown };

const FILTER = "{documentdb-formattableorderbyquery-filter}";

export interface QueryPlan {
  partitionedQueryExecutionInfoVersion: number;
  /** For ORDER BY RANK: the SDKs' own full-text search pipeline (hybrid-plan.ts), in place of queryInfo. */
  hybridSearchQueryInfo?: HybridSearchQueryInfo;
  queryInfo?: {
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
  if (shaped.ranking?.kind === "rank") return rankedPlan(shaped, shaped.ranking);
  // The hybrid plan's own queries run range by range as they are: nothing to merge.
  if (shaped.ranking) return { partitionedQueryExecutionInfoVersion: 2, queryInfo: asIs(shaped.source.query), queryRanges: ALL_RANGES };
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
    queryRanges: ALL_RANGES,
  };
}

const ALL_RANGES = [{ min: "", max: "FF", isMinInclusive: true, isMaxInclusive: false }];

/** A plan that runs the query on each range as it is. */
const asIs = (query: string): NonNullable<QueryPlan["queryInfo"]> => ({
  distinctType: "None",
  top: null,
  offset: null,
  limit: null,
  orderBy: [],
  orderByExpressions: [],
  groupByExpressions: [],
  groupByAliases: [],
  aggregates: [],
  groupByAliasToAggregateType: {},
  rewrittenQuery: query,
  hasSelectValue: false,
  dCountInfo: null,
  hasNonStreamingOrderBy: false,
});

/** ORDER BY RANK's plan: the hybrid search pipeline both SDKs run (statistics, then components, then fusion). */
function rankedPlan(shaped: ShapedQuery, ranking: { expression: string; top?: number }): QueryPlan {
  const body = compiled(shaped.spec.query).ast.body as Node;
  const alias = fromAlias(body);
  const expression = ((compiled(`SELECT VALUE ${ranking.expression} FROM ${alias}`).ast.body as Node).select as Node).value as Node;
  const rank = rankOf(expression, alias, shaped.spec.parameters, printExpression, ranking.top);
  const query = {
    projection: projectionExpression(body, alias),
    fromWhere: (filter?: string) => printFromWhere(body, filter),
    hasSelectValue: (body.select as Node).value !== undefined,
  };
  return {
    partitionedQueryExecutionInfoVersion: 2,
    hybridSearchQueryInfo: hybridSearchQueryInfo(rank, query, shaped.offset, ranking.top ?? shaped.limit),
    queryRanges: ALL_RANGES,
  };
}

/** Whether the results of per-range queries must be merged by the SDK (ORDER BY, TOP, aggregates, GROUP BY, DISTINCT, OFFSET ... LIMIT). */
export function needsPipeline(plan: QueryPlan): boolean {
  const info = plan.queryInfo;
  if (!info) return true;
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
