import { badRequest, type CosmosError } from "../wire/errors";
import type { Json } from "../wire/json";

import type { ResumeFilter } from "./resume-filter";
import { issuedComponentQuery, issuedStatisticsQuery } from "./hybrid-plan";
import type { ComponentQuery, StatisticsQuery } from "./full-text-ranking";
import { functionsCalled, nodesOf, parsedQuery, type SqlNode } from "./sql-parser";

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

/** The query's own select, its clauses (sql.peggy's outer_select) and how many JOINs it has. */
const partsOf = (tree: SqlNode) => {
  const body = tree.body as SqlNode;
  const clauses = (body.clauses ?? {}) as Partial<Clauses>;
  return { body, clauses, joins: ((body.from as SqlNode | null)?.joins as unknown[] | undefined)?.length ?? 0 };
};

/** Whether a select orders, takes the top of, or joins its rows. */
const ordered = (select: SqlNode) => select.orderBy !== null || select.top !== null || (((select.from as SqlNode | null)?.joins as unknown[]) ?? []).length > 0;

/** Valid Cosmos DB SQL the engine cannot evaluate, each found in the query's syntax tree. */
export const UNSUPPORTED_CONSTRUCTS: readonly { construct: string; found: (tree: SqlNode) => boolean }[] = [
  {
    construct: "GROUP BY with JOIN, ORDER BY, TOP, DISTINCT or OFFSET ... LIMIT",
    found: (tree) => {
      const { body, clauses, joins } = partsOf(tree);
      if (!clauses.groupBy) return false;
      const subqueries = [...nodesOf(body)].filter((node) => node.type === "select_query" && node !== body);
      return joins > 0 || !!body.orderBy || !!body.top || !!clauses.rank || !!clauses.distinct || !!clauses.page || subqueries.some(ordered);
    },
  },
  {
    construct: "DISTINCT with ORDER BY, TOP or an aggregate",
    found: (tree) => {
      const { body, clauses } = partsOf(tree);
      const aggregated = ["COUNT", "SUM", "MIN", "MAX", "AVG"].some((name) => functionsCalled(tree).builtIn.has(name));
      return !!clauses.distinct && (!!body.orderBy || !!clauses.rank || !!body.top || aggregated);
    },
  },
  {
    construct: "OFFSET ... LIMIT with TOP",
    found: (tree) => {
      const { body, clauses } = partsOf(tree);
      return !!clauses.page && !!body.top;
    },
  },
  ...["RegexMatch", "DocumentId"].map((name) => ({ construct: name, found: (tree: SqlNode) => functionsCalled(tree).builtIn.has(name.toUpperCase()) })),
];

const notSupported = (construct: string): CosmosError =>
  badRequest(`${construct} is valid Cosmos DB SQL, but not supported by the embedded server (see docs/sql.md).`);

/** The construct each parsed query has that the server refuses (null for none), found once per tree. */
const refusals = new WeakMap<SqlNode, string | null>();

/** Throws a 400 naming the first construct of the query the embedded server cannot run. */
function refuseUnsupported(tree: SqlNode): void {
  let construct = refusals.get(tree);
  if (construct === undefined) refusals.set(tree, (construct = UNSUPPORTED_CONSTRUCTS.find(({ found }) => found(tree))?.construct ?? null));
  if (construct !== null) throw notSupported(construct);
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
  refuseUnsupported(parsedQuery(spec.query));
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
  const spans = [distinct, groupBy, rank, page, rank ? top : null].filter((span): span is Span => span !== null);
  return {
    source: spec,
    spec: { ...spec, query: without(spec.query, spans) },
    distinct: distinct !== null,
    ...(groupBy ? { groupBy: groupBy.text } : {}),
    ...(page ? { offset: count(page.skip, spec.parameters, "OFFSET"), limit: count(page.take, spec.parameters, "LIMIT") } : {}),
    ...(rank ? { ranking: { kind: "rank", expression: rank.text, top: top ? count(top.node.value as SqlNode, spec.parameters, "TOP") : undefined } } : {}),
  };
}
