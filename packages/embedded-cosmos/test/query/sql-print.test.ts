import { describe, expect, it } from "vitest";
import { compiled } from "../../src/query/query";
import { printFromWhere } from "../../src/query/sql-print";

const fromWhere = (sql: string, extra?: string) => printFromWhere(compiled(sql).ast.body as never, extra);

/**
 * The plans' rewritten queries print the query's FROM and WHERE back. The engine's parser takes
 * time exponential in nested parentheses around function calls, so they carry only the
 * parentheses the operators' precedence needs, and mean what the query meant.
 */
describe("printing a query's FROM and WHERE back", () => {
  it("keeps no parentheses an AND chain, a comparison or a NOT does not need", () => {
    expect(fromWhere(`SELECT * FROM p WHERE p.type = "post" AND NOT IS_DEFINED(p.deleted) AND (FullTextContains(p.title, @t) OR STARTSWITH(p.id, "a"))`)).toBe(
      `FROM p WHERE p.type = "post" AND NOT IS_DEFINED(p.deleted) AND (FullTextContains(p.title, @t) OR STARTSWITH(p.id, "a"))`,
    );
    expect(fromWhere(`SELECT * FROM c WHERE c.a = 1 OR c.b = 2`, "true")).toBe(`FROM c WHERE (c.a = 1 OR c.b = 2) AND (true)`);
  });

  it("keeps the parentheses that change the meaning", () => {
    expect(fromWhere(`SELECT * FROM c WHERE (c.a OR c.b) AND NOT (c.c = 1 OR c.d = 2)`)).toBe(`FROM c WHERE (c.a OR c.b) AND NOT (c.c = 1 OR c.d = 2)`);
    expect(fromWhere(`SELECT * FROM c WHERE c.a AND (c.b OR c.c AND c.d)`)).toBe(`FROM c WHERE c.a AND (c.b OR (c.c AND c.d))`);
    expect(fromWhere(`SELECT * FROM c WHERE (c.n + 1) * 2 > 4 AND c.b`)).toBe(`FROM c WHERE ((c.n + 1) * 2) > 4 AND c.b`);
    // `??` binds last in the engine's grammar: it keeps its parentheses wherever it is.
    expect(fromWhere(`SELECT * FROM c WHERE (c.s ?? "x") = "x" AND c.b`)).toBe(`FROM c WHERE (c.s ?? "x") = "x" AND c.b`);
  });
});
