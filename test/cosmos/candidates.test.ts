import { describe, expect, it } from "vitest";
import query from "@zeit/cosmosdb-query";
import { equalityFilters, matches } from "../../local/cosmos/candidates";
import { afterAll, beforeAll } from "vitest";
import { cosmosFixture, type CosmosFixture } from "../support/cosmos";

const filters = (sql: string, parameters: { name: string; value: unknown }[] = []) => equalityFilters(query(sql).ast, parameters as never);

describe("candidate selection (the embedded server's index)", () => {
  it("takes the equality conjuncts on the collection alias", () => {
    expect(filters("SELECT * FROM p WHERE p.type = @type AND p.userId = 'u1'", [{ name: "@type", value: "post" }])).toEqual([
      { path: ["type"], value: "post" },
      { path: ["userId"], value: "u1" },
    ]);
    expect(filters("SELECT * FROM root r WHERE 3 = r.a.b AND r['c'] = true AND r.d = null")).toEqual([
      { path: ["a", "b"], value: 3 },
      { path: ["c"], value: true },
      { path: ["d"], value: null },
    ]);
  });

  it("ignores everything that does not constrain every result", () => {
    expect(filters("SELECT * FROM p WHERE p.a = 1 OR p.b = 2")).toEqual([]);
    expect(filters("SELECT * FROM p WHERE p.a != 1 AND p.b > 2 AND NOT (p.c = 3)")).toEqual([]);
    expect(filters("SELECT * FROM p WHERE p.a = @missing")).toEqual([]);
    expect(filters("SELECT * FROM p WHERE p.a = @obj", [{ name: "@obj", value: { x: 1 } }])).toEqual([]);
    expect(filters("SELECT * FROM p WHERE q.a = 1")).toEqual([]);
    expect(filters("SELECT * FROM p")).toEqual([]);
    expect(filters("SELECT * FROM p WHERE (p.a = 1 OR p.b = 1) AND p.c = 'x'")).toEqual([{ path: ["c"], value: "x" }]);
  });

  it("matches documents by strict equality at the path", () => {
    const f = [{ path: ["a", "b"], value: 1 as const }];
    expect(matches({ a: { b: 1 } }, f)).toBe(true);
    expect(matches({ a: { b: "1" } }, f)).toBe(false);
    expect(matches({ a: 1 }, f)).toBe(false);
  });
});

describe("queries with candidate selection, through the SDK", () => {
  let f: CosmosFixture;
  beforeAll(async () => (f = await cosmosFixture()));
  afterAll(() => f.stop());

  it("return the same results and report only the candidates as retrieved", async () => {
    const c = await f.container();
    for (let i = 0; i < 40; i++) await c.items.create({ id: `i${i}`, pk: `p${i % 4}`, type: i % 2 ? "post" : "like", n: i, tags: ["t"] });
    const spec = {
      query: "SELECT c.id FROM c JOIN t IN c.tags WHERE c.type = @type AND (c.n < 10 OR c.n > 35) ORDER BY c.n DESC",
      parameters: [{ name: "@type", value: "post" }],
    };
    const page = await c.items.query(spec, { populateQueryMetrics: true }).fetchNext();
    expect(page.resources.map((r) => r.id)).toEqual(["i39", "i37", "i9", "i7", "i5", "i3", "i1"]);
    expect(page.queryMetrics?.["0"].retrievedDocumentCount).toBe(20);
    const all = await c.items.query("SELECT VALUE COUNT(1) FROM c WHERE c.n >= 0", { populateQueryMetrics: true }).fetchNext();
    expect(all.resources).toEqual([40]);
    expect(all.queryMetrics?.["0"].retrievedDocumentCount).toBe(40);
  });
});
