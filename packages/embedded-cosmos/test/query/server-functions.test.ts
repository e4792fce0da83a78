import type { Container } from "@azure/cosmos";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cosmosFixture, type CosmosFixture } from "../fixture";

let f: CosmosFixture;
let c: Container;
beforeAll(async () => {
  f = await cosmosFixture({ partitions: 4 });
  c = await f.container();
  await c.items.create({ id: "a", pk: "p", kind: "Apple", n: 1, tags: ["x", { k: 1 }], json: "[1, 2]", object: '{"a": 1}' });
  await c.items.create({ id: "b", pk: "q", kind: "banana", n: 5, tags: ["y"], json: "{}", object: "[]" });
});
afterAll(() => f.stop());

/** Each item's value of `expression`, by id, answered across all partitions (the SDK's pipeline). */
const byId = async (expression: string, where = "true") =>
  Object.fromEntries((await c.items.query(`SELECT c.id, ${expression} AS v FROM c WHERE ${where}`).fetchAll()).resources.map((r) => [r.id, r.v]));

describe("the query language's functions the server runs itself", () => {
  it("IIF takes the second argument only for true", async () => {
    expect(await byId("IIF(c.n > 1, 'big', 'small')")).toEqual({ a: "small", b: "big" });
    expect(await byId("IIF(c.kind, 1, 2)")).toEqual({ a: 2, b: 2 });
  });

  it("StringEquals, CONTAINS, STARTSWITH and ENDSWITH, with and without ignoring case", async () => {
    expect(await byId("StringEquals(c.kind, 'apple')")).toEqual({ a: false, b: false });
    expect(await byId("StringEquals(c.kind, 'apple', true)")).toEqual({ a: true, b: false });
    expect(await byId("CONTAINS(c.kind, 'PL', true)")).toEqual({ a: true, b: false });
    expect(await byId("STARTSWITH(c.kind, 'BAN', true)")).toEqual({ a: false, b: true });
    expect(await byId("ENDSWITH(c.kind, 'LE', false)")).toEqual({ a: false, b: false });
    expect(await byId("StringEquals(c.n, '1')")).toEqual({ a: undefined, b: undefined });
    expect(Object.keys(await byId("1", "CONTAINS(c.kind, 'AN', true)"))).toEqual(["b"]);
  });

  it("ARRAY_CONTAINS_ANY and ARRAY_CONTAINS_ALL compare whole values", async () => {
    expect(await byId("ARRAY_CONTAINS_ANY(c.tags, 'y', 'z')")).toEqual({ a: false, b: true });
    expect(await byId("ARRAY_CONTAINS_ALL(c.tags, 'x', {'k': 1})")).toEqual({ a: true, b: false });
    expect(await byId("ARRAY_CONTAINS_ANY(c.kind, 'x')")).toEqual({ a: undefined, b: undefined });
  });

  it("StringToArray and StringToObject read JSON of their kind only", async () => {
    expect(await byId("StringToArray(c.json)")).toEqual({ a: [1, 2], b: undefined });
    expect(await byId("StringToObject(c.object)")).toEqual({ a: { a: 1 }, b: undefined });
  });

  it("GetCurrentDateTime, GetCurrentTimestamp and GetCurrentTicks tell the time as Azure writes it", async () => {
    const before = Date.now();
    const { a } = await byId("[GetCurrentDateTime(), GetCurrentTimestamp(), GetCurrentTicks()]");
    const [dateTime, timestamp, ticks] = a as [string, number, number];
    expect(dateTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}Z$/);
    expect(Date.parse(dateTime)).toBeGreaterThanOrEqual(before - 1);
    expect(timestamp).toBeGreaterThanOrEqual(before);
    expect(Math.abs(ticks / 10_000 - 62_135_596_800_000 - timestamp)).toBeLessThan(1000);
  });
});
