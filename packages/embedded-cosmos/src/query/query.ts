// Queries: plan, index selection, scans in pages, DISTINCT, OFFSET/LIMIT, GROUP BY and aggregates over the
// SQL engine. Longer than most files for a reason: it is the one module that uses the engine,
// so the engine could be replaced in one place (sql-support.ts says what it cannot run,
// candidates.ts which predicates an index answers, indexes.ts the indexes themselves).
import { functionsCalled, parsedQuery, type SqlNode } from "./sql-parser";
import { compileAst, compileSql, ROW_BUDGET, RowBudgetExceeded, rowsMade, withRowBudget, type EngineQuery } from "./engine";
import { indexablePredicates, type Predicate } from "./candidates";
import { badRequest, CosmosError, requestTimeout } from "../wire/errors";
import { prepareQuery, unknownFunction, type ShapedQuery } from "./sql-support";
import { orderDirections, resumeAt } from "./resume-filter";
import { documentNumber } from "../wire/resource-ids";
import { indexKey, intersect, type ContainerIndexes, type Indexed } from "./indexes";
import type { Json, JsonObject } from "../wire/json";
import { aggregateCalls, aggregateName, checkGrouped, distinctKey, groupRows, rowsQuery } from "./group-by";
import { fromAlias, printExpression, printFromWhere, projectionExpression } from "./sql-print";
import { componentRows, containerStatistics, rankOf, ranked, statisticsResult, type Candidate } from "./full-text-ranking";

export interface QuerySpec {
  query: string;
  parameters?: { name: string; value: Json }[];
}

export interface QueryPage {
  items: Json[];
  continuation?: string;
  /** How many stored items the query had to load: the SDK's `retrievedDocumentCount`. */
  retrieved: number;
  /** How many items an index selected for it (loaded or not): an index-served `COUNT` loads none of them. */
  indexHits: number;
}

/** A page as the engine evaluated it, before what the indexes did is known (engineQuery adds it). */
type Evaluated = Omit<QueryPage, "indexHits">;

type Parsed = EngineQuery;
const engineQueries = new WeakMap<SqlNode, Parsed>();

/** The engine's query for `sql`, one per parsed query kept (parsedQuery; a syntax error is a 400 there). */
export function compiled(sql: string): Parsed {
  const tree = parsedQuery(sql);
  let parsed = engineQueries.get(tree);
  if (!parsed) engineQueries.set(tree, (parsed = compileAst(tree)));
  return parsed;
}

/** Whether `doc` satisfies a `FROM c WHERE ...` condition (a conditional patch's); throws on a malformed one. */
export function satisfies(doc: JsonObject, condition: string): boolean {
  return compileSql(`SELECT * ${condition}`).exec([doc]).result.length > 0;
}

type Node = { type: string; [key: string]: unknown };

/**
 * Aggregates inside a larger VALUE expression (`SELECT VALUE [{"item": COUNT(1)}]`, the form of
 * the per-range queries the query plan hands the SDK), which the SQL engine cannot evaluate.
 */
function nestedAggregates(ast: unknown): Node[] {
  const top = (((ast as Node).body as Node | undefined)?.select as Node | undefined)?.value as Node | undefined;
  return !top || aggregateName(top) ? [] : aggregateCalls(top);
}

/** `node` with its aggregate calls, depth first as aggregateCalls finds them, replaced by these parameters. */
function withParameters(node: Node, names: string[]): Node {
  let i = 0;
  const replace = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(replace);
    if (typeof value !== "object" || value === null) return value;
    if (aggregateName(value as Node)) return { type: "parameter_name", name: names[i++] };
    return Object.fromEntries(Object.entries(value).map(([key, child]) => [key, replace(child)]));
  };
  return replace(structuredClone(node)) as Node;
}

/**
 * The select of `parsed` where the engine cannot place its aggregates (inside a larger VALUE
 * expression, or a GROUP BY's projection): each aggregate runs as its own `SELECT VALUE AGG(...)`
 * over the items, then the select around them, with their values as parameters, over no item
 * or over a group's first. Compiled once: a GROUP BY runs it once per group.
 */
function aggregateEvaluator(parsed: Parsed, overItem: boolean) {
  const select = ((parsed.ast as Node).body as Node).select as Node;
  const aggregates = aggregateCalls(select).map((aggregate) => {
    const ast = structuredClone(parsed.ast) as Node;
    (ast.body as Node).select = { type: "select_specification", value: aggregate };
    return compileAst(ast);
  });
  // Names no client's parameter can have: SQL identifiers hold no `$` (the engine reads them as `$p.<name>`).
  const names = aggregates.map((_, i) => `@$aggregate${i}`);
  const ast = structuredClone(parsed.ast) as Node;
  (ast.body as Node).select = withParameters(select, names);
  (ast.body as Node).where = null;
  if (!overItem) (ast.body as Node).from = null;
  const outer = compileAst(ast);
  return (docs: JsonObject[], over: JsonObject[], parameters: QuerySpec["parameters"] = []): Json | undefined => {
    const values = aggregates.map((single) => single.exec(docs, { parameters }).result[0] as Json | undefined);
    const bound = names.map((name, i) => ({ name, value: values[i] as Json }));
    return outer.exec(over, { parameters: [...parameters, ...bound] }).result[0] as Json | undefined;
  };
}

/** Whether the query JOINs (its rows can outnumber its items by far: see QueryThread). */
export function hasJoins(shaped: ShapedQuery): boolean {
  // The hybrid plan's own queries have none, and are not parsed (hybrid-plan.ts).
  if (shaped.ranking?.kind === "statistics" || shaped.ranking?.kind === "component") return false;
  const from = ((compiled(shaped.spec.query).ast as Node).body as Node).from as Node | null;
  return ((from?.joins as unknown[] | undefined)?.length ?? 0) > 0;
}

/** The names of the user-defined functions a query calls (`udf.<name>(...)`), its GROUP BY included. */
export function userFunctionNames(shaped: ShapedQuery): string[] {
  // The hybrid plan's own queries call none, and are not parsed (hybrid-plan.ts).
  if (shaped.ranking?.kind === "statistics" || shaped.ranking?.kind === "component") return [];
  return [...functionsCalled(parsedQuery(shaped.source.query)).userDefined];
}

/** The parsed expressions of a query's GROUP BY clause, if it has one. */
export function groupingOf(shaped: ShapedQuery): Node[] | undefined {
  if (shaped.groupBy === undefined) return undefined;
  const body = (compiled(shaped.spec.query).ast as Node).body as Node;
  const list = (compiled(`SELECT VALUE [${shaped.groupBy}] FROM ${fromAlias(body)}`).ast as Node).body as Node;
  const grouping = (list.select as Node).value as Node & { elements: Node[] };
  if (aggregateCalls(grouping).length > 0) throw badRequest("The GROUP BY clause cannot contain an aggregate.");
  checkGrouped(body.select as Node, grouping.elements);
  return grouping.elements;
}

/**
 * A GROUP BY query's results: the engine reads each row's group key and item, the items are
 * grouped, and each group gives one result, its aggregates over its items and the rest over
 * its first item (the rest reads only grouped expressions, which checkGrouped made sure of).
 */
function groupedResults<T extends Queryable>(
  scope: QueryScope<T>,
  indexes: ContainerIndexes<T> | undefined,
  shaped: ShapedQuery,
): { results: Json[]; retrieved: number; indexHits: number } {
  const grouping = groupingOf(shaped)!;
  const parsed = compiled(shaped.spec.query);
  const body = (parsed.ast as Node).body as Node;
  const rows = everyResult(scope, indexes, { query: rowsQuery(body, fromAlias(body), grouping), parameters: shaped.spec.parameters });
  const { items } = engineErrors(() => {
    const evaluate = aggregateEvaluator(parsed, true);
    const results = groupRows(rows.items).map((group) => evaluate(group, group.slice(0, 1), shaped.spec.parameters));
    return { items: results.filter((result): result is Json => result !== undefined), retrieved: rows.retrieved, indexHits: rows.indexHits };
  });
  return { results: items, retrieved: rows.retrieved, indexHits: rows.indexHits };
}

/** The continuation tokens the query engine issues (`+RID:...#RT:n#TRC:n[#RTD:...]`); anything else is a client error. */
const CONTINUATION = /^(SCAN:\d+:)?(\+RID:[^#]*#RT:\d+(#SRC:\d+)?#TRC:\d+(#RTD:[A-Za-z0-9+/=]*)?)?$/;

/**
 * An unindexed scan reads at most this many items per page, as Azure ends a page at its time
 * budget: a page may come back short, even empty, with a continuation. So a long scan is many
 * short requests, and other requests are served between them.
 */
export const SCAN_PAGE_ITEMS = 20_000;

const invalidContinuation = () => badRequest("Invalid Continuation Token: the query continuation was not issued for this query.");

/** An item as a query sees it: readable, and ordered by insertion (`seq`, the `_rid` order). */
export interface Queryable extends Indexed {
  seq: number;
  /** Its `_rid`, without parsing its document. */
  rid(): string;
}

/** The range index a single-path predicate reads (an array's elements for ARRAY_CONTAINS); undefined when the policy does not index it. */
const rangeIndexOf = <T extends Queryable>(indexes: ContainerIndexes<T>, predicate: Exclude<Predicate, { kind: "any" | "fullText" }>) =>
  indexes.at(predicate.kind === "contains" ? [...predicate.path, "[]"] : predicate.path);

/** The index a single-path predicate reads (the full-text index for the full-text functions); undefined when the policy does not index it. */
const indexOf = <T extends Queryable>(indexes: ContainerIndexes<T>, predicate: Exclude<Predicate, { kind: "any" }>) =>
  predicate.kind === "fullText" ? indexes.fullTextAt(predicate.path) : rangeIndexOf(indexes, predicate);

/** The items an index selects for one predicate; undefined when the policy does not index its path. */
function select<T extends Queryable>(indexes: ContainerIndexes<T>, predicate: Predicate): Set<T> | undefined {
  if (predicate.kind === "any") {
    const union = new Set<T>();
    for (const conjunction of predicate.alternatives) {
      const selected = intersect(conjunction.map((p) => select(indexes, p)).filter((set): set is Set<T> => set !== undefined));
      if (!selected) return undefined;
      for (const item of selected) union.add(item);
    }
    return union;
  }
  if (predicate.kind === "fullText") return indexes.fullTextAt(predicate.path)?.matching(predicate.keywords, predicate.all);
  const index = rangeIndexOf(indexes, predicate);
  switch (predicate.kind) {
    case "equal":
      return index?.equal(predicate.value);
    case "in": {
      if (!index) return undefined;
      const result = new Set<T>();
      for (const value of predicate.values) for (const item of index.equal(value)) result.add(item);
      return result;
    }
    case "range": {
      const key = indexKey(predicate.value)!;
      const bound = { key, inclusive: predicate.operator.endsWith("=") };
      return predicate.operator.startsWith(">") ? index?.range(bound, undefined) : index?.range(undefined, bound);
    }
    case "contains":
      return index?.equal(predicate.value);
    case "defined":
      return index?.defined();
  }
}

/** Whether the policy indexes every path `predicate` names (an OR: every condition of every side). */
function answers<T extends Queryable>(indexes: ContainerIndexes<T>, predicate: Predicate): boolean {
  if (predicate.kind === "any") return predicate.alternatives.every((conjunction) => conjunction.every((p) => answers(indexes, p)));
  return indexOf(indexes, predicate) !== undefined;
}

/**
 * Runs SQL over `scope` (the live items of one logical partition, or of all), in `_rid` order.
 * When the scope is large, the candidates are narrowed first by the indexes the WHERE clause
 * can use (equality, IN, ranges, ARRAY_CONTAINS, IS_DEFINED; intersected, smallest first); the
 * SQL engine then evaluates the whole query over those. `retrieved` counts what was read. The
 * request's evaluations share one row budget: a scan ends its page where the budget ran out,
 * anything else past it is a 408, so no query holds the server for long.
 */
export function runQuery<T extends Queryable>(
  scope: QueryScope<T>,
  indexes: ContainerIndexes<T> | undefined,
  shaped: ShapedQuery,
  continuation: string | undefined,
  maxItemCount: number,
  scanPageItems = SCAN_PAGE_ITEMS,
): QueryPage {
  try {
    return withRowBudget(() => {
      if (shaped.distinct || shaped.limit !== undefined || shaped.resume || shaped.groupBy !== undefined || shaped.ranking)
        return shapedPage(scope, indexes, shaped, continuation, maxItemCount);
      return engineQuery(scope, indexes, shaped.spec, continuation, maxItemCount, scanPageItems);
    });
  } catch (error) {
    if (error instanceof RowBudgetExceeded) throw requestTimeout(`${error.message} Filter before the JOINs, or narrow the query.`);
    throw error;
  }
}

/** The live items a query runs over (one logical partition, or all). */
export interface QueryScope<T> {
  items: () => T[];
  size: number;
  contains: (item: T) => boolean;
  /** The whole container's live items, whatever the scope: full-text statistics are the container's (the scope's items when absent). */
  whole?: () => T[];
}

/** Every result of the engine's query over the scope, read to the end. */
function everyResult<T extends Queryable>(scope: QueryScope<T>, indexes: ContainerIndexes<T> | undefined, spec: QuerySpec): QueryPage {
  const items: Json[] = [];
  let [retrieved, indexHits] = [0, 0];
  let token: string | undefined;
  do {
    const page = engineQuery(scope, indexes, spec, token, 1000, Number.POSITIVE_INFINITY);
    items.push(...page.items);
    retrieved += page.retrieved;
    indexHits += page.indexHits;
    token = page.continuation;
  } while (token);
  return { items, retrieved, indexHits };
}

/**
 * A query ranked by the server (full-text-ranking.ts): the plan's statistics over the scope; a
 * component query's rows in the order of its computed key; or ORDER BY RANK's candidates (the
 * rest of the query, run by the engine) scored with the whole container's statistics.
 */
function rankedResults<T extends Queryable>(scope: QueryScope<T>, indexes: ContainerIndexes<T> | undefined, shaped: ShapedQuery): QueryPage {
  const ranking = shaped.ranking!;
  if (ranking.kind === "statistics") {
    const items = scope.items().map((item) => item.doc());
    // Full-text indexes keep these counts, as Azure's do: with one on every searched path, no document is loaded.
    const indexed = indexes !== undefined && ranking.components.every((component) => indexes.fullTextAt(component.path) !== undefined);
    return { items: statisticsResult(ranking, items), retrieved: indexed ? 0 : items.length, indexHits: indexed ? items.length : 0 };
  }
  const parameters = shaped.spec.parameters;
  if (ranking.kind === "component") {
    const found = everyResult(scope, indexes, { query: `SELECT * ${ranking.fromWhere}`, parameters });
    return { ...found, items: componentRows(candidatesOf(found.items, ranking.projection, ranking.rank.alias, parameters), ranking) };
  }
  const body = compiled(shaped.spec.query).ast.body as Node;
  if (((body.from as Node | null)?.joins as unknown[] | undefined)?.length) throw badRequest("A ranked query cannot have a JOIN.");
  const alias = fromAlias(body);
  const expression = (compiled(`SELECT VALUE ${ranking.expression} FROM ${alias}`).ast.body as Node).select as Node;
  const rank = rankOf(expression.value as Node, alias, parameters, printExpression, ranking.top);
  const found = everyResult(scope, indexes, { query: `SELECT * ${printFromWhere(body)}`, parameters });
  const statistics = containerStatistics(
    rank.components,
    (scope.whole ?? scope.items)().map((item) => item.doc()),
  );
  return { ...found, items: ranked(candidatesOf(found.items, projectionExpression(body, alias), alias, parameters), rank, statistics) };
}

/** The items a ranked query found, each with what the query selects of it. */
function candidatesOf(items: Json[], projection: string, alias: string, parameters: QuerySpec["parameters"]): Candidate[] {
  const project = compiled(`SELECT VALUE ${projection} FROM ${alias}`);
  return engineErrors(() => (items as JsonObject[]).map((item) => ({ item, row: project.exec([item], { parameters: parameters ?? [] }).result[0] as Json })));
}

/** DISTINCT, OFFSET ... LIMIT and an ORDER BY's resume filter applied, in that order, to the rest of the query's results. */
function shapedResults<T extends Queryable>(
  scope: QueryScope<T>,
  indexes: ContainerIndexes<T> | undefined,
  shaped: ShapedQuery,
): { results: Json[]; retrieved: number; indexHits: number } {
  const { items, retrieved, indexHits } = shaped.ranking ? rankedResults(scope, indexes, shaped) : everyResult(scope, indexes, shaped.spec);
  let results = shaped.resume ? resumeAt(items, shaped.resume, orderDirections(shaped.spec.query)) : items;
  if (shaped.distinct) results = [...new Map(results.map((value) => [distinctKey(value), value] as const)).values()];
  if (shaped.limit !== undefined) results = results.slice(shaped.offset, shaped.offset! + shaped.limit);
  return { results, retrieved, indexHits };
}

/**
 * GROUP BY, DISTINCT, OFFSET ... LIMIT and an ORDER BY's resume filter, which the engine cannot
 * take: the rest of the query runs to the end, the server applies them, and pages the result
 * (`SHAPED:<position>`, or `AFTER:<_rid>` with a resume filter: `shapedPosition`).
 */
function shapedPage<T extends Queryable>(
  scope: QueryScope<T>,
  indexes: ContainerIndexes<T> | undefined,
  shaped: ShapedQuery,
  continuation: string | undefined,
  maxItemCount: number,
): QueryPage {
  const { results, retrieved, indexHits } = shaped.groupBy !== undefined ? groupedResults(scope, indexes, shaped) : shapedResults(scope, indexes, shaped);
  const position = shapedPosition(results, shaped, continuation);
  const size = maxItemCount > 0 ? maxItemCount : 100;
  const page = results.slice(position, position + size);
  if (position + size >= results.length) return { items: page, retrieved, indexHits };
  // After a resume filter, the next page's request may carry another filter (the SDK's newer
  // resume point): the token names the last result, found again in whatever list that makes.
  const last = page[page.length - 1] as { _rid?: unknown } | undefined;
  return {
    items: page,
    retrieved,
    indexHits,
    continuation: shaped.resume && typeof last?._rid === "string" ? `AFTER:${last._rid}` : `SHAPED:${position + size}`,
  };
}

/**
 * Where a shaped page starts: at a position (`SHAPED:<n>`), or where a token says, if that is
 * later than the resume filter's point, as the service picks (the .NET SDK sends both): just
 * after the result `AFTER:<_rid>` (ours) names, or at the result the engine's own `+RID:` token
 * from the pages before the client resumed names (its stand-in gives the document's number). A
 * result the filter has left out lies before the filter's point: the page starts there.
 */
function shapedPosition(results: Json[], shaped: ShapedQuery, continuation: string | undefined): number {
  if (continuation === undefined) return 0;
  const at = /^SHAPED:(\d+)$/.exec(continuation);
  if (at) return Number(at[1]);
  const ridOf = (result: Json) => (result as { _rid?: unknown })._rid;
  const after = /^AFTER:(.+)$/.exec(continuation)?.[1];
  if (after !== undefined) return results.findIndex((result) => ridOf(result) === after) + 1;
  if (!shaped.resume || !CONTINUATION.test(continuation)) throw invalidContinuation();
  const standIn = new RegExp(`\\+RID:${STAND_IN}([0-9a-z]+)#`).exec(continuation)?.[1];
  if (standIn === undefined) return 0;
  const seq = BigInt(parseInt(standIn, 36));
  return Math.max(
    0,
    results.findIndex((result) => {
      const rid = ridOf(result);
      return typeof rid === "string" && documentNumber(rid) === seq;
    }),
  );
}

function engineQuery<T extends Queryable>(
  scope: QueryScope<T>,
  indexes: ContainerIndexes<T> | undefined,
  spec: QuerySpec,
  continuation: string | undefined,
  maxItemCount: number,
  scanPageItems: number,
): QueryPage {
  if (continuation !== undefined && !CONTINUATION.test(continuation)) throw invalidContinuation();
  const parsed = compiled(spec.query);
  const where = indexes ? indexablePredicates(parsed.ast, spec.parameters ?? []) : { predicates: [], complete: false };
  const sets = where.predicates.map((predicate) => select(indexes!, predicate));
  const selected = intersect(sets.filter((set): set is Set<T> => set !== undefined));
  const indexed = selected !== undefined && selected.size <= scope.size;
  const nested = nestedAggregates(parsed.ast);
  const candidates = indexed ? [...selected].filter((item) => scope.contains(item)) : scope.items();
  // Whatever can be paged is evaluated slice by slice; an unindexed scan also ends its page at
  // the budget of items read.
  // What it loaded came through the indexes when they selected the candidates.
  const withHits = (page: Evaluated): QueryPage => ({ ...page, indexHits: indexed ? page.retrieved : 0 });
  if (nested.length === 0 && pageable(parsed.ast))
    return withHits(scanPage(candidates, parsed, spec, continuation, maxItemCount, indexed ? Number.POSITIVE_INFINITY : scanPageItems));
  candidates.sort((a, b) => a.seq - b.seq);
  const { docs, items } = engineDocs(candidates, spec.query);
  const page: Evaluated =
    nested.length > 0
      ? engineErrors(() => ({ items: [aggregateEvaluator(parsed, false)(docs, [], spec.parameters) as Json], retrieved: docs.length }))
      : execute(parsed, spec, docs, maxItemCount, continuation);
  const served = indexes !== undefined && where.complete && where.predicates.every((predicate) => answers(indexes, predicate));
  return restoreRids(served ? servedByIndex(page, parsed.ast, candidates.length) : withHits(page), items);
}

/**
 * What an aggregate or `TOP` query whose whole WHERE an index answers loads, as Azure serves it:
 * a `COUNT` of a constant counts index entries and loads no document; a `TOP n` walks the index
 * in order and loads only the items it returns. The engine evaluated every candidate either way.
 */
function servedByIndex(page: Evaluated, ast: unknown, matches: number): QueryPage {
  const body = (ast as Node).body as Node;
  if (countsOnly(body.select as Node)) return { ...page, retrieved: 0, indexHits: matches };
  if (body.top && !aggregates(body.select)) return { ...page, retrieved: page.items.length, indexHits: matches };
  return { ...page, indexHits: matches };
}

/** A projection of nothing but `COUNT(<constant>)`s (`SELECT VALUE COUNT(1)`, or the query plan's `[{"item": COUNT(1)}]`). */
function countsOnly(select: Node): boolean {
  const calls = aggregateCalls(select);
  if (calls.length === 0 || calls.some((call) => aggregateName(call) !== "COUNT" || !isConstant((call.arguments as Node[])[0]))) return false;
  const reads = (value: unknown): boolean => {
    if (typeof value !== "object" || value === null) return false;
    const node = value as Node;
    if (aggregateName(node)) return false;
    return node.type === "identifier" || Object.values(node).some(reads);
  };
  return !reads(select);
}

const isConstant = (node: Node | undefined) => node !== undefined && /_constant$/.test(node.type);

/**
 * The engine orders items, and ORDER BY's ties, by `_rid` compared as text, and resumes by it.
 * Real document ids do not sort as text (their ordinal is a little-endian number, which is what
 * the .NET SDK compares), so the engine is given a stand-in that sorts as the ordinal does, and
 * the results get the real ids back.
 */
const STAND_IN = "~rid~";

/** The engine's documents, with stand-in ids; `items` sorted by ordinal, so `restoreRids` finds each again by it. */
function engineDocs(items: Queryable[], query: string): { docs: JsonObject[]; items?: Queryable[] } {
  // A query that filters or sorts by `_rid` itself (a script finding a document by its link) sees the real ones.
  if (/\bFROM\b[\s\S]*\b_rid\b/i.test(query)) return { docs: items.map((item) => item.doc()) };
  const docs = items.map((item) => {
    const doc = item.doc();
    doc._rid = `${STAND_IN}${item.seq.toString(36).padStart(11, "0")}`;
    return doc;
  });
  return { docs, items };
}

/** The results with every stand-in `_rid` (wherever a projection put it) replaced by the real one, in place (they are this query's own). */
function restoreRids<P extends Evaluated>(page: P, items: Queryable[] | undefined): P {
  if (!items) return page;
  const real = (standIn: string): string => {
    const seq = parseInt(standIn.slice(STAND_IN.length), 36);
    let [low, high] = [0, items.length - 1];
    while (low <= high) {
      const middle = (low + high) >> 1;
      if (items[middle].seq === seq) return items[middle].rid();
      if (items[middle].seq < seq) low = middle + 1;
      else high = middle - 1;
    }
    return standIn;
  };
  const restore = (value: Json): Json => {
    if (typeof value === "string") return value.startsWith(STAND_IN) ? real(value) : value;
    if (Array.isArray(value)) for (let i = 0; i < value.length; i++) value[i] = restore(value[i]);
    else if (value !== null && typeof value === "object") for (const key of Object.keys(value)) value[key] = restore(value[key]);
    return value;
  };
  page.items.forEach((item, i) => (page.items[i] = restore(item)));
  return page;
}

/** One page of the query engine over `docs`, resuming from its own token. */
function execute(parsed: Parsed, spec: QuerySpec, docs: JsonObject[], maxItemCount: number, token: string | undefined): Evaluated {
  return engineErrors(() => {
    const { result, continuation } = parsed.exec(docs, {
      parameters: spec.parameters ?? [],
      maxItemCount: maxItemCount > 0 ? maxItemCount : 100,
      continuation: token ? { token } : undefined,
    });
    return { items: result as Json[], continuation: continuation?.token, retrieved: docs.length };
  });
}

/**
 * The engine's failures are the query's fault: 400 with its message. One that makes more rows
 * than an evaluation may (see engine.ts) is a 408, as a page past Azure's time budget is.
 */
function engineErrors<P>(work: () => P): P {
  try {
    return work();
  } catch (error) {
    if (error instanceof CosmosError || error instanceof RowBudgetExceeded) throw error;
    throw unknownFunction(error as Error) ?? badRequest(`Query could not be executed: ${(error as Error).message}`);
  }
}

/** Whether `node` calls an aggregate function anywhere (COUNT, SUM, ...: a result over all items, not per item). */
function aggregates(node: unknown): boolean {
  if (typeof node !== "object" || node === null) return false;
  const n = node as Node;
  if (aggregateName(n)) return true;
  return Object.values(n).some(aggregates);
}

/** A query whose result over a prefix of the items is a prefix of its result: no ORDER BY, no TOP, no aggregate. */
function pageable(ast: unknown): boolean {
  const body = (ast as { body: { orderBy?: unknown; top?: unknown; select?: unknown } }).body;
  return !body.orderBy && !body.top && !aggregates(body.select);
}

/**
 * Items evaluated at a time within a page: a page that fills early reads little more than it
 * returns, and one that meets the row budget ends at a slice's start.
 */
const SCAN_SLICE_ITEMS = 512;

/** Rows a scan's page makes before it ends (a tenth of the request's budget): a long scan yields the server often. */
const SCAN_PAGE_ROWS = ROW_BUDGET / 10;

/**
 * One page of a scan in insertion order, reading at most `pageItems` items: the continuation
 * `SCAN:<ordinal>:<inner>` names the last item before the slice it stopped in (and the engine's
 * own token within that slice), so writes between pages neither repeat nor skip what was read.
 */
function scanPage<T extends Queryable>(
  items: T[],
  parsed: Parsed,
  spec: QuerySpec,
  continuation: string | undefined,
  maxItemCount: number,
  pageItems: number,
  sliceItems = SCAN_SLICE_ITEMS,
): Evaluated {
  const match = continuation ? /^SCAN:(\d+):(.*)$/.exec(continuation) : null;
  if (continuation && !match) throw invalidContinuation();
  const after = match ? Number(match[1]) : 0; // ordinals start at 1
  const sorted = items.sort((a, b) => a.seq - b.seq);
  let position = 0;
  for (let high = sorted.length; position < high;) {
    const middle = (position + high) >> 1;
    if (sorted[middle].seq <= after) position = middle + 1;
    else high = middle;
  }
  const limit = maxItemCount > 0 ? maxItemCount : 100;
  const end = Math.min(sorted.length, position + pageItems);
  const found: Json[] = [];
  let inner = match?.[2] || undefined;
  let retrieved = 0;
  while (position < end && found.length < limit) {
    const slice = sorted.slice(position, Math.min(position + sliceItems, end));
    const { docs, items: standIns } = engineDocs(slice, spec.query);
    let page: Evaluated;
    try {
      page = restoreRids(execute(parsed, spec, docs, limit - found.length, inner), standIns);
    } catch (error) {
      if (!(error instanceof RowBudgetExceeded)) throw error;
      // The row budget ran out in this slice: the page ends before it, or, with nothing
      // read yet, the slice is tried item by item; one item past the budget alone is a 408.
      if (retrieved > 0) return { items: found, retrieved, continuation: `SCAN:${sorted[position - 1].seq}:` };
      if (sliceItems === 1 || inner !== undefined) throw error;
      return withRowBudget(() => scanPage(items, parsed, spec, continuation, maxItemCount, pageItems, 1));
    }
    found.push(...page.items);
    retrieved += slice.length;
    inner = undefined;
    // The slice holds more results than the page has room for: the next page resumes inside it.
    if (page.continuation) return { items: found, retrieved, continuation: `SCAN:${position > 0 ? sorted[position - 1].seq : 0}:${page.continuation}` };
    position += slice.length;
    // A page that has made its share of rows ends here: the next one is another request, and
    // the server answers others in between.
    if (rowsMade() >= SCAN_PAGE_ROWS) break;
  }
  return { items: found, retrieved, continuation: position < sorted.length ? `SCAN:${sorted[position - 1].seq}:` : undefined };
}

/** A query over a few resources held as plain objects (offers), not a container's items: no indexes, no paging. */
export function queryResources(spec: { query: string; parameters?: { name: string; value: Json }[] }, resources: JsonObject[]): Json[] {
  return compiled(prepareQuery(spec).spec.query).exec(resources, { parameters: spec.parameters ?? [] }).result as Json[];
}
