import { badRequest, type CosmosError } from "../wire/errors";
import type { Json } from "../wire/json";

import type { ResumeFilter } from "./resume-filter";
import { issuedComponentQuery, issuedStatisticsQuery } from "./hybrid-plan";
import type { ComponentQuery, StatisticsQuery } from "./full-text-ranking";
import { parsedQuery, type SqlNode } from "./sql-parser";

/** A query as the client sends it (query.ts's QuerySpec, by shape: this module comes before it). */
interface QuerySpec {
  query: string;
  parameters?: { name: string; value: Json }[];
}

/**
 * What the embedded server's SQL engine (@zeit/cosmosdb-query, unmaintained since 2021) cannot
 * run, and the clauses the server applies around it (DISTINCT, GROUP BY, ORDER BY RANK, OFFSET
 * LIMIT), taken out of the query where the grammar found them. docs/sql.md lists both, and
 * test/query/sql-support.test.ts runs every construct it names. A construct that is valid on
 * Azure but not here is a 400 that says so: never a wrong result.
 */

/**
 * The text with string literals and parameter names blanked (same length, so positions hold), so
 * that a keyword inside a string, or a parameter named like one (`@like`), is no construct.
 */
const withoutStrings = (sql: string) =>
  sql
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, (literal) => `"${" ".repeat(literal.length - 2)}"`)
    .replace(/@\w+/g, (parameter) => `@${"_".repeat(parameter.length - 1)}`);

/** Valid Cosmos DB SQL the engine cannot parse or evaluate. */
export const UNSUPPORTED_CONSTRUCTS: readonly { construct: string; pattern: RegExp }[] = [
  {
    construct: "GROUP BY with JOIN, ORDER BY, TOP, DISTINCT or OFFSET ... LIMIT",
    pattern: /^(?=[\s\S]*\bGROUP\s+BY\b)(?=[\s\S]*(\bJOIN\b|\bORDER\s+BY\b|\bTOP\b|\bDISTINCT\b|\bOFFSET\b))/i,
  },
  {
    construct: "DISTINCT with ORDER BY, TOP or an aggregate",
    pattern: /^\s*SELECT\s+DISTINCT\b(?=[\s\S]*(\bORDER\s+BY\b|\bTOP\b|\b(COUNT|SUM|MIN|MAX|AVG)\s*\())/i,
  },
  { construct: "OFFSET ... LIMIT with TOP", pattern: /^(?=[\s\S]*\bOFFSET\b)(?=[\s\S]*\bTOP\b)/i },
  ...["RegexMatch", "DocumentId"].map((name) => ({
    construct: name,
    pattern: new RegExp(`\\b${name}\\s*\\(`, "i"),
  })),
];

const notSupported = (construct: string): CosmosError =>
  badRequest(`${construct} is valid Cosmos DB SQL, but not supported by the embedded server (see docs/sql.md).`);

/** Throws a 400 naming the first construct of `sql` the embedded server cannot run. */
export function refuseUnsupported(sql: string): void {
  const text = withoutStrings(sql);
  const found = UNSUPPORTED_CONSTRUCTS.find(({ pattern }) => pattern.test(text));
  if (found) throw notSupported(found.construct);
}

/** The engine's error for a function it does not know (`$b.NAME is not a function`), as the same 400. */
export function unknownFunction(error: Error): CosmosError | undefined {
  const name = /\$b\.(\w+) is not a function/.exec(error.message)?.[1];
  return name ? notSupported(`The function ${name}`) : undefined;
}

/** A query with the clauses the server applies around the engine taken out. */
export interface ShapedQuery {
  /** The query as the client sent it. */
  source: QuerySpec;
  /** What the engine runs. */
  spec: QuerySpec;
  distinct: boolean;
  offset?: number;
  limit?: number;
  /** The GROUP BY clause's expressions, as written, for the server to group by. */
  groupBy?: string;
  /** Where a cross-partition ORDER BY resumes (the .NET SDK's resume filter), applied by the server to the results. */
  resume?: ResumeFilter;
  /** A ranking the engine cannot run (ORDER BY RANK, a hybrid search plan's queries), applied by the server: full-text-ranking.ts. */
  ranking?: RankingClause;
}

/**
 * The ranking a query asks for: `ORDER BY RANK <expression>` as written (query.ts parses it; TOP
 * goes with it, or the engine would take the first items before they are ranked), or one of the
 * hybrid search plan's own queries, recognized as issued (hybrid-plan.ts).
 */
export type RankingClause = { kind: "rank"; expression: string; top?: number } | ComponentQuery | StatisticsQuery;

/** The non-negative integer a clause names: a number, or a parameter's value. */
function count(node: SqlNode, parameters: QuerySpec["parameters"], clause: string): number {
  const value: Json | undefined = node.type === "parameter_name" ? parameters?.find((p) => p.name === node.name)?.value : (node.value as Json);
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0) throw badRequest(`${clause} needs a non-negative integer.`);
  return value;
}

/** A vetted query shaped (400 for what the server cannot run), once: the plan and the execution both take it. */
export function prepareQuery(spec: QuerySpec, resume?: ResumeFilter): ShapedQuery {
  const issued = issuedStatisticsQuery(spec.query) ?? issuedComponentQuery(spec.query);
  // The hybrid plan's own queries are the server's: only what the client wrote is vetted.
  if (issued) return { source: spec, spec, distinct: false, ranking: issued };
  refuseUnsupported(spec.query);
  const shaped = shapeOf(spec);
  return resume ? { ...shaped, resume } : shaped;
}

/** Where a clause the grammar found begins and ends in the text. */
interface Span {
  start: number;
  end: number;
}

/** The clauses of a query the server applies around the engine, as the grammar found them (sql.peggy's outer_select). */
interface Clauses {
  distinct: Span | null;
  top: (Span & { node: SqlNode }) | null;
  groupBy: (Span & { text: string }) | null;
  rank: (Span & { text: string }) | null;
  page: (Span & { skip: SqlNode; take: SqlNode }) | null;
}

/** `text` without the spans. */
const without = (text: string, spans: Span[]) =>
  [...spans].sort((a, b) => b.start - a.start).reduce((rest, { start, end }) => rest.slice(0, start) + rest.slice(end), text);

/**
 * Takes DISTINCT, GROUP BY, ORDER BY RANK (and TOP with it: the engine would take the first items
 * before they are ranked) and OFFSET LIMIT out of the query, where the grammar found them, for the
 * server to apply.
 */
function shapeOf(spec: QuerySpec): ShapedQuery {
  const clauses = (parsedQuery(spec.query).body as SqlNode).clauses as Clauses | undefined;
  if (!clauses) return { source: spec, spec, distinct: false };
  const { distinct, top, groupBy, rank, page } = clauses;
  const spans = [distinct, groupBy, rank, page, rank ? top : null].filter((span): span is Span & Clauses["top"] & object => span !== null);
  return {
    source: spec,
    spec: { ...spec, query: without(spec.query, spans) },
    distinct: distinct !== null,
    ...(groupBy ? { groupBy: groupBy.text } : {}),
    ...(page ? { offset: count(page.skip, spec.parameters, "OFFSET"), limit: count(page.take, spec.parameters, "LIMIT") } : {}),
    ...(rank ? { ranking: { kind: "rank", expression: rank.text, top: top ? count(top.node.value as SqlNode, spec.parameters, "TOP") : undefined } } : {}),
  };
}
