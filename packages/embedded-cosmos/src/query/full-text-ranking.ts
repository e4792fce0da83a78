// ORDER BY RANK, which the SQL engine cannot evaluate, run around it: the rank expression is taken
// out of the query, the rest finds the candidates, and the candidates are scored here with the
// statistics of the whole container. Also the two forms of the gateway's hybrid search plan the
// SDKs send back (hybrid-plan.ts writes them and knows them again): the statistics
// query, and the component queries ordered by `_FullTextScore(...)`.
import { badRequest } from "../wire/errors";
import type { Json, JsonObject } from "../wire/json";
import { memberPath } from "./candidates";
import { valuesAt } from "./indexes";
import { bm25, statisticsOf, type TextStatistics } from "./full-text-scoring";

type Node = { type: string; [key: string]: unknown };

/** One `FullTextScore(path, keyword, ...)`: the searched property path and its keywords. */
export interface ScoreComponent {
  /** The path as the query names it (`c.title`), for the plan's rewritten queries. */
  expression: string;
  /** The property path under the item (`["title"]`), to read the text by. */
  path: string[];
  keywords: Json[];
}

/** `ORDER BY RANK FullTextScore(...)` or `ORDER BY RANK RRF(FullTextScore(...), ..., [weights])`. */
export interface Rank {
  kind: "rank";
  alias: string;
  components: ScoreComponent[];
  /** RRF's weights, one per component (1 each when none are given). */
  weights?: number[];
  top?: number;
}

/**
 * A component query of the hybrid plan, as the SDK sends it back (its statistics filled in),
 * recognized by the template it was issued from (hybrid-plan.ts): the engine's evaluation
 * cannot order by a computed score.
 */
export interface ComponentQuery {
  kind: "component";
  rank: Rank;
  /** The component this query orders by. */
  index: number;
  /** Each component's statistics, as the SDK added them up over the ranges. */
  statistics: TextStatistics[];
  /** What the ranked query selects, as one expression; its FROM and WHERE. */
  projection: string;
  fromWhere: string;
  top: number;
}

/** The plan's statistics query, as this server issued it. */
export interface StatisticsQuery {
  kind: "statistics";
  components: ScoreComponent[];
}

/** Reciprocal rank fusion's constant, as Azure's SDKs use it. */
const RRF_K = 60;

const isNode = (value: unknown): value is Node => typeof value === "object" && value !== null && typeof (value as Node).type === "string";

/** A keyword argument's values: a string, a parameter holding a string or strings, or an array of strings. */
function keywordsOf(node: Node, parameters: Map<string, Json>): Json[] {
  let value: unknown;
  if (node.type === "string_constant") value = node.value;
  else if (node.type === "parameter_name") value = parameters.get(node.name as string);
  else if (node.type === "array_constant") value = (node.elements as Node[]).flatMap((element) => keywordsOf(element, parameters));
  const values = Array.isArray(value) ? value : [value];
  if (values.length === 0 || !values.every((v) => typeof v === "string")) throw badRequest("FullTextScore's keywords must be strings.");
  return values as Json[];
}

const functionName = (node: Node) => String((node.name as Node).name).toUpperCase();

/** One `FullTextScore(path, keywords...)` call, read from the parsed rank expression. */
function scoreComponent(node: unknown, alias: string, parameters: Map<string, Json>, print: (node: Node) => string): ScoreComponent {
  if (!isNode(node) || node.type !== "scalar_function_expression" || functionName(node) !== "FULLTEXTSCORE")
    throw badRequest("ORDER BY RANK takes FullTextScore(...), or RRF of FullTextScore(...) calls.");
  const [target, ...keywords] = node.arguments as Node[];
  const path = memberPath(target, alias);
  if (!path) throw badRequest("FullTextScore's first argument must be a property path of the item, as the full-text policy names it.");
  if (keywords.length === 0) throw badRequest("FullTextScore needs at least one keyword.");
  return { expression: print(target), path, keywords: keywords.flatMap((keyword) => keywordsOf(keyword, parameters)) };
}

/** The rank expression (parsed as `SELECT VALUE <expression> FROM <alias>`) as components and weights. */
export function rankOf(expression: Node, alias: string, parameters: QueryParameters, print: (node: Node) => string, top?: number): Rank {
  const values = new Map((parameters ?? []).map((p) => [p.name, p.value] as const));
  if (isNode(expression) && expression.type === "scalar_function_expression" && functionName(expression) === "RRF") {
    const args = expression.arguments as Node[];
    const weighted = args.length > 1 && args[args.length - 1].type !== "scalar_function_expression";
    const components = (weighted ? args.slice(0, -1) : args).map((arg) => scoreComponent(arg, alias, values, print));
    if (components.length < 2) throw badRequest("RRF needs at least two scoring functions.");
    const weights = weighted ? weightsOf(args[args.length - 1], values, components.length) : undefined;
    return { kind: "rank", alias, components, weights, top };
  }
  return { kind: "rank", alias, components: [scoreComponent(expression, alias, values, print)], top };
}

type QueryParameters = { name: string; value: Json }[] | undefined;

function weightsOf(node: Node, parameters: Map<string, Json>, count: number): number[] {
  const value =
    node.type === "parameter_name"
      ? parameters.get(node.name as string)
      : node.type === "array_constant"
        ? (node.elements as Node[]).map((e) => e.value)
        : undefined;
  if (!Array.isArray(value) || value.length !== count || !value.every((w) => typeof w === "number" && Number.isFinite(w)))
    throw badRequest(`RRF's weights must be an array of ${count} numbers, one per scoring function.`);
  return value as number[];
}

/** The text at a property path of an item. */
const textAt = (item: JsonObject, path: string[]): unknown => valuesAt(item, path)[0];

/** Each component's statistics over the whole container's items. */
export function containerStatistics(components: readonly ScoreComponent[], items: readonly JsonObject[]): TextStatistics[] {
  return components.map((component) =>
    statisticsOf(
      items.map((item) => textAt(item, component.path)),
      component.keywords,
    ),
  );
}

/** Dense ranks (1 for the best; equal scores, equal ranks), as the SDKs rank a component's scores. */
function ranks(scores: readonly number[]): number[] {
  const order = scores.map((score, index) => ({ score, index })).sort((a, b) => b.score - a.score);
  const result = new Array<number>(scores.length);
  let rank = 0;
  order.forEach((entry, i) => {
    if (i === 0 || entry.score !== order[i - 1].score) rank++;
    result[entry.index] = rank;
  });
  return result;
}

/** A candidate of a ranked query: the item it was found by, and what the query projects of it. */
export interface Candidate {
  item: JsonObject;
  row: Json;
}

/**
 * The candidates in rank order: by BM25 alone for one component, by reciprocal rank fusion of the
 * components' ranks for RRF (weight / (60 + rank), summed). Equal ones keep document order.
 */
export function ranked(candidates: readonly Candidate[], rank: Rank, statistics: readonly TextStatistics[]): Json[] {
  const scores = rank.components.map((component, i) => candidates.map(({ item }) => bm25(textAt(item, component.path), component.keywords, statistics[i])));
  const componentRanks = scores.map(ranks);
  const fused =
    rank.components.length === 1
      ? scores[0]
      : candidates.map((_, c) => componentRanks.reduce((sum, rankOfEach, i) => sum + (rank.weights?.[i] ?? 1) / (RRF_K + rankOfEach[c]), 0));
  const order = candidates.map((_, index) => index).sort((a, b) => fused[b] - fused[a] || a - b);
  const rows = order.map((index) => candidates[index].row);
  return rank.top === undefined ? rows : rows.slice(0, rank.top);
}

/**
 * A component query's rows, best first, at most its TOP: each candidate's `_rid`, its score as
 * the ORDER BY item the SDK merges the ranges by, and as payload what the query selects with
 * every component's score (the SDK ranks each component by them for RRF).
 */
export function componentRows(candidates: readonly Candidate[], query: ComponentQuery): Json[] {
  const rows = candidates.map(({ item, row }) => {
    const scores = query.rank.components.map((component, i) => bm25(textAt(item, component.path), component.keywords, query.statistics[i]));
    return { _rid: item._rid as string, orderByItems: [{ item: scores[query.index] }], payload: { payload: row, componentScores: scores } };
  });
  const order = rows.map((_, index) => index).sort((a, b) => rows[b].orderByItems[0].item - rows[a].orderByItems[0].item || a - b);
  return order.slice(0, query.top).map((index) => rows[index]);
}

/** The statistics query's one result for its scope's items: what the SDKs add up over the partitions. */
export function statisticsResult(query: StatisticsQuery, items: readonly JsonObject[]): Json[] {
  const statistics = containerStatistics(query.components, items);
  return [{ documentCount: items.length, fullTextStatistics: statistics.map(({ totalWordCount, hitCounts }) => ({ totalWordCount, hitCounts })) }];
}
