// The one adapter over the SQL engine (@zeit/cosmosdb-query), which compiles a syntax tree to
// JavaScript. The tree is our parser's (sql-parser.ts), not the engine's own: the engine's parser
// takes time exponential in a query's nesting. Its code is changed before it runs, as
// engine.test.ts pins:
// - FROM and JOIN build their rows with `.reduce(($, row) => [...$, ...rows], [])`, which
//   copies everything gathered so far for every item: quadratic time, so one item with a
//   60-element array joined three times held the server for many seconds. Rows are appended to
//   the accumulator instead, and counted: a query request that makes more than a budget of rows
//   stops with RowBudgetExceeded, so no single query can hold the server's thread or its memory.
// - REPLICATE keeps Azure's limit: a result over 10,000 characters is undefined.
// - The full-text functions, which the engine does not know, call full-text-scoring.ts.
import query from "@zeit/cosmosdb-query";
import { FULL_TEXT_FUNCTIONS } from "./full-text-scoring";
import { parseSql, type SqlNode } from "./sql-parser";
import { like } from "./like";
import { badRequest } from "../wire/errors";

export type EngineQuery = ReturnType<typeof query>;
type ExecOptions = NonNullable<Parameters<EngineQuery["exec"]>[1]>;

/** Rows one query request may make (items, and the rows their JOINs make of them). */
export const ROW_BUDGET = 500_000;

/** Azure's limit on the length of REPLICATE's result. */
const REPLICATE_MAX_LENGTH = 10_000;

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
const bounded = Object.assign(Object.create(null) as object, {
  $append(into: unknown[], items: unknown[]): unknown[] {
    budget!.rows += items.length;
    if (budget!.rows > ROW_BUDGET) throw new RowBudgetExceeded();
    for (const item of items) into.push(item);
    return into;
  },
  $replicate(text: unknown, times: unknown): string | undefined {
    if (typeof text !== "string" || typeof times !== "number" || !Number.isFinite(times) || times < 0) return undefined;
    const count = Math.trunc(times);
    return text.length * count > REPLICATE_MAX_LENGTH ? undefined : text.repeat(count);
  },
  $like: like,
  ...FULL_TEXT_FUNCTIONS,
  $fullTextScoreOutsideRank(): never {
    throw badRequest("FullTextScore can only be used in ORDER BY RANK, alone or inside RRF.");
  },
});

/** The engine's calls of the full-text functions (it upper-cases a function's name), and what they become. */
const FULL_TEXT_CALLS: Record<string, string> = {
  FULLTEXTCONTAINSALL: "$fullTextContainsAll",
  FULLTEXTCONTAINSANY: "$fullTextContainsAny",
  FULLTEXTCONTAINS: "$fullTextContains",
  _FULLTEXTWORDCOUNT: "$fullTextWordCount",
  _FULLTEXTSCORE: "$fullTextScore",
  FULLTEXTSCORE: "$fullTextScoreOutsideRank",
};
const FULL_TEXT_CALL = new RegExp(`^\\$b\\.(${Object.keys(FULL_TEXT_CALLS).join("|")})\\(`);

const ACCUMULATED = /^\[\.\.\.\$,\s*/;
const REPLICATE = /^\$b\.REPLICATE\(/;

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

/** `code` with every `[...$, rest]` made `udf.$append($, [rest])`, REPLICATE made bounded and the full-text functions called. */
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
    const fullText = FULL_TEXT_CALL.exec(rest);
    if (fullText) {
      out += `udf.${FULL_TEXT_CALLS[fullText[1]]}(`;
      i += fullText[0].length;
      continue;
    }
    const replicate = REPLICATE.exec(rest);
    if (replicate) {
      out += "udf.$replicate(";
      i += replicate[0].length;
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

/** The tree with what the engine does not know made calls of the functions above: `a LIKE p ESCAPE e` is `udf.$like(a, p, e)`. */
function lowered(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(lowered);
  if (typeof node !== "object" || node === null) return node;
  const n = node as SqlNode;
  if (n.type === "scalar_like_expression") {
    const args = [n.value, n.pattern, n.escape ?? { type: "undefined_constant" }];
    return { type: "scalar_function_expression", name: { type: "identifier", name: "$like" }, arguments: args.map(lowered), udf: true };
  }
  return Object.fromEntries(Object.entries(n).map(([key, value]) => [key, lowered(value)]));
}

/** The engine's query for `sql`, parsed at once: a syntax error throws here (SqlSyntaxError). */
export function compileSql(sql: string): EngineQuery {
  return compileAst(parseSql(sql));
}
