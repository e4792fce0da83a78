import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cosmosFixture, statusOf, type CosmosFixture } from "../fixture";

let f: CosmosFixture;
beforeAll(async () => (f = await cosmosFixture()));
afterAll(() => f.stop());

describe("databases and containers", () => {
  it("creates, reads, lists and deletes databases; duplicates conflict, missing ones are 404", async () => {
    const { database, statusCode } = await f.client.databases.create({ id: "shop" });
    expect(statusCode).toBe(201);
    expect(await statusOf(f.client.databases.create({ id: "shop" }))).toBe(409);
    const again = await f.client.databases.createIfNotExists({ id: "shop" });
    expect(again.statusCode).toBe(200);
    const { resources } = await f.client.databases.readAll().fetchAll();
    expect(resources.map((d) => d.id)).toContain("shop");
    await database.delete();
    expect(await statusOf(f.client.database("shop").read())).toBe(404);
  });

  it("creates containers with partition key, unique keys and defaultTtl, and replaces TTL", async () => {
    const { container, resource } = await f.database.containers.createIfNotExists({
      id: "accounts",
      partitionKey: { paths: ["/tenant"] },
      uniqueKeyPolicy: { uniqueKeys: [{ paths: ["/email"] }] },
      defaultTtl: -1,
    });
    expect(resource?.partitionKey?.paths).toEqual(["/tenant"]);
    expect(resource?.defaultTtl).toBe(-1);
    expect((await f.database.containers.createIfNotExists({ id: "accounts", partitionKey: "/tenant" })).statusCode).toBe(200);
    expect(await statusOf(f.database.containers.create({ id: "accounts", partitionKey: "/tenant" }))).toBe(409);

    const replaced = await container.replace({ id: "accounts", partitionKey: { paths: ["/tenant"] }, defaultTtl: 3600 });
    expect(replaced.resource?.defaultTtl).toBe(3600);
    expect(await statusOf(container.replace({ id: "accounts", partitionKey: { paths: ["/other"] } }))).toBe(400);

    const { resources } = await f.database.containers.readAll().fetchAll();
    expect(resources.map((c) => c.id)).toContain("accounts");
    await container.delete();
    expect(await statusOf(container.read())).toBe(404);
  });

  it("enforces unique keys within a logical partition only", async () => {
    const c = await f.container({ partitionKey: { paths: ["/tenant"] }, uniqueKeyPolicy: { uniqueKeys: [{ paths: ["/email"] }] } });
    await c.items.create({ id: "1", tenant: "a", email: "x@example.com" });
    expect(await statusOf(c.items.create({ id: "2", tenant: "a", email: "x@example.com" }))).toBe(409);
    await expect(c.items.create({ id: "2", tenant: "b", email: "x@example.com" })).resolves.toBeTruthy();
    await expect(c.items.upsert({ id: "1", tenant: "a", email: "x@example.com", name: "same item" })).resolves.toBeTruthy();
  });

  it("rejects a container without a partition key path", async () => {
    expect(await statusOf(f.database.containers.create({ id: "bad", partitionKey: { paths: ["nope"] } }))).toBe(400);
  });
});
