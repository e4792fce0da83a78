// The SQL parser: sql.peggy is the grammar, and why it reads as it does; sql-parser.generated.js
// is what peggy makes of it.
import generated from "./sql-parser.generated";

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
  return parser.parse(sql.trim());
}
