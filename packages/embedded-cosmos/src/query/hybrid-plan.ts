// The gateway's plan for ORDER BY RANK across partitions (`hybridSearchQueryInfo`), which both
// SDKs run with a pipeline of their own: the statistics query on every range, added up; then
// each component query (one per FullTextScore) on every range, with the statistics put in its
// placeholders, merged by score; then, for RRF, the fusion of the components' ranks; then skip
// and take. The shape is the one the SDKs' own tests hold the gateway's plans to.
import { badRequest } from "../wire/errors";
import type { ComponentQuery, Rank, ScoreComponent, StatisticsQuery } from "./full-text-ranking";
import type { TextStatistics } from "./full-text-scoring";

const DOCUMENT_COUNT = "{documentdb-formattablehybridsearchquery-totaldocumentcount}";
const wordCount = (i: number) => `{documentdb-formattablehybridsearchquery-totalwordcount-${i}}`;
const hitCounts = (i: number) => `{documentdb-formattablehybridsearchquery-hitcountsarray-${i}}`;
/** Where the SDK's ORDER BY pipeline puts its resume condition (`true` on a first page). */
const ORDER_BY_FILTER = "{documentdb-formattableorderbyquery-filter}";

/**
 * How many results each range gives per component: at least what the page needs. For RRF a
 * result can rank low in one component and high in the fused order, so each component gives
 * more than the page; Azure does not document its figure, and its plans seen in the SDKs' tests
 * ask 120 for a page of 10.
 */
const COMPONENT_RESULTS = 120;

export interface HybridSearchQueryInfo {
  globalStatisticsQuery: string;
  componentQueryInfos: ComponentQueryInfo[];
  componentWithoutPayloadQueryInfos: [];
  projectionQueryInfo: null;
  componentWeights?: number[];
  skip: number | null;
  take: number | null;
  requiresGlobalStatistics: true;
}

interface ComponentQueryInfo {
  distinctType: "None";
  top: number;
  offset: null;
  limit: null;
  orderBy: ["Descending"];
  orderByExpressions: [string];
  groupByExpressions: [];
  groupByAliases: [];
  aggregates: [];
  groupByAliasToAggregateType: Record<string, never>;
  rewrittenQuery: string;
  hasSelectValue: boolean;
  dCountInfo: null;
  hasNonStreamingOrderBy: true;
}

/** Plans this server issued lately, by query text: how many of each kind it keeps. */
const ISSUED_QUERIES = 1_000;

/** Keeps `value` under `key` in a map of at most ISSUED_QUERIES entries, the oldest going first. */
function remember<T>(map: Map<string, T>, key: string, value: T): void {
  if (map.size >= ISSUED_QUERIES && !map.has(key)) map.delete(map.keys().next().value as string);
  map.set(key, value);
}

/** The statistics queries this server has issued, by text: the SDK sends each back as it was given. */
const issued = new Map<string, StatisticsQuery>();

/** The statistics query `text`, if this server issued it in a plan. */
export const issuedStatisticsQuery = (text: string): StatisticsQuery | undefined => issued.get(text);

/** A component query as issued: its text cut at its placeholders, and what it runs. */
interface ComponentTemplate {
  /** The text between the placeholders (one more than there are placeholders). */
  chunks: string[];
  /** Each placeholder's name, in order. */
  placeholders: string[];
  query: Omit<ComponentQuery, "statistics">;
}

/** The component queries this server has issued, by the text before their first placeholder. */
const components = new Map<string, ComponentTemplate[]>();
const PLACEHOLDER = /\{documentdb-formattable[a-z-]+(?:-\d+)?\}/g;

function rememberComponent(text: string, query: Omit<ComponentQuery, "statistics">): void {
  const chunks = text.split(PLACEHOLDER);
  const template = { chunks, placeholders: text.match(PLACEHOLDER) ?? [], query };
  const same = (components.get(chunks[0]) ?? []).filter((t) => t.chunks.join("\0") !== chunks.join("\0"));
  remember(components, chunks[0], [...same, template]);
}

/** What the SDK put in a template's placeholders, if `text` is that template filled in. */
function filledIn(template: ComponentTemplate, text: string): string[] | undefined {
  const values: string[] = [];
  let at = template.chunks[0].length;
  for (let i = 1; i < template.chunks.length; i++) {
    const chunk = template.chunks[i];
    const end = i === template.chunks.length - 1 && chunk.length === 0 ? text.length : text.indexOf(chunk, at);
    if (end < 0) return undefined;
    values.push(text.slice(at, end));
    at = end + chunk.length;
  }
  return at === text.length ? values : undefined;
}

/** The statistics a filled-in component query carries, per component. */
function statisticsIn(template: ComponentTemplate, values: string[]): TextStatistics[] | undefined {
  const statistics = template.query.rank.components.map(() => ({ documentCount: 0, totalWordCount: 0, hitCounts: [] as number[] }));
  for (const [i, placeholder] of template.placeholders.entries()) {
    const value = values[i].trim();
    const index = Number(/-(\d+)\}$/.exec(placeholder)?.[1]);
    if (placeholder === DOCUMENT_COUNT) statistics.forEach((s) => (s.documentCount = Number(value)));
    else if (placeholder === wordCount(index)) statistics[index].totalWordCount = Number(value);
    else if (placeholder === hitCounts(index)) statistics[index].hitCounts = JSON.parse(value) as number[];
    // The SDKs drain a component query in pages, never resuming it by a filter: its first page's `true`.
    else if (placeholder === ORDER_BY_FILTER && value !== "true") return undefined;
  }
  return statistics;
}

/** The component query `text`, if it is one this server issued, with the statistics the SDK filled in. */
export function issuedComponentQuery(text: string): ComponentQuery | undefined {
  if (!text.includes("_FullTextScore(")) return undefined;
  for (const [prefix, templates] of components) {
    if (!text.startsWith(prefix)) continue;
    for (const template of templates) {
      const values = filledIn(template, text);
      const statistics = values && statisticsIn(template, values);
      if (statistics) return { ...template.query, statistics };
    }
  }
  return undefined;
}

const literal = (keyword: unknown) => JSON.stringify(keyword);

/** `SELECT COUNT(1) AS documentCount, [{"totalWordCount": ..., "hitCounts": [...]}, ...] AS fullTextStatistics FROM c` */
function statisticsQuery(scored: readonly ScoreComponent[], alias: string): string {
  const perComponent = scored.map(
    (c) =>
      `{"totalWordCount": SUM(_FullTextWordCount(${c.expression})), "hitCounts": [${c.keywords.map((k) => `COUNTIF(FullTextContains(${c.expression}, ${literal(k)}))`).join(", ")}]}`,
  );
  const text = `SELECT COUNT(1) AS documentCount, [${perComponent.join(", ")}] AS fullTextStatistics\nFROM ${alias}`;
  remember(issued, text, { kind: "statistics", components: [...scored] });
  return text;
}

/** A component's score with the statistics left as the placeholders the SDK fills in. */
const score = (c: ScoreComponent, i: number) =>
  `_FullTextScore(${c.expression}, [${c.keywords.map(literal).join(", ")}], ${DOCUMENT_COUNT}, ${wordCount(i)}, ${hitCounts(i)})`;

/**
 * The plan for a ranked query: `projection` is what the query selects as one expression,
 * `fromWhere` its FROM and WHERE with the order-by filter added, `hasSelectValue` whether it
 * selects a VALUE; `skip` and `take` its OFFSET ... LIMIT, or TOP's count as `take`.
 */
export function hybridSearchQueryInfo(
  rank: Rank,
  query: { projection: string; fromWhere: (filter?: string) => string; hasSelectValue: boolean },
  skip: number | undefined,
  take: number | undefined,
): HybridSearchQueryInfo {
  if (take === undefined) throw badRequest("A query with ORDER BY RANK needs TOP or OFFSET ... LIMIT: a search returns its best results, not all of them.");
  const scores = rank.components.map(score);
  const top = Math.max(COMPONENT_RESULTS, (skip ?? 0) + take);
  const componentQueryInfos = scores.map((expression, index): ComponentQueryInfo => {
    const rewrittenQuery =
      `SELECT TOP ${top} ${rank.alias}._rid, [{"item": ${expression}}] AS orderByItems, ` +
      `{"payload": ${query.projection}, "componentScores": [${scores.join(", ")}]} AS payload\n` +
      `${query.fromWhere(ORDER_BY_FILTER)}\nORDER BY ${expression} DESC`;
    rememberComponent(rewrittenQuery, { kind: "component", rank, index, projection: query.projection, fromWhere: query.fromWhere(), top });
    return {
      distinctType: "None",
      top,
      offset: null,
      limit: null,
      orderBy: ["Descending"],
      orderByExpressions: [expression],
      groupByExpressions: [],
      groupByAliases: [],
      aggregates: [],
      groupByAliasToAggregateType: {},
      rewrittenQuery,
      hasSelectValue: query.hasSelectValue,
      dCountInfo: null,
      hasNonStreamingOrderBy: true,
    };
  });
  return {
    globalStatisticsQuery: statisticsQuery(rank.components, rank.alias),
    componentQueryInfos,
    componentWithoutPayloadQueryInfos: [],
    projectionQueryInfo: null,
    ...(rank.weights ? { componentWeights: rank.weights } : {}),
    skip: skip ?? null,
    take,
    requiresGlobalStatistics: true,
  };
}
