import { ChangeFeedStartFrom, type Container, type PartitionKey } from "@azure/cosmos";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cosmosFixture, statusOf, type CosmosFixture } from "../fixture";

let f: CosmosFixture;
let c: Container;
/** 40 items under three tenants, five users and two values of n: the key is tenant / user / n. */
const items = Array.from({ length: 40 }, (_, v) => ({ id: `i${v}`, tenant: `t${v % 3}`, user: `u${v % 5}`, n: v % 2, v }));
beforeAll(async () => {
  f = await cosmosFixture({ partitions: 4 });
  c = await f.container({ partitionKey: { paths: ["/tenant", "/user", "/n"], kind: "MultiHash" as never, version: 2 } });
  for (const item of items) await c.items.create(item);
});
afterAll(() => f.stop());

const query = async (sql: string, partitionKey?: PartitionKey) =>
  (await c.items.query(sql, partitionKey === undefined ? {} : { partitionKey }).fetchAll()).resources;
const values = (keep: (item: (typeof items)[number]) => boolean) => items.filter(keep).map((item) => item.v);

describe("hierarchical partition keys in every query form", () => {
  it("a whole key: one logical partition", async () => {
    expect(await query("SELECT VALUE c.v FROM c ORDER BY c.v", ["t0", "u0", 0])).toEqual(values((i) => i.tenant === "t0" && i.user === "u0" && i.n === 0));
  });

  it("a prefix of one or two components: every logical partition under it, across physical partitions", async () => {
    const underT0 = values((i) => i.tenant === "t0");
    expect(await query("SELECT VALUE c.v FROM c ORDER BY c.v", ["t0"])).toEqual(underT0);
    expect(await query("SELECT VALUE c.v FROM c ORDER BY c.v", ["t1", "u1"])).toEqual(values((i) => i.tenant === "t1" && i.user === "u1"));
    expect(await query("SELECT VALUE COUNT(1) FROM c", ["t0"])).toEqual([underT0.length]);
    expect(await query("SELECT TOP 3 VALUE c.v FROM c ORDER BY c.v DESC", ["t0"])).toEqual(underT0.slice(-3).reverse());
    expect(await query("SELECT VALUE c.v FROM c ORDER BY c.v OFFSET 1 LIMIT 2", ["t0"])).toEqual(underT0.slice(1, 3));
    expect((await query("SELECT DISTINCT VALUE c.user FROM c", ["t0"])).sort()).toEqual(["u0", "u1", "u2", "u3", "u4"]);
    expect(await query("SELECT c.user, COUNT(1) AS k FROM c WHERE c.user = 'u3' GROUP BY c.user", ["t0"])).toEqual([
      { user: "u3", k: values((i) => i.tenant === "t0" && i.user === "u3").length },
    ]);
    expect((await c.items.readAll({ partitionKey: ["t2"] }).fetchAll()).resources.map((item) => item.v).sort((a, b) => a - b)).toEqual(
      values((i) => i.tenant === "t2"),
    );
  });

  it("no key: the SDK's cross-partition pipeline, the key's paths filtered like any others", async () => {
    expect(await query("SELECT VALUE c.v FROM c WHERE c.tenant = 't2' AND c.user = 'u1' ORDER BY c.v")).toEqual(
      values((i) => i.tenant === "t2" && i.user === "u1"),
    );
    const groups = await query("SELECT c.tenant, COUNT(1) AS k FROM c GROUP BY c.tenant");
    expect(groups.sort((a, b) => a.tenant.localeCompare(b.tenant))).toEqual(
      ["t0", "t1", "t2"].map((t) => ({ tenant: t, k: values((i) => i.tenant === t).length })),
    );
  });

  it("the change feed of a prefix, as the SDK reads it (by feed range)", async () => {
    const feed = c.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning(["t1"]) });
    const seen: number[] = [];
    while (feed.hasMoreResults) {
      const page = await feed.readNext();
      if (page.statusCode === 304) break;
      seen.push(...page.result.map((item: { v: number }) => item.v));
    }
    expect(seen.sort((a, b) => a - b)).toEqual(values((i) => i.tenant === "t1"));
  });

  it("a point operation still needs the whole key (400 with a prefix)", async () => {
    expect(await statusOf(c.item("i0", ["t0"]).read())).toBe(400);
  });
});
