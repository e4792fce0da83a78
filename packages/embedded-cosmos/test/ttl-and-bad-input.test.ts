import { authorizationHeaders } from "../src/protocol/auth";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChangeFeedStartFrom, StatusCodes } from "@azure/cosmos";
import { ManualClock } from "./fixture";
import { cosmosFixture, statusOf, type CosmosFixture } from "./fixture";

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

  it("answers an unknown path with 404 and keeps serving", async () => {
    expect((await raw("nothing/here", { method: "GET" })).status).toBe(404);
    const c = await f.container();
    expect((await c.items.create({ id: "still", pk: "ok" })).statusCode).toBe(201);
  });
});
