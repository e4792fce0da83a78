// The SQL parser: sql.peggy is the grammar, and why it reads as it does; sql-parser.generated.js
// is what peggy makes of it.
import generated from "./sql-parser.generated";
import { badRequest } from "../wire/errors";
import { keptOrMade } from "./kept";

/** A node of the syntax tree, in the engine's (@zeit/cosmosdb-query's) shapes. */
export type SqlNode = { type: string; [key: string]: unknown };

interface Parser {
  parse(text: string): SqlNode;
  SyntaxError: new (...args: never[]) => Error;
}
const parser = generated as unknown as Parser;

/** A query the grammar does not accept; its message says where and what was expected. */
export const SqlSyntaxError = parser.SyntaxError;

/** The syntax tree of `sql` (a `sql` node whose body is a `select_query`); throws SqlSyntaxError. */
export function parseSql(sql: string): SqlNode {
  return parser.parse(sql);
}

const trees = new Map<string, SqlNode>();
const MAX_TREES = 1000;

/** The syntax tree of a client's query, kept (the same few queries come over and over); a 400 that says why for one the grammar refuses. */
export function parsedQuery(sql: string): SqlNode {
  return keptOrMade(trees, MAX_TREES, sql, () => {
    try {
      return parseSql(sql);
    } catch (error) {
      if (error instanceof SqlSyntaxError) throw badRequest(`Syntax error, ${error.message}`);
      if (error instanceof RangeError) throw badRequest("The query is nested too deeply to be parsed.");
      throw error;
    }
  });
}

/** Every node of a syntax tree, the tree's own first. */
export function* nodesOf(value: unknown): Generator<SqlNode> {
  if (Array.isArray(value)) for (const element of value) yield* nodesOf(element);
  else if (typeof value === "object" && value !== null) {
    if (typeof (value as SqlNode).type === "string") yield value as SqlNode;
    for (const child of Object.values(value)) yield* nodesOf(child);
  }
}

/** The functions a tree calls: the query language's (upper case) and the user-defined ones (by id). */
export interface FunctionsCalled {
  builtIn: ReadonlySet<string>;
  userDefined: ReadonlySet<string>;
}

const calls = new WeakMap<SqlNode, FunctionsCalled>();

/** The functions `tree` calls, found once per tree: each request of the same query asks again. */
export function functionsCalled(tree: SqlNode): FunctionsCalled {
  let found = calls.get(tree);
  if (!found) {
    const builtIn = new Set<string>();
    const userDefined = new Set<string>();
    for (const node of nodesOf(tree)) {
      if (node.type !== "scalar_function_expression") continue;
      const name = (node.name as SqlNode).name as string;
      if (node.udf) userDefined.add(name);
      else builtIn.add(name.toUpperCase());
    }
    calls.set(tree, (found = { builtIn, userDefined }));
  }
  return found;
}
