import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Container } from "@azure/cosmos";
import { COEFFICIENTS } from "../../src/limits/request-units";
import { cosmosFixture, type CosmosFixture } from "../fixture";

/**
 * The embedded server's request units: a cost model, not constants. Each charge follows from
 * what the operation did, so these relations hold whatever the coefficients are fitted to.
 */
let f: CosmosFixture;
let c: Container;
beforeAll(async () => {
  f = await cosmosFixture();
  c = await f.container({ indexingPolicy: { includedPaths: [{ path: "/*" }], excludedPaths: [{ path: "/unindexed/?" }, { path: '/"_etag"/?' }] } });
  for (let i = 0; i < 200; i++) await c.items.create({ id: `i${i}`, pk: "p", tag: `t${i % 20}`, unindexed: `t${i % 20}` });
});
afterAll(() => f.stop());

describe("the cost model's request units", () => {
  it("charge a bigger item more, to read and to write", async () => {
    const small = await c.items.create({ id: "small", pk: "q", text: "x" });
    const large = await c.items.create({ id: "large", pk: "q", text: "x".repeat(20_000) });
    expect(large.requestCharge).toBeGreaterThan(small.requestCharge);
    const readSmall = await c.item("small", "q").read();
    const readLarge = await c.item("large", "q").read();
    expect(readSmall.requestCharge).toBe(COEFFICIENTS.reads); // up to 1 KB: one read unit
    expect(readLarge.requestCharge).toBeGreaterThan(readSmall.requestCharge);
  });

  it("charge a write by the index terms it adds, and a replace by the terms it changes", async () => {
    const few = await c.items.create({ id: "few", pk: "r", a: 1 });
    const many = await c.items.create({ id: "many", pk: "r", a: 1, b: 2, c: 3, d: [4, 5, 6], e: { f: 7, g: 8 } });
    expect(many.requestCharge).toBeGreaterThan(few.requestCharge);
    // A counter bump (what createComment does to its post) takes one term out and puts one in.
    const bumped = await c.item("many", "r").replace({ id: "many", pk: "r", a: 2, b: 2, c: 3, d: [4, 5, 6], e: { f: 7, g: 8 } });
    expect(bumped.requestCharge).toBeLessThan(many.requestCharge);
    const rewritten = await c.item("many", "r").replace({ id: "many", pk: "r", a: 9, b: 9, c: 9, d: [9, 9, 9], e: { f: 9, g: 9 } });
    expect(rewritten.requestCharge).toBeGreaterThan(many.requestCharge);
    const unchanged = await c.item("many", "r").replace({ id: "many", pk: "r", a: 9, b: 9, c: 9, d: [9, 9, 9], e: { f: 9, g: 9 } });
    expect(unchanged.requestCharge).toBeLessThan(bumped.requestCharge);
  });

  it("charge an indexed query less than the same query over an unindexed path (a scan)", async () => {
    const indexed = await c.items.query("SELECT * FROM c WHERE c.tag = 't3'", { partitionKey: "p" }).fetchAll();
    const scan = await c.items.query("SELECT * FROM c WHERE c.unindexed = 't3'", { partitionKey: "p" }).fetchAll();
    expect(indexed.resources).toHaveLength(10);
    expect(scan.resources).toHaveLength(10);
    expect(indexed.requestCharge).toBeLessThan(scan.requestCharge);
  });

  it("charge a stored procedure for the operations it makes", async () => {
    const { resource: sproc } = await c.scripts.storedProcedures.create({
      id: "writeMany",
      body: "function writeMany(n) { var c = getContext().getCollection(); for (var i = 0; i < n; i++) c.createDocument(c.getSelfLink(), { id: 'w' + n + '-' + i, pk: 's' }, function () {}); getContext().getResponse().setBody(n); }",
    });
    const one = await c.scripts.storedProcedure(sproc!.id).execute("s", [1]);
    const five = await c.scripts.storedProcedure(sproc!.id).execute("s", [5]);
    const write = (await c.items.create({ id: "single", pk: "s" })).requestCharge;
    expect(five.requestCharge - one.requestCharge).toBeCloseTo(4 * write, 0);
  });

  it("charge a script's read and replace by self link as the same two requests would be charged", async () => {
    const { resource: sproc } = await c.scripts.storedProcedures.create({
      id: "bump",
      body:
        "function bump(id) { var c = getContext().getCollection(); c.readDocument(c.getAltLink() + '/docs/' + id, {}, function (err, doc) {" +
        " if (err) throw err; doc.n += 1; c.replaceDocument(doc._self, doc, {}, function (e) { if (e) throw e; }); }); }",
    });
    await c.items.create({ id: "counted", pk: "t", n: 1, text: "y".repeat(500) });
    await c.items.create({ id: "twin", pk: "t", n: 1, text: "y".repeat(500) });
    const script = await c.scripts.storedProcedure(sproc!.id).execute("t", ["counted"]);
    const read = await c.item("twin", "t").read<{ n: number }>();
    const replace = await c.item("twin", "t").replace({ id: "twin", pk: "t", n: 2, text: "y".repeat(500) });
    expect(script.requestCharge).toBeCloseTo(COEFFICIENTS.scripts + read.requestCharge + replace.requestCharge, 1);
  });
});
