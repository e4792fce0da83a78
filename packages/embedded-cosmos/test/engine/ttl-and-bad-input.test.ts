import { authorizationHeaders } from "../../src/protocol/auth";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChangeFeedStartFrom, StatusCodes } from "@azure/cosmos";
import { ManualClock } from "../fixture";
import { cosmosFixture, statusOf, type CosmosFixture } from "../fixture";

let f: CosmosFixture;
/** The server's data clock: items expire when the test moves it, not after a sleep. */
const clock = new ManualClock();
beforeAll(async () => (f = await cosmosFixture({ clock })));
afterAll(() => f.stop());

describe("time to live", () => {
  it("expires items by the container's defaultTtl: gone from reads, queries and the change feed", async () => {
    const c = await f.container({ defaultTtl: 1 });
    await c.items.create({ id: "short", pk: "t" });
    clock.advance(900);
    expect((await c.item("short", "t").read()).statusCode).toBe(200); // within its second still
    clock.advance(1100);
    expect((await c.item("short", "t").read()).statusCode).toBe(404);
    const { resources } = await c.items.query("SELECT * FROM c").fetchAll();
    expect(resources).toEqual([]);
    const feed = await c.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning() }).readNext();
    expect(feed.statusCode).toBe(StatusCodes.NotModified);
  });

  it("expires an item by its own ttl when the container has defaultTtl -1, and keeps the others", async () => {
    const c = await f.container({ defaultTtl: -1 });
    await c.items.create({ id: "soft-deleted", pk: "t", deleted: true, ttl: 1 });
    await c.items.create({ id: "kept", pk: "t" });
    clock.advance(2000);
    expect((await c.item("soft-deleted", "t").read()).statusCode).toBe(404);
    expect((await c.item("kept", "t").read()).statusCode).toBe(200);
  });

  it("ignores item ttl when the container has no TTL", async () => {
    const c = await f.container();
    await c.items.create({ id: "stays", pk: "t", ttl: 1 });
    clock.advance(2000);
    expect((await c.item("stays", "t").read()).statusCode).toBe(200);
  });

  it("rejects an invalid ttl", async () => {
    const c = await f.container({ defaultTtl: -1 });
    expect(await statusOf(c.items.create({ id: "bad", pk: "t", ttl: 0 }))).toBe(400);
  });
});

/** Requests the SDK would never send, sent raw: the server must answer like Cosmos DB, not crash. */
describe("bad input", () => {
  const raw = (path: string, init: RequestInit) => {
    const url = new URL(path, f.cosmos.endpoint);
    return fetch(url, {
      ...init,
      headers: { ...authorizationHeaders(f.cosmos.key, init.method ?? "GET", url.pathname), ...(init.headers as Record<string, string>) },
    });
  };

  it("answers malformed JSON with 400 and a message", async () => {
    const c = await f.container();
    const response = await raw(`dbs/test/colls/${c.id}/docs`, { method: "POST", headers: { "x-ms-documentdb-partitionkey": '["a"]' }, body: "{not json" });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: "BadRequest", message: expect.stringContaining("invalid JSON") });
  });

  it("answers a partitioned write without a partition key header with 400", async () => {
    const c = await f.container();
    const response = await raw(`dbs/test/colls/${c.id}/docs`, { method: "POST", body: JSON.stringify({ id: "x", pk: "a" }) });
    expect(response.status).toBe(400);
    expect((await response.json()).message).toMatch(/PartitionKey/);
  });

  it("answers reserved characters in ids and a bad partition key header with 400", async () => {
    const c = await f.container();
    const badId = await raw(`dbs/test/colls/${c.id}/docs`, {
      method: "POST",
      headers: { "x-ms-documentdb-partitionkey": '["a"]' },
      body: JSON.stringify({ id: "a#b", pk: "a" }),
    });
    expect(badId.status).toBe(400);
    const badHeader = await raw(`dbs/test/colls/${c.id}/docs`, {
      method: "POST",
      headers: { "x-ms-documentdb-partitionkey": "a" },
      body: JSON.stringify({ id: "x", pk: "a" }),
    });
    expect(badHeader.status).toBe(400);
  });

  it("answers a malformed percent-escape in the path with 400, before anything else", async () => {
    const response = await fetch(new URL("dbs/test/colls/%E0%A4%A/docs", f.cosmos.endpoint));
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: "BadRequest", message: expect.stringContaining("percent-escape") });
  });

  it("answers an object or array partition key value with 400: in the header, in the item, in a batch", async () => {
    const c = await f.container();
    for (const header of ['[{"a":1}]', "[[1]]"]) {
      const response = await raw(`dbs/test/colls/${c.id}/docs`, {
        method: "POST",
        headers: { "x-ms-documentdb-partitionkey": header },
        body: JSON.stringify({ id: "x", pk: "a" }),
      });
      expect(response.status, header).toBe(400);
    }
    for (const pk of [{ a: 1 }, [1]]) {
      expect(await statusOf(c.items.create({ id: "x", pk } as never)), JSON.stringify(pk)).toBe(400);
      const response = await raw(`dbs/test/colls/${c.id}/docs`, {
        method: "POST",
        headers: { "x-ms-documentdb-partitionkey": JSON.stringify([pk]), "x-ms-cosmos-is-batch-request": "True", "x-ms-cosmos-batch-atomic": "True" },
        body: JSON.stringify([{ operationType: "Create", resourceBody: { id: "y", pk } }]),
      });
      expect(response.status, JSON.stringify(pk)).toBe(400);
    }
  });

  it("answers a bulk operation whose partition key is not JSON with its own 400, and commits each valid operation once", async () => {
    const c = await f.container();
    const key = JSON.stringify(["same"]);
    const { resources: ranges } = await c.readPartitionKeyRanges().fetchAll();
    let answered: { statusCode: number }[] | undefined;
    for (const range of ranges) {
      const response = await raw(`dbs/test/colls/${c.id}/docs`, {
        method: "POST",
        headers: { "x-ms-cosmos-is-batch-request": "True", "x-ms-cosmos-batch-atomic": "False", "x-ms-documentdb-partitionkeyrangeid": range.id },
        body: JSON.stringify([
          { operationType: "Create", partitionKey: key, resourceBody: { id: "first", pk: "same" } },
          { operationType: "Create", partitionKey: "{not json", resourceBody: { id: "bad", pk: "same" } },
          { operationType: "Create", partitionKey: key, resourceBody: { id: "last", pk: "same" } },
        ]),
      });
      expect(response.status).toBeLessThan(500);
      const results = (await response.json()) as { statusCode: number }[];
      if (results[0].statusCode === 201) answered = results;
    }
    expect(answered?.map((r) => r.statusCode)).toEqual([201, 400, 201]);
    const { resources } = await c.items.query("SELECT VALUE c.id FROM c").fetchAll();
    expect(resources.sort()).toEqual(["first", "last"]);
  });

  it("answers an x-ms-max-item-count that is not an integer with 400 naming the header", async () => {
    const c = await f.container();
    for (const max of ["0.5", "many"]) {
      const response = await raw(`dbs/test/colls/${c.id}/docs`, {
        method: "POST",
        headers: {
          "x-ms-documentdb-isquery": "True",
          "content-type": "application/query+json",
          "x-ms-documentdb-query-enablecrosspartition": "True",
          "x-ms-max-item-count": max,
        },
        body: JSON.stringify({ query: "SELECT * FROM c" }),
      });
      expect(response.status, max).toBe(400);
      expect((await response.json()).message, max).toContain("x-ms-max-item-count");
    }
  });

  it("answers an unknown path with 404 and keeps serving", async () => {
    expect((await raw("nothing/here", { method: "GET" })).status).toBe(404);
    const c = await f.container();
    expect((await c.items.create({ id: "still", pk: "ok" })).statusCode).toBe(201);
  });
});
