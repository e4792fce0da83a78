// The SQL parser: sql.peggy is the grammar, and why it reads as it does; sql-parser.generated.js
// is what peggy makes of it.
import generated from "./sql-parser.generated";
import { badRequest } from "../wire/errors";

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
  let tree = trees.get(sql);
  if (!tree) {
    try {
      tree = parseSql(sql);
    } catch (error) {
      if (error instanceof SqlSyntaxError) throw badRequest(`Syntax error, ${error.message}`);
      if (error instanceof RangeError) throw badRequest("The query is nested too deeply to be parsed.");
      throw error;
    }
    if (trees.size >= MAX_TREES) trees.delete(trees.keys().next().value as string);
    trees.set(sql, tree);
  }
  return tree;
}
