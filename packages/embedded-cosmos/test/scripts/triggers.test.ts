import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TriggerOperation, TriggerType, type Container } from "@azure/cosmos";
import { cosmosFixture, statusOf, type CosmosFixture } from "../fixture";

let f: CosmosFixture;
let c: Container;
beforeAll(async () => {
  f = await cosmosFixture();
  c = await f.container();
  await c.scripts.triggers.create({
    id: "stamp",
    triggerType: TriggerType.Pre,
    triggerOperation: TriggerOperation.All,
    body: function stamp() {
      const request = getContext().getRequest();
      const doc = request.getBody();
      doc.stamped = true;
      request.setBody(doc);
    }.toString(),
  });
  // Keeps at most 5 items in the partition, deleting the oldest: the feed's truncation in miniature.
  await c.scripts.triggers.create({
    id: "keepFive",
    triggerType: TriggerType.Post,
    triggerOperation: TriggerOperation.Create,
    body: function keepFive() {
      const collection = getContext().getCollection();
      const written = getContext().getResponse().getBody();
      collection.queryDocuments(
        collection.getSelfLink(),
        { query: "SELECT c.id, c._self FROM c WHERE c.pk = @pk ORDER BY c.seq DESC", parameters: [{ name: "@pk", value: written.pk }] },
        { pageSize: 100 },
        function (err, docs) {
          if (err) throw err;
          docs.slice(5).forEach(function (doc: { _self: string }) {
            if (!collection.deleteDocument(doc._self, {})) throw new Error("not accepted");
          });
        },
      );
    }.toString(),
  });
  await c.scripts.triggers.create({
    id: "refuse",
    triggerType: TriggerType.Post,
    triggerOperation: TriggerOperation.All,
    body: "function refuse() { throw new Error('refused by trigger'); }",
  });
});
afterAll(() => f.stop());

describe("triggers", () => {
  it("are created, read, listed and deleted", async () => {
    await c.scripts.triggers.create({ id: "tmp", triggerType: TriggerType.Pre, triggerOperation: TriggerOperation.Create, body: "function tmp() {}" });
    expect((await c.scripts.trigger("tmp").read()).resource?.triggerType).toBe(TriggerType.Pre);
    const { resources } = await c.scripts.triggers.readAll().fetchAll();
    expect(resources.map((t) => t.id)).toEqual(expect.arrayContaining(["stamp", "keepFive", "refuse", "tmp"]));
    await c.scripts.trigger("tmp").delete();
    expect(await statusOf(c.scripts.trigger("tmp").read())).toBe(404);
  });

  it("run a pre-trigger that changes the written body, only when named", async () => {
    const { resource } = await c.items.create({ id: "s1", pk: "pre" }, { preTriggerInclude: ["stamp"] });
    expect(resource?.stamped).toBe(true);
    const plain = await c.items.upsert({ id: "s2", pk: "pre" });
    expect(plain.resource).not.toHaveProperty("stamped");
    const replaced = await c.item("s2", "pre").replace({ id: "s2", pk: "pre" }, { preTriggerInclude: ["stamp"] });
    expect(replaced.resource?.stamped).toBe(true);
  });

  it("run a post-trigger that keeps a partition at N items", async () => {
    for (let seq = 1; seq <= 12; seq++) {
      await c.items.create({ id: `f${seq}`, pk: "feed", seq }, { postTriggerInclude: ["keepFive"] });
    }
    const { resources } = await c.items.query("SELECT VALUE c.seq FROM c ORDER BY c.seq DESC", { partitionKey: "feed" }).fetchAll();
    expect(resources).toEqual([12, 11, 10, 9, 8]);
  });

  it("roll the write back when a post-trigger throws", async () => {
    expect(await statusOf(c.items.create({ id: "r1", pk: "post" }, { postTriggerInclude: ["refuse"] }))).toBe(400);
    expect(await statusOf(c.item("r1", "post").read())).toBe(404);
    await c.items.create({ id: "r2", pk: "post", v: 1 });
    expect(await statusOf(c.item("r2", "post").delete({ postTriggerInclude: ["refuse"] }))).toBe(400);
    expect((await c.item("r2", "post").read()).resource?.v).toBe(1);
  });

  it("refuse a trigger that does not exist or has the wrong type", async () => {
    expect(await statusOf(c.items.create({ id: "n1", pk: "x" }, { preTriggerInclude: ["missing"] }))).toBe(404);
    expect(await statusOf(c.items.create({ id: "n2", pk: "x" }, { preTriggerInclude: ["keepFive"] }))).toBe(400);
  });
});
