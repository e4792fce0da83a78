// The one adapter over the SQL engine (@zeit/cosmosdb-query), which compiles a syntax tree to
// JavaScript. The tree is our parser's (sql-parser.ts), not the engine's own: the engine's parser
// takes time exponential in a query's nesting. Before the engine sees the tree, what it does not
// know, or runs unlike Azure, is lowered to calls of the server's own functions
// (server-functions.ts: LIKE, REPLICATE's limit, the full-text functions, IIF, ...). Its code is
// changed before it runs, as engine.test.ts pins:
// - FROM and JOIN build their rows with `.reduce(($, row) => [...$, ...rows], [])`, which
//   copies everything gathered so far for every item: quadratic time, so one item with a
//   60-element array joined three times held the server for many seconds. Rows are appended to
//   the accumulator instead, and counted: a query request that makes more than a budget of rows
//   stops with RowBudgetExceeded, so no single query can hold the server's thread or its memory.
import query from "@zeit/cosmosdb-query";
import { parseSql, type SqlNode } from "./sql-parser";
import { SERVER_FUNCTIONS, serverFunctionFor } from "./server-functions";

export type EngineQuery = ReturnType<typeof query>;
type ExecOptions = NonNullable<Parameters<EngineQuery["exec"]>[1]>;

/** Rows one query request may make (items, and the rows their JOINs make of them). */
export const ROW_BUDGET = 500_000;

/** Thrown when an evaluation passes ROW_BUDGET; the caller ends its page there or refuses the query. */
export class RowBudgetExceeded extends Error {
  constructor() {
    super(`The query makes more than ${ROW_BUDGET} rows (items and the rows their JOINs make) in one request.`);
  }
}

/** Rows made by the request under way (evaluations are synchronous: one request at a time). */
let budget: { rows: number } | undefined;

/** Rows made so far under the budget under way. */
export function rowsMade(): number {
  return budget?.rows ?? 0;
}

/** Runs `work` with one row budget for all its evaluations; an evaluation outside any has its own. */
export function withRowBudget<T>(work: () => T): T {
  const outer = budget;
  budget = { rows: 0 };
  try {
    return work();
  } finally {
    budget = outer;
  }
}

/** The user-defined functions of the evaluation under way: the query thread's, sandboxed; none elsewhere. */
let userFunctions: Record<string, (...args: never[]) => unknown> | undefined;

/** Runs `work` with the container's user-defined functions callable as `udf.<name>`. */
export function withUserFunctions<T>(functions: Record<string, (...args: never[]) => unknown>, work: () => T): T {
  const outer = userFunctions;
  userFunctions = functions;
  try {
    return work();
  } finally {
    userFunctions = outer;
  }
}

/**
 * What the rewritten code calls, passed as the engine's user-defined functions (`udf.<name>`):
 * names with `$`, which no SQL identifier has, so no query can call them. No prototype: `udf.constructor`
 * is no function either.
 */
const bounded = Object.assign(Object.create(null) as object, SERVER_FUNCTIONS, {
  $append(into: unknown[], items: unknown[]): unknown[] {
    budget!.rows += items.length;
    if (budget!.rows > ROW_BUDGET) throw new RowBudgetExceeded();
    for (const item of items) into.push(item);
    return into;
  },
});

const ACCUMULATED = /^\[\.\.\.\$,\s*/;

/** The index of the `]` that closes the `[` at `open`, skipping string literals. */
function closing(code: string, open: number): number {
  let depth = 0;
  for (let i = open; i < code.length; i++) {
    const ch = code[i];
    if (ch === '"' || ch === "'") {
      for (i++; i < code.length && code[i] !== ch; i++) if (code[i] === "\\") i++;
    } else if (ch === "[") depth++;
    else if (ch === "]" && --depth === 0) return i;
  }
  throw new Error("The SQL engine's code has an unclosed bracket.");
}

/** `code` with every `[...$, rest]` made `udf.$append($, [rest])`. */
export function boundedCode(code: string): string {
  let out = "";
  for (let i = 0; i < code.length;) {
    const ch = code[i];
    if (ch === '"' || ch === "'") {
      let end = i + 1;
      for (; end < code.length && code[end] !== ch; end++) if (code[end] === "\\") end++;
      out += code.slice(i, end + 1);
      i = end + 1;
      continue;
    }
    const rest = code.slice(i, i + 40);
    const accumulated = ACCUMULATED.exec(rest);
    if (accumulated) {
      const end = closing(code, i);
      out += `udf.$append($, [${boundedCode(code.slice(i + accumulated[0].length, end))}])`;
      i = end + 1;
      continue;
    }
    out += ch;
    i++;
  }
  return out;
}

const prototype = Object.getPrototypeOf(query("SELECT VALUE 1")) as EngineQuery;
const generated = Object.getOwnPropertyDescriptor(prototype, "code")!.get!;

/**
 * The engine's query for a syntax tree (the engine's Query, made without its parser), whose
 * code is rewritten when first run and whose evaluations count against the row budget under
 * way (see withRowBudget).
 */
export function compileAst(ast: SqlNode): EngineQuery {
  const compiled = Object.assign(Object.create(prototype) as EngineQuery, { ast });
  let code: string | undefined;
  Object.defineProperty(compiled, "code", { get: () => (code ??= boundedCode(generated.call({ ast: lowered(compiled.ast) }) as string)) });
  const exec = compiled.exec.bind(compiled);
  compiled.exec = (docs: object[], options: ExecOptions = {}) => {
    const udf = userFunctions ? Object.assign(Object.create(null) as object, userFunctions, bounded) : bounded;
    const run = () => exec(docs, { ...options, udf }) as unknown;
    return budget ? run() : withRowBudget(run);
  };
  return compiled;
}

/** A call of the server's function `name` (server-functions.ts) with `args`. */
const serverCall = (name: string, args: unknown[]) => ({
  type: "scalar_function_expression",
  name: { type: "identifier", name },
  arguments: args.map(lowered),
  udf: true,
});

/**
 * The tree with what the engine does not know, or runs unlike Azure, made calls of the server's
 * functions: `a LIKE p ESCAPE e` is `udf.$like(a, p, e)`, `IIF(...)` is `udf.$iif(...)`, ...
 */
function lowered(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(lowered);
  if (typeof node !== "object" || node === null) return node;
  const n = node as SqlNode;
  if (n.type === "scalar_like_expression") return serverCall("$like", [n.value, n.pattern, n.escape ?? { type: "undefined_constant" }]);
  if (n.type === "scalar_function_expression" && !n.udf) {
    const args = n.arguments as unknown[];
    const served = serverFunctionFor((n.name as SqlNode).name as string, args.length);
    if (served) return serverCall(served, args);
  }
  return Object.fromEntries(Object.entries(n).map(([key, value]) => [key, lowered(value)]));
}

/** The engine's query for `sql`, parsed at once: a syntax error throws here (SqlSyntaxError). */
export function compileSql(sql: string): EngineQuery {
  return compileAst(parseSql(sql));
}
