import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Container } from "@azure/cosmos";
import { cosmosFixture, statusOf, type CosmosFixture } from "../fixture";
import { boundedCode, compileSql, ROW_BUDGET } from "../../src/query/engine";

let f: CosmosFixture;
let c: Container;
beforeAll(async () => {
  f = await cosmosFixture();
  c = await f.container();
});
afterAll(() => f.stop());

const numbers = (n: number) => Array.from({ length: n }, (_, i) => i);
const all = async (query: string, pk?: string) => (await c.items.query(query, pk === undefined ? {} : { partitionKey: pk }).fetchAll()).resources;

describe("no query holds the server: the SQL engine's work is bounded", () => {
  it("counts one item's triple JOIN of a 60-element array (the query that held the server for 16 s)", async () => {
    await c.items.create({ id: "joins-60", pk: "joins-60", arr: numbers(60) });
    const [read, count] = await Promise.all([
      c.item("joins-60", "joins-60").read(),
      all("SELECT VALUE COUNT(1) FROM c JOIN a IN c.arr JOIN b IN c.arr JOIN d IN c.arr", "joins-60"),
    ]);
    expect(read.statusCode).toBe(200);
    expect(count).toEqual([60 ** 3]);
  });

  it("refuses with 408 a query that makes more rows than the budget from one item, and the server serves on", async () => {
    await c.items.create({ id: "joins-100", pk: "joins-100", arr: numbers(100) });
    const error = await c.items
      .query("SELECT VALUE COUNT(1) FROM c JOIN a IN c.arr JOIN b IN c.arr JOIN d IN c.arr", { partitionKey: "joins-100" })
      .fetchAll()
      .catch((e: unknown) => e as { code: number; message: string });
    expect(error).toMatchObject({ code: 408 });
    expect((error as { message: string }).message).toContain("JOINs");
    expect(await statusOf(c.items.query("SELECT VALUE COUNT(1) FROM c JOIN a IN c.arr JOIN b IN c.arr JOIN d IN c.arr JOIN e IN c.arr").fetchAll())).toBe(408);
    expect((await c.item("joins-100", "joins-100").read()).statusCode).toBe(200);
  });

  it("answers other requests while a query's JOINs are evaluated (on the query thread)", async () => {
    await c.items.upsert({ id: "joins-100", pk: "joins-100", arr: numbers(100) });
    const settled: string[] = [];
    const hostile = c.items
      .query("SELECT VALUE COUNT(1) FROM c JOIN a IN c.arr JOIN b IN c.arr JOIN d IN c.arr", { partitionKey: "joins-100" })
      .fetchAll()
      .catch(() => undefined)
      .then(() => settled.push("hostile query"));
    // Sent once the query is on its way: the server must not wait for it to answer these.
    await new Promise((resolve) => setTimeout(resolve, 20));
    await Promise.all([
      c
        .item("joins-100", "joins-100")
        .read()
        .then(() => settled.push("read")),
      c.items.upsert({ id: "other", pk: "other" }).then(() => settled.push("write")),
    ]);
    await hostile;
    expect(settled).toEqual(["read", "write", "hostile query"]);
  });

  it("ends a scan's page where the row budget runs out and resumes it: every result, page by page", async () => {
    const items = Math.ceil((2 * ROW_BUDGET) / 150 ** 2);
    for (let i = 0; i < items; i++) await c.items.create({ id: `wide-${i}`, pk: "wide", arr: numbers(150) });
    const iterator = c.items.query("SELECT VALUE c.id FROM c JOIN a IN c.arr JOIN b IN c.arr WHERE a = 7 AND b = 7", { partitionKey: "wide" });
    const pages: string[][] = [];
    while (iterator.hasMoreResults()) pages.push((await iterator.fetchNext()).resources as string[]);
    expect(pages.flat().sort()).toEqual(
      numbers(items)
        .map((i) => `wide-${i}`)
        .sort(),
    );
    expect(pages.filter((page) => page.length > 0).length).toBeGreaterThan(1);
  });

  it("counts JOIN rows across partitions as in one (the query plan's per-range query keeps `a IN c.arr`)", async () => {
    const d = await f.container();
    await d.items.create({ id: "one", pk: "one", arr: [1, 2, 3] });
    await d.items.create({ id: "two", pk: "two", arr: [4, 5] });
    const count = "SELECT VALUE COUNT(1) FROM c JOIN a IN c.arr JOIN b IN c.arr";
    expect((await d.items.query(count).fetchAll()).resources).toEqual([13]);
    expect((await d.items.query("SELECT VALUE SUM(a) FROM c JOIN a IN c.arr").fetchAll()).resources).toEqual([15]);
  });

  it("caps REPLICATE's result at 10,000 characters, as Azure does", async () => {
    await c.items.create({ id: "s", pk: "replicate", s: "x".repeat(1000) });
    expect(await all("SELECT VALUE REPLICATE(c.s, 100000) FROM c", "replicate")).toEqual([]);
    expect(await all("SELECT VALUE LENGTH(REPLICATE(c.s, 10)) FROM c", "replicate")).toEqual([10_000]);
    expect(await all("SELECT VALUE REPLICATE('ab', 2.7) FROM c", "replicate")).toEqual(["abab"]);
    expect(await all("SELECT VALUE REPLICATE('ab', -1) FROM c", "replicate")).toEqual([]);
  });

  it("answers 400 to a query nested too deeply to parse", async () => {
    const deep = "SELECT VALUE " + "(".repeat(5000) + "1" + ")".repeat(5000) + " FROM c";
    expect(await statusOf(c.items.query(deep, { partitionKey: "any" }).fetchAll())).toBe(400);
  });

  it("parses a query of function calls nested 10 deep at once (the engine's own parser took time exponential in the depth)", async () => {
    await c.items.create({ id: "nested", pk: "nested", n: -2 });
    let expression = "c.n";
    for (let level = 0; level < 10; level++) expression = `ABS((${expression}))`;
    const [answer, read] = await Promise.all([all(`SELECT VALUE ${expression} FROM c`, "nested"), c.item("nested", "nested").read()]);
    expect(answer).toEqual([2]);
    expect(read.statusCode).toBe(200);
  }, 60_000);

  it("refuses at write time an item nested deeper than Azure's limit of 128, objects or arrays", async () => {
    let object: Record<string, unknown> = { leaf: 1 };
    let array: unknown[] = [1];
    for (let i = 0; i < 3000; i++) {
      object = { next: object };
      array = [array];
    }
    expect(await statusOf(c.items.create({ id: "deep-object", pk: "deep", next: object }))).toBe(400);
    expect(await statusOf(c.items.create({ id: "deep-array", pk: "deep", next: array }))).toBe(400);
    let allowed: Record<string, unknown> = {};
    for (let i = 0; i < 120; i++) allowed = { next: allowed };
    expect((await c.items.create({ id: "deep-enough", pk: "deep", next: allowed })).statusCode).toBe(201);
    expect(
      await statusOf(c.item("deep-enough", "deep").patch([{ op: "add", path: "/more", value: { wrapped: allowed, in: [[[[[[[[[[allowed]]]]]]]]]] } }])),
    ).toBe(400);
    expect(await all("SELECT VALUE c.id FROM c", "deep")).toEqual(["deep-enough"]);
  });
});

describe("the engine's rewritten code", () => {
  it("appends rows instead of copying them, and leaves string literals alone", () => {
    const code = boundedCode("$c.reduce(($, c) => [...$, ...(c.a || []).map(a => ({ c, a }))], []).filter(x => x === \"[...$, ]\" || x === '$b.REPLICATE(')");
    expect(code).toBe(
      "$c.reduce(($, c) => udf.$append($, [...(c.a || []).map(a => ({ c, a }))]), []).filter(x => x === \"[...$, ]\" || x === '$b.REPLICATE(')",
    );
  });

  it("gives the engine's answers for JOINs, subqueries and string constants with brackets", () => {
    const docs = [
      { id: "1", _rid: "a", tags: [{ n: "x]" }, { n: "y" }], s: "ab" },
      { id: "2", _rid: "b", tags: [], s: "c" },
    ];
    const query =
      'SELECT c.id, t.n, REPLICATE(c.s, 2) AS r, "[...$, ]" AS z FROM c JOIN t IN c.tags WHERE t.n != "y" OR EXISTS(SELECT VALUE 1 FROM u IN c.tags WHERE u.n = "y")';
    expect(compileSql(query).exec(docs).result).toEqual([
      { id: "1", n: "x]", r: "abab", z: "[...$, ]" },
      { id: "1", n: "y", r: "abab", z: "[...$, ]" },
    ]);
  });
});
