import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Container } from "@azure/cosmos";
import { cosmosFixture, statusOf, type CosmosFixture } from "../fixture";

let f: CosmosFixture;
let c: Container;
beforeAll(async () => {
  f = await cosmosFixture();
  c = await f.container();
});
afterAll(() => f.stop());

describe("items", () => {
  it("creates, reads, replaces, upserts and deletes with system properties", async () => {
    const created = await c.items.create({ id: "i1", pk: "p", n: 1 });
    expect(created.statusCode).toBe(201);
    expect(created.resource).toMatchObject({ id: "i1", pk: "p", n: 1 });
    expect(created.resource?._etag).toMatch(/^".+"$/);
    expect(typeof created.resource?._ts).toBe("number");
    expect(created.etag).toBe(created.resource?._etag);

    const read = await c.item("i1", "p").read();
    expect(read.resource?.n).toBe(1);

    const replaced = await c.item("i1", "p").replace({ id: "i1", pk: "p", n: 2 });
    expect(replaced.resource?.n).toBe(2);
    expect(replaced.resource?._etag).not.toBe(created.resource?._etag);

    expect((await c.items.upsert({ id: "i1", pk: "p", n: 3 })).statusCode).toBe(200);
    expect((await c.items.upsert({ id: "i2", pk: "p", n: 1 })).statusCode).toBe(201);

    expect((await c.item("i1", "p").delete()).statusCode).toBe(204);
    expect(await statusOf(c.item("i1", "p").read())).toBe(404);
    expect(await statusOf(c.item("i1", "p").delete())).toBe(404);
  });

  it("conflicts on a duplicate id in the same partition but allows it in another", async () => {
    await c.items.create({ id: "dup", pk: "a", side: "a" });
    expect(await statusOf(c.items.create({ id: "dup", pk: "a" }))).toBe(409);
    await c.items.create({ id: "dup", pk: "b", side: "b" });
    expect((await c.item("dup", "a").read()).resource?.side).toBe("a");
    expect((await c.item("dup", "b").read()).resource?.side).toBe("b");
    expect(await statusOf(c.item("dup", "zzz").read())).toBe(404);
  });

  it("honours If-Match on replace, upsert, delete and patch", async () => {
    const { resource } = await c.items.create({ id: "etag", pk: "e", v: 1 });
    const stale = { type: "IfMatch", condition: '"stale"' };
    expect(await statusOf(c.item("etag", "e").replace({ id: "etag", pk: "e", v: 2 }, { accessCondition: stale }))).toBe(412);
    expect(await statusOf(c.items.upsert({ id: "etag", pk: "e", v: 2 }, { accessCondition: stale }))).toBe(412);
    expect(await statusOf(c.item("etag", "e").delete({ accessCondition: stale }))).toBe(412);
    expect(await statusOf(c.item("etag", "e").patch([{ op: "set", path: "/v", value: 9 }], { accessCondition: stale }))).toBe(412);
    const ok = await c.item("etag", "e").replace({ id: "etag", pk: "e", v: 2 }, { accessCondition: { type: "IfMatch", condition: resource!._etag } });
    expect(ok.resource?.v).toBe(2);
  });

  it("patches with set, add, replace, remove, incr and a filter predicate", async () => {
    await c.items.create({ id: "pt", pk: "x", count: 1, tags: ["a"], nested: { keep: true, drop: 1 }, title: "t" });
    const { resource } = await c.item("pt", "x").patch([
      { op: "incr", path: "/count", value: 2 },
      { op: "set", path: "/status", value: "new" },
      { op: "add", path: "/tags/-", value: "b" },
      { op: "replace", path: "/title", value: "T" },
      { op: "remove", path: "/nested/drop" },
    ]);
    expect(resource).toMatchObject({ count: 3, status: "new", tags: ["a", "b"], title: "T", nested: { keep: true } });
    expect(resource?.nested).not.toHaveProperty("drop");

    const conditional = await c.item("pt", "x").patch({ condition: "FROM c WHERE c.count = 3", operations: [{ op: "incr", path: "/count", value: 1 }] });
    expect(conditional.resource?.count).toBe(4);
    expect(await statusOf(c.item("pt", "x").patch({ condition: "FROM c WHERE c.count = 3", operations: [{ op: "incr", path: "/count", value: 1 }] }))).toBe(
      412,
    );
    expect(await statusOf(c.item("pt", "x").patch([{ op: "replace", path: "/missing", value: 1 }]))).toBe(400);
    expect(await statusOf(c.item("pt", "x").patch([{ op: "set", path: "/pk", value: "y" }]))).toBe(400);
    expect(await statusOf(c.item("nope", "x").patch([{ op: "set", path: "/a", value: 1 }]))).toBe(404);
  });

  it("patches a path named __proto__ as the item's own property, never Object.prototype (which every object in the server shares)", async () => {
    await c.items.create({ id: "proto", pk: "x" });
    expect(await statusOf(c.item("proto", "x").patch([{ op: "set", path: "/__proto__/polluted", value: "yes" }]))).toBe(400);
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    const { resource } = await c.item("proto", "x").patch([{ op: "set", path: "/__proto__", value: { polluted: "yes" } }]);
    expect(Object.hasOwn(resource!, "__proto__")).toBe(true);
    await c.item("proto", "x").patch([{ op: "set", path: "/__proto__/polluted", value: "still no" }]);
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    const { resource: read } = await c.item("proto", "x").read();
    expect(JSON.stringify(read)).toContain('"__proto__":{"polluted":"still no"}');
  });

  it("rejects an item whose partition key differs from the one named", async () => {
    await c.items.create({ id: "m", pk: "a" });
    expect(await statusOf(c.item("m", "a").replace({ id: "m", pk: "b" }))).toBe(400);
    expect((await c.item("m", "a").read()).resource?.pk).toBe("a");
  });
});
