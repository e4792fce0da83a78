import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { indexablePredicates } from "../../src/query/candidates";
import { compiled } from "../../src/query/query";
import { NO_COST, requestUnits } from "../../src/limits/request-units";
import { cosmosFixture, type CosmosFixture } from "../fixture";

const where = (sql: string, parameters: { name: string; value: unknown }[] = []) => indexablePredicates(compiled(sql).ast, parameters as never);
const predicates = (sql: string, parameters: { name: string; value: unknown }[] = []) => where(sql, parameters).predicates;

describe("what an index can answer (the conjuncts of WHERE)", () => {
  it("takes equality, IN, ranges, ARRAY_CONTAINS and IS_DEFINED on the collection alias", () => {
    expect(predicates("SELECT * FROM p WHERE p.type = @type AND p.userId = 'u1'", [{ name: "@type", value: "post" }])).toEqual([
      { kind: "equal", path: ["type"], value: "post" },
      { kind: "equal", path: ["userId"], value: "u1" },
    ]);
    expect(
      predicates("SELECT * FROM root r WHERE 3 < r.a.b AND r['c'] IN ('x', @y) AND ARRAY_CONTAINS(r.tags, 'blue') AND IS_DEFINED(r.d)", [
        { name: "@y", value: "z" },
      ]),
    ).toEqual([
      { kind: "range", path: ["a", "b"], operator: ">", value: 3 },
      { kind: "in", path: ["c"], values: ["x", "z"] },
      { kind: "contains", path: ["tags"], value: "blue" },
      { kind: "defined", path: ["d"] },
    ]);
  });

  it("takes an OR when every side has an indexable condition (the union of their selections)", () => {
    const a = { kind: "equal", path: ["a"], value: 1 };
    const b = { kind: "equal", path: ["b"], value: 2 };
    expect(predicates("SELECT * FROM p WHERE p.a = 1 OR p.b = 2")).toEqual([{ kind: "any", alternatives: [[a], [b]] }]);
    expect(predicates("SELECT * FROM p WHERE p.a = 1 OR (p.b = 2 AND NOT IS_DEFINED(p.x)) OR p.c > 3")).toEqual([
      { kind: "any", alternatives: [[a], [b], [{ kind: "range", path: ["c"], operator: ">", value: 3 }]] },
    ]);
    expect(predicates("SELECT * FROM p WHERE p.a = 1 OR NOT IS_DEFINED(p.b)")).toEqual([]);
  });

  it("takes ARRAY_CONTAINS of a constant list and a path as that path IN the list (the like script's lookup by id)", () => {
    const ids = [{ name: "@ids", value: ["l1", "l2"] }];
    expect(predicates("SELECT * FROM c WHERE ARRAY_CONTAINS(@ids, c.id)", ids)).toEqual([{ kind: "in", path: ["id"], values: ["l1", "l2"] }]);
    expect(predicates("SELECT * FROM c WHERE ARRAY_CONTAINS(['a', 'b'], c.id)")).toEqual([{ kind: "in", path: ["id"], values: ["a", "b"] }]);
    expect(where("SELECT * FROM c WHERE c.id = @postId OR ARRAY_CONTAINS(@ids, c.id)", [...ids, { name: "@postId", value: "p1" }])).toEqual({
      predicates: [{ kind: "any", alternatives: [[{ kind: "equal", path: ["id"], value: "p1" }], [{ kind: "in", path: ["id"], values: ["l1", "l2"] }]] }],
      complete: true,
    });
    // A partial match (the third argument) or a list holding objects is left to the engine.
    expect(predicates("SELECT * FROM c WHERE ARRAY_CONTAINS(@ids, c.id, true)", ids)).toEqual([]);
    expect(predicates("SELECT * FROM c WHERE ARRAY_CONTAINS(@objects, c.id)", [{ name: "@objects", value: [{ a: 1 }] }])).toEqual([]);
  });

  it("ignores everything that does not constrain every result", () => {
    expect(predicates("SELECT * FROM p WHERE p.a != 1 AND NOT (p.c = 3) AND NOT IS_DEFINED(p.d)")).toEqual([]);
    expect(predicates("SELECT * FROM p WHERE p.a = @missing")).toEqual([]);
    expect(predicates("SELECT * FROM p WHERE p.a = @obj", [{ name: "@obj", value: { x: 1 } }])).toEqual([]);
    expect(predicates("SELECT * FROM p WHERE q.a = 1")).toEqual([]);
    expect(predicates("SELECT * FROM p")).toEqual([]);
    expect(predicates("SELECT * FROM p WHERE (p.a = 1 OR NOT p.b) AND p.c = 'x'")).toEqual([{ kind: "equal", path: ["c"], value: "x" }]);
  });

  it("tells whether the predicates are the whole WHERE (an index alone can answer it)", () => {
    expect(where("SELECT * FROM p WHERE p.type = 'post' AND (p.a IN (1, 2) OR p.b > 3)").complete).toBe(true);
    expect(where("SELECT * FROM p").complete).toBe(true);
    expect(where("SELECT * FROM p WHERE p.type = 'post' AND NOT IS_DEFINED(p.deleted)").complete).toBe(false);
    expect(where("SELECT * FROM p WHERE p.a = 1 OR (p.b = 2 AND STARTSWITH(p.c, 'x'))").complete).toBe(false);
    expect(where("SELECT * FROM p WHERE p.a = @missing").complete).toBe(false);
  });
});

let f: CosmosFixture;
beforeAll(async () => (f = await cosmosFixture()));
afterAll(() => f.stop());

/** retrievedDocumentCount of one query page, as the SDK reports query metrics. */
async function retrieved(
  container: Awaited<ReturnType<CosmosFixture["container"]>>,
  spec: { query: string; parameters?: { name: string; value: string | number }[] },
): Promise<{ count: number; ids: string[] }> {
  const response = await container.items.query<{ id: string }>(spec, { populateQueryMetrics: true, maxItemCount: 1000 }).fetchAll();
  const metrics = Object.values(response.queryMetrics ?? {}).map((m) => m.retrievedDocumentCount);
  return { count: metrics.reduce((a, b) => a + b, 0), ids: response.resources.map((r) => r.id) };
}

describe("indexes on a large container (through the SDK)", () => {
  let c: Awaited<ReturnType<CosmosFixture["container"]>>;
  beforeAll(async () => {
    c = await f.container({ indexingPolicy: { includedPaths: [{ path: "/*" }], excludedPaths: [{ path: "/note/?" }] } });
    const items = Array.from({ length: 3000 }, (_, i) => ({
      id: `i${i}`,
      pk: `p${i % 300}`,
      user: `u${i % 60}`,
      n: i,
      tags: i % 10 === 0 ? ["ten"] : [],
      note: `n${i % 2}`,
      ...(i % 100 === 0 ? { flag: true } : {}),
    }));
    for (let i = 0; i < items.length; i += 100) await Promise.all(items.slice(i, i + 100).map((item) => c.items.create(item)));
  }, 60_000);

  it("reads only the matches for equality, IN, ranges, ARRAY_CONTAINS and IS_DEFINED, across partitions", async () => {
    expect((await retrieved(c, { query: "SELECT c.id FROM c WHERE c.user = @u", parameters: [{ name: "@u", value: "u7" }] })).count).toBe(50);
    expect((await retrieved(c, { query: "SELECT c.id FROM c WHERE c.user IN ('u1', 'u2')" })).count).toBe(100);
    const range = await retrieved(c, { query: "SELECT c.id FROM c WHERE c.n >= 2990 AND c.n < 2995" });
    expect(range).toEqual({ count: 5, ids: ["i2990", "i2991", "i2992", "i2993", "i2994"] });
    expect((await retrieved(c, { query: "SELECT c.id FROM c WHERE ARRAY_CONTAINS(c.tags, 'ten')" })).count).toBe(300);
    expect((await retrieved(c, { query: "SELECT c.id FROM c WHERE IS_DEFINED(c.flag)" })).count).toBe(30);
    // Intersected, smallest first: 50 for the user, then the range narrows it further.
    expect((await retrieved(c, { query: "SELECT c.id FROM c WHERE c.user = 'u7' AND c.n < 100" })).count).toBeLessThanOrEqual(50);
  });

  it("sees a write in the very next query (consistent indexing), and forgets deleted and changed values", async () => {
    await c.items.create({ id: "fresh", pk: "p1", user: "newcomer", n: -1, tags: [] });
    expect((await retrieved(c, { query: "SELECT c.id FROM c WHERE c.user = 'newcomer'" })).ids).toEqual(["fresh"]);
    await c.item("fresh", "p1").patch([{ op: "set", path: "/user", value: "renamed" }]);
    expect((await retrieved(c, { query: "SELECT c.id FROM c WHERE c.user = 'newcomer'" })).ids).toEqual([]);
    await c.item("fresh", "p1").delete();
    expect((await retrieved(c, { query: "SELECT c.id FROM c WHERE c.user = 'renamed'" })).ids).toEqual([]);
  });

  it("answers an index-served COUNT from the index, loading no document, and charges it for the index hits", async () => {
    const response = await c.items
      .query<number>({ query: "SELECT VALUE COUNT(1) FROM c WHERE c.user = @u", parameters: [{ name: "@u", value: "u7" }] }, { populateQueryMetrics: true })
      .fetchAll();
    expect(response.resources.reduce((a, b) => a + b, 0)).toBe(50);
    expect(Object.values(response.queryMetrics ?? {}).reduce((n, m) => n + m.retrievedDocumentCount, 0)).toBe(0);
    // A COUNT whose WHERE an index cannot answer alone (note is not indexed) loads what it counts.
    const filtered = await retrieved(c, { query: "SELECT VALUE COUNT(1) FROM c WHERE c.user = 'u7' AND c.note = 'n1'" });
    expect(filtered.count).toBe(50);
    // Nor one with an unindexed path inside an OR.
    const either = await retrieved(c, { query: "SELECT VALUE COUNT(1) FROM c WHERE (c.user = 'u7' AND c.note = 'n1') OR c.user = 'u8'" });
    expect(either.count).toBe(100);
  });

  it("scans what the policy does not index, with the same results", async () => {
    const scan = await retrieved(c, { query: "SELECT c.id FROM c WHERE c.note = 'n1'" });
    expect(scan.ids).toHaveLength(1500);
    expect(scan.count).toBeGreaterThanOrEqual(3000);
  });
});

describe("indexes of one logical partition", () => {
  it("read only what a list query selects in its partition (the post and its comments, not its likes)", async () => {
    const c = await f.container({ partitionKey: { paths: ["/postId"] } });
    await c.items.create({ id: "p", postId: "p", type: "post" });
    for (let i = 0; i < 30; i++)
      await c.items.create({ id: `c${i}`, postId: "p", type: "comment", creationDate: `2026-01-01T00:00:${String(i).padStart(2, "0")}Z` });
    for (let i = 0; i < 50; i++) await c.items.create({ id: `l${i}`, postId: "p", type: "like" });
    const response = await c.items
      .query(
        "SELECT TOP 12 * FROM c WHERE c.type = 'post' OR (c.type = 'comment' AND NOT IS_DEFINED(c.deleted)) ORDER BY c.type DESC, c.creationDate ASC, c.id ASC",
        { partitionKey: "p", populateQueryMetrics: true },
      )
      .fetchAll();
    expect(response.resources.map((r) => r.id)).toEqual(["p", ...Array.from({ length: 11 }, (_, i) => `c${i}`)]);
    const read = Object.values(response.queryMetrics ?? {}).reduce((n, m) => n + m.retrievedDocumentCount, 0);
    expect(read).toBe(31);
  });

  it("load only the n items of an index-served TOP n, and count from the index", async () => {
    const c = await f.container({ partitionKey: { paths: ["/postId"] } });
    for (let i = 0; i < 30; i++) await c.items.create({ id: `c${i}`, postId: "p", type: "comment", n: i });
    const top = await c.items
      .query("SELECT TOP 5 c.id FROM c WHERE c.type = 'comment' ORDER BY c.n DESC", { partitionKey: "p", populateQueryMetrics: true })
      .fetchAll();
    expect(top.resources.map((r) => r.id)).toEqual(["c29", "c28", "c27", "c26", "c25"]);
    expect(Object.values(top.queryMetrics ?? {}).reduce((n, m) => n + m.retrievedDocumentCount, 0)).toBe(5);
    const count = await c.items.query("SELECT VALUE COUNT(1) FROM c WHERE c.type = 'comment'", { partitionKey: "p" }).fetchAll();
    const charge = requestUnits({ ...NO_COST, queries: 1, indexHits: 30, returnedKb: Buffer.byteLength(JSON.stringify([30])) / 1024 });
    expect(count.requestCharge).toBeCloseTo(charge, 1);
  });
});
