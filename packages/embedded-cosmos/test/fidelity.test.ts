import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cosmosFixture, statusOf, type CosmosFixture } from "./fixture";

/**
 * Behaviours where the embedded server once differed from Azure, as the official @azure/cosmos
 * functional tests found them. Each is checked through the SDK only.
 */
let f: CosmosFixture;
// TEST_COSMOS_ENDPOINT and TEST_COSMOS_KEY run these against a real account or emulator: the server's reference.
beforeAll(async () => (f = await cosmosFixture({}, { againstAzure: true })));
afterAll(() => f.stop());

describe("the embedded server behaves as Azure does", () => {
  it("returns items in insertion order, across logical partitions too (_rid order)", async () => {
    const c = await f.container();
    const ids = Array.from({ length: 30 }, (_, i) => `item-${String(i).padStart(2, "0")}`);
    for (const [i, id] of ids.entries()) await c.items.create({ id, pk: `p${(i * 7) % 5}` });
    await c.items.upsert({ id: ids[3], pk: `p${(3 * 7) % 5}`, updated: true }); // an update keeps its place
    const { resources } = await c.items.query("SELECT c.id FROM c").fetchAll();
    expect(resources.map((r) => r.id)).toEqual(ids);
    const rids = (await c.items.readAll().fetchAll()).resources.map((r) => r._rid);
    expect(new Set(rids).size).toBe(ids.length);
  });

  it("completes a container's own indexing policy as Azure does", async () => {
    const c = await f.container({ indexingPolicy: { includedPaths: [{ path: "/name/?" }], excludedPaths: [{ path: "/*" }] } });
    const { resource } = await c.read();
    expect(resource?.indexingPolicy).toMatchObject({
      indexingMode: "consistent",
      automatic: true,
      includedPaths: [{ path: "/name/?" }],
      excludedPaths: [{ path: "/*" }, { path: '/"_etag"/?' }],
    });
    const defaults = (await (await f.container({ indexingPolicy: { indexingMode: "consistent" } })).read()).resource?.indexingPolicy;
    expect(defaults).toMatchObject({ automatic: true, includedPaths: [{ path: "/*" }], excludedPaths: [{ path: '/"_etag"/?' }] });
  });

  it("deletes every item of one partition key", async () => {
    const c = await f.container();
    for (let i = 0; i < 5; i++) await c.items.create({ id: `gone${i}`, pk: "doomed" });
    await c.items.create({ id: "kept", pk: "other" });
    await c.deleteAllItemsForPartitionKey("doomed");
    expect((await c.items.query("SELECT VALUE COUNT(1) FROM c", { partitionKey: "doomed" }).fetchAll()).resources).toEqual([0]);
    expect((await c.item("kept", "other").read()).resource?.id).toBe("kept");
  });

  it("answers 400, not 404, for a hierarchical partition key with too few components", async () => {
    const c = await f.container({ partitionKey: { paths: ["/tenant", "/user"], kind: "MultiHash" as never, version: 2 } });
    await c.items.create({ id: "h1", tenant: "t", user: "u" });
    expect((await c.item("h1", ["t", "u"]).read()).resource?.id).toBe("h1");
    expect(await statusOf(c.item("h1", ["t"]).read())).toBe(400);
  });

  it("answers 400 for a query continuation it never issued", async () => {
    const c = await f.container();
    for (let i = 0; i < 3; i++) await c.items.create({ id: `q${i}`, pk: "p" });
    const garbage = c.items.query("SELECT * FROM c", { partitionKey: "p", maxItemCount: 1, continuationToken: "not-a-token" }).fetchNext();
    expect(await statusOf(garbage)).toBe(400);
  });

  it("runs getResponse().appendValue and console.log with format specifiers in scripts", async () => {
    const c = await f.container();
    const { sproc } = await c.scripts.storedProcedures.create({
      id: "append",
      body: "function () { for (var i = 0; i < 10; i++) getContext().getResponse().appendValue('Body', i); console.log('%s has %d items, %j', 'x', 3, { a: 1 }); }",
    });
    const { resource, headers } = await sproc.execute("p", [], { enableScriptLogging: true });
    expect(resource).toBe("0123456789");
    expect(decodeURIComponent(headers["x-ms-documentdb-script-log-results"] as string)).toBe('x has 3 items, {"a":1}');
  });
});
