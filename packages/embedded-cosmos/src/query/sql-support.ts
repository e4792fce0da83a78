import { badRequest, type CosmosError } from "../wire/errors";
import type { Json } from "../wire/json";

import type { ResumeFilter } from "./resume-filter";
import { issuedComponentQuery, issuedStatisticsQuery } from "./hybrid-plan";
import type { ComponentQuery, StatisticsQuery } from "./full-text-ranking";

/** A query as the client sends it (query.ts's QuerySpec, by shape: this module comes before it). */
interface QuerySpec {
  query: string;
  parameters?: { name: string; value: Json }[];
}

/**
 * What the embedded server's SQL engine (@zeit/cosmosdb-query, unmaintained since 2021) cannot
 * run, and the two clauses the server adds around it. docs/sql.md lists both, and
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

function count(token: string, parameters: QuerySpec["parameters"], clause: string): number {
  const value: Json | undefined = token.startsWith("@") ? parameters?.find((p) => p.name === token)?.value : Number(token);
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0) throw badRequest(`${clause} needs a non-negative integer.`);
  return value;
}

/** A query vetted (400 for what the server cannot run) and shaped, once: the plan and the execution both take it. */
export function prepareQuery(spec: QuerySpec, resume?: ResumeFilter): ShapedQuery {
  const shaped = shapeOf(spec);
  // The hybrid plan's own queries are the server's: only what the client wrote is vetted.
  if (shaped.ranking?.kind !== "statistics" && shaped.ranking?.kind !== "component") refuseUnsupported(spec.query);
  return resume ? { ...shaped, resume } : shaped;
}

/** `ORDER BY RANK ...` at the end of `sql`, and TOP, taken out; undefined when it has none. */
function rankingOf(sql: string, parameters: QuerySpec["parameters"]): { query: string; ranking: RankingClause } | undefined {
  const clause = /\s+ORDER\s+BY\s+RANK\s+/i.exec(withoutStrings(sql));
  if (!clause) return undefined;
  let query = sql.slice(0, clause.index);
  const top = /^(\s*SELECT\s+)TOP\s+(@\w+|\d+)\s+/i.exec(query);
  if (top) query = top[1] + query.slice(top[0].length);
  const expression = sql.slice(clause.index + clause[0].length).trim();
  return { query, ranking: { kind: "rank", expression, top: top ? count(top[2], parameters, "TOP") : undefined } };
}

/** Takes `SELECT DISTINCT`, a trailing `OFFSET n LIMIT m`, `GROUP BY ...` and a ranking clause out of the query, for the server to apply. */
function shapeOf(spec: QuerySpec): ShapedQuery {
  const issued = issuedStatisticsQuery(spec.query) ?? issuedComponentQuery(spec.query);
  if (issued) return { source: spec, spec, distinct: false, ranking: issued };
  const grouping = /\s+GROUP\s+BY\s+(?=\S)/i.exec(withoutStrings(spec.query));
  if (grouping)
    return {
      source: spec,
      spec: { ...spec, query: spec.query.slice(0, grouping.index) },
      distinct: false,
      groupBy: spec.query.slice(grouping.index + grouping[0].length).trim(),
    };
  let sql = spec.query;
  const distinct = /^\s*SELECT\s+DISTINCT\b/i.test(withoutStrings(sql));
  if (distinct) sql = sql.replace(/^(\s*SELECT\s+)DISTINCT\b/i, "$1");
  const paging = /\s+OFFSET\s+(@\w+|\d+)\s+LIMIT\s+(@\w+|\d+)\s*$/i.exec(sql);
  const ranked = rankingOf(paging ? sql.slice(0, paging.index) : sql, spec.parameters);
  const query = ranked?.query ?? (paging ? sql.slice(0, paging.index) : sql);
  return {
    source: spec,
    spec: { ...spec, query },
    distinct,
    ...(paging ? { offset: count(paging[1], spec.parameters, "OFFSET"), limit: count(paging[2], spec.parameters, "LIMIT") } : {}),
    ...(ranked ? { ranking: ranked.ranking } : {}),
  };
}
