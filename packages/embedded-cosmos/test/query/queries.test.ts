import { NO_COST, requestUnits } from "../../src/limits/request-units";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Container } from "@azure/cosmos";
import { cosmosFixture, statusOf, type CosmosFixture } from "../fixture";

let f: CosmosFixture;
let c: Container;
beforeAll(async () => {
  f = await cosmosFixture();
  c = await f.container();
  // Partition "a" holds 30 items, "b" holds 5: scoping is visible in both results and metrics.
  for (let i = 0; i < 30; i++) await c.items.create({ id: `a${i}`, pk: "a", n: i, kind: i % 2 ? "odd" : "even" });
  for (let i = 0; i < 5; i++) await c.items.create({ id: `b${i}`, pk: "b", n: 100 + i, kind: "odd" });
});
afterAll(() => f.stop());

describe("queries", () => {
  it("scopes a query with partitionKey to that logical partition and reads nothing else", async () => {
    const response = await c.items.query("SELECT * FROM c", { partitionKey: "b", populateQueryMetrics: true }).fetchNext();
    expect(response.resources.map((r) => r.pk)).toEqual(["b", "b", "b", "b", "b"]);
    expect(response.queryMetrics?.["0"].retrievedDocumentCount).toBe(5);
    // The cost model charges the query for the five items it loaded, not the thirty of partition "a".
    expect(response.requestCharge).toBeCloseTo(
      requestUnits({ ...NO_COST, queries: 1, loadedItems: 5, returnedKb: Buffer.byteLength(JSON.stringify(response.resources)) / 1024 }),
      1,
    );
  });

  it("sees every partition when no partitionKey is given", async () => {
    const { resources } = await c.items.query("SELECT VALUE COUNT(1) FROM c").fetchAll();
    expect(resources).toEqual([35]);
  });

  it("binds parameters, orders by one field and applies TOP", async () => {
    const { resources } = await c.items
      .query(
        { query: "SELECT TOP 3 c.id, c.n FROM c WHERE c.kind = @kind ORDER BY c.n DESC", parameters: [{ name: "@kind", value: "odd" }] },
        { partitionKey: "a" },
      )
      .fetchAll();
    expect(resources).toEqual([
      { id: "a29", n: 29 },
      { id: "a27", n: 27 },
      { id: "a25", n: 25 },
    ]);
  });

  it("treats a parameter value as data, never as SQL", async () => {
    const { resources } = await c.items
      .query({ query: "SELECT * FROM c WHERE c.id = @id", parameters: [{ name: "@id", value: "a1' OR 1=1 --" }] }, { partitionKey: "a" })
      .fetchAll();
    expect(resources).toEqual([]);
  });

  it("pages with maxItemCount and resumes from a continuation token in a new iterator", async () => {
    const spec = "SELECT * FROM c ORDER BY c.n ASC";
    const seen: number[] = [];
    let token: string | undefined;
    do {
      const page = await c.items.query(spec, { partitionKey: "a", maxItemCount: 7, continuationToken: token }).fetchNext();
      expect(page.resources.length).toBeLessThanOrEqual(7);
      seen.push(...page.resources.map((r) => r.n as number));
      token = page.continuationToken;
    } while (token);
    expect(seen).toEqual([...Array(30).keys()]);
  });

  it("answers a SQL syntax error with 400 and a message", async () => {
    const error = await c.items
      .query("SELEC * FROM c", { partitionKey: "a" })
      .fetchAll()
      .catch((e: unknown) => e as { code: number; message: string });
    expect(error).toMatchObject({ code: 400 });
    expect((error as { message: string }).message).toMatch(/syntax/i);
  });

  it("reads all items of a partition with readAll", async () => {
    const { resources } = await c.items.readAll({ partitionKey: "b" }).fetchAll();
    expect(resources).toHaveLength(5);
  });

  it("returns 404 for a query on a missing container", async () => {
    expect(await statusOf(f.database.container("missing").items.query("SELECT * FROM c").fetchAll())).toBe(404);
  });
});
