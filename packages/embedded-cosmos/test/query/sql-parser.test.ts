import { readFileSync } from "node:fs";
import { join } from "node:path";
import peggy from "peggy";
import engine from "@zeit/cosmosdb-query";
import { describe, expect, it } from "vitest";
import { parseSql, SqlSyntaxError } from "../../src/query/sql-parser";

const source = (name: string) => readFileSync(join(__dirname, "../../src/query", name), "utf8");
const grammar = source("sql.peggy");

/** Every query the project's JavaScript and .NET tests sent the server when the parser was replaced. */
const corpus = JSON.parse(readFileSync(join(__dirname, "sql-corpus.json"), "utf8")) as string[];

/** The engine's own parser's tree, or undefined where it refuses the text. */
function engineTree(sql: string): unknown {
  try {
    return engine(sql).ast;
  } catch {
    return undefined;
  }
}

/** How deeply brackets of any kind nest in `sql`, outside its string literals. */
function bracketDepth(sql: string): number {
  let depth = 0;
  let deepest = 0;
  for (const ch of sql.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, "")) {
    if ("([{".includes(ch)) deepest = Math.max(deepest, ++depth);
    else if (")]}".includes(ch)) depth--;
  }
  return deepest;
}

describe("the SQL parser", () => {
  it("is what peggy makes of the grammar (run `npm run build:sql` after changing sql.peggy)", () => {
    expect(peggy.generate(grammar, { output: "source", format: "commonjs" })).toBe(source("sql-parser.generated.js"));
  });

  it("builds the engine's own parser's tree for every query the project's tests send, to three levels of brackets", () => {
    // Deeper, the engine's own parser takes seconds a query (why it was replaced); the suites run those.
    const shallow = corpus.filter((sql) => bracketDepth(sql) <= 3);
    expect(shallow.length).toBeGreaterThan(200);
    for (const sql of shallow) {
      const expected = engineTree(sql);
      if (expected === undefined) expect(() => parseSql(sql), sql).toThrow(SqlSyntaxError);
      else expect(parseSql(sql), sql).toEqual(expected);
    }
  });

  it("does the same work for each level of nesting: parsing grows with the text, not exponentially with its depth", () => {
    const traced = peggy.generate(grammar, { trace: true });
    const work = (depth: number) => {
      let expression = "c.n";
      for (let level = 0; level < depth; level++) expression = `ABS((${expression} + [1, {"a": (${level})}]))`;
      let entries = 0;
      traced.parse(`SELECT VALUE ${expression} FROM c WHERE c.n BETWEEN 1 AND 2 ? 1 : 2`, {
        tracer: { trace: (event: { type: string }) => void (event.type === "rule.enter" && entries++) },
      });
      return entries;
    };
    const perLevel = work(11) - work(10);
    expect(work(20) - work(10)).toBe(10 * perLevel);
    expect(work(40) - work(20)).toBe(20 * perLevel);
  });

  it("reads what the engine's own parser did not: exponents, undefined as the constant it is, NOT IN, NOT BETWEEN and LIKE", () => {
    const value = (sql: string) => ((parseSql(sql).body as { select: { value: unknown } }).select as { value: unknown }).value;
    expect(value("SELECT VALUE 1.5e3")).toEqual({ type: "number_constant", value: 1500 });
    expect(value("SELECT VALUE -2E-1")).toEqual({ type: "number_constant", value: -0.2 });
    expect(value("SELECT VALUE undefined")).toEqual({ type: "undefined_constant" });
    const c = (name: string) => ({
      type: "scalar_member_expression",
      object: { type: "identifier", name: "c" },
      property: { type: "identifier", name },
      computed: false,
    });
    const not = (argument: unknown) => ({ type: "scalar_unary_expression", operator: "NOT", argument });
    expect(value("SELECT VALUE c.a NOT IN (1)")).toEqual(not({ type: "scalar_in_expression", value: c("a"), list: [{ type: "number_constant", value: 1 }] }));
    expect(value("SELECT VALUE c.a NOT BETWEEN 1 AND 2")).toMatchObject(not({ type: "scalar_between_expression", value: c("a") }));
    expect(value("SELECT VALUE c.a LIKE 'x!%' ESCAPE '!'")).toEqual({
      type: "scalar_like_expression",
      value: c("a"),
      pattern: { type: "string_constant", value: "x!%" },
      escape: { type: "string_constant", value: "!" },
    });
    expect(value("SELECT VALUE c.like")).toEqual(c("like"));
  });

  it("says where a query stops making sense", () => {
    expect(() => parseSql("SELECT * FROM c WHERE c.a = = 1")).toThrow(/Expected .* but "=" found/);
    expect(() => parseSql("SELECT * FROM c WHERE c.select = 1")).toThrow(SqlSyntaxError);
  });
});
