import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CosmosClient, type Container } from "@azure/cosmos";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCosmos } from "../../src";
import { cosmosFixture, statusOf, type CosmosFixture } from "../fixture";

let f: CosmosFixture;
let c: Container;
beforeAll(async () => {
  f = await cosmosFixture({ scriptTimeoutMs: 500 });
  c = await f.container();
  await Promise.all(Array.from({ length: 12 }, (_, n) => c.items.create({ id: `i${n}`, pk: `p${n % 5}`, n, name: `item ${n}` })));
  await c.scripts.userDefinedFunctions.create({ id: "double", body: "function double(x) { return x * 2; }" });
  await c.scripts.userDefinedFunctions.create({ id: "isEven", body: "function (x) { return x % 2 === 0; }" });
});
afterAll(() => f.stop());

const all = async (query: string, options: { partitionKey?: string } = {}) => (await c.items.query(query, options).fetchAll()).resources;

/** The status a query fails with, and its message. */
async function failure(query: string): Promise<{ code: number; message: string }> {
  return c.items
    .query(query, { partitionKey: "p0" })
    .fetchAll()
    .then(
      () => ({ code: 200, message: "" }),
      (error: { code: number; message: string }) => error,
    );
}

describe("user-defined functions", () => {
  it("are resources of the container: created, read, listed, replaced and deleted", async () => {
    const { resource } = await c.scripts.userDefinedFunctions.create({ id: "temporary", body: "function () { return 1; }" });
    expect(resource?._rid).toBeTruthy();
    expect((await c.scripts.userDefinedFunction("temporary").read()).resource?.body).toBe("function () { return 1; }");
    const ids = (await c.scripts.userDefinedFunctions.readAll().fetchAll()).resources.map((udf) => udf.id);
    expect(ids).toEqual(expect.arrayContaining(["double", "isEven", "temporary"]));
    const queried = await c.scripts.userDefinedFunctions
      .query({ query: "SELECT * FROM root r WHERE r.id = @id", parameters: [{ name: "@id", value: "double" }] })
      .fetchAll();
    expect(queried.resources.map((udf) => udf.id)).toEqual(["double"]);
    await c.scripts.userDefinedFunction("temporary").replace({ id: "temporary", body: "function () { return 2; }" });
    expect(await all("SELECT VALUE udf.temporary() FROM c WHERE c.id = 'i0'", { partitionKey: "p0" })).toEqual([2]);
    await c.scripts.userDefinedFunction("temporary").delete();
    expect(await statusOf(c.scripts.userDefinedFunction("temporary").read())).toBe(404);
  });

  it("run in a query's SELECT and WHERE, in one partition and across all (the SDK's plan and merge)", async () => {
    expect(await all("SELECT VALUE udf.double(c.n) FROM c WHERE c.pk = 'p1' ORDER BY c.n", { partitionKey: "p1" })).toEqual([2, 12, 22]);
    expect(await all("SELECT VALUE c.n FROM c WHERE udf.isEven(c.n) AND c.n > 3 ORDER BY c.n DESC")).toEqual([10, 8, 6, 4]);
    expect(await all("SELECT VALUE COUNT(1) FROM c WHERE udf.isEven(udf.double(c.n) + 1)")).toEqual([0]);
    expect(await all("SELECT c.id, udf.double(c.n) AS twice FROM c WHERE c.n = 5")).toEqual([{ id: "i5", twice: 10 }]);
  });

  it("answer 400 for a function the container does not have, and for one that throws, naming it", async () => {
    expect(await failure("SELECT VALUE udf.missing(c.n) FROM c")).toMatchObject({ code: 400, message: expect.stringContaining("udf.missing") });
    await c.scripts.userDefinedFunctions.create({ id: "fails", body: "function (x) { throw new Error('no ' + x); }" });
    expect(await failure("SELECT VALUE udf.fails(c.n) FROM c")).toMatchObject({ code: 400, message: expect.stringContaining("udf.fails: no 0") });
    expect(await failure("SELECT VALUE udf.constructor(c.n) FROM c")).toMatchObject({ code: 400 });
  });

  it("stop a function that never returns with 408, and the server serves on", async () => {
    await c.scripts.userDefinedFunctions.create({ id: "forever", body: "function () { while (true) {} }" });
    expect(await failure("SELECT VALUE udf.forever() FROM c")).toMatchObject({ code: 408 });
    expect(await all("SELECT VALUE udf.double(c.n) FROM c WHERE c.id = 'i5'", { partitionKey: "p0" })).toEqual([10]);
  });

  it("reach nothing of the host: their own realm's Function, no process, no require", async () => {
    await c.scripts.userDefinedFunctions.create({
      id: "probe",
      body: `function probe(x) {
        var reached = [typeof process, typeof require, typeof globalThis.process];
        var F = this === undefined ? probe.constructor : this.constructor.constructor;
        var global = F("return this")();
        reached.push(typeof global.process);
        reached.push(x.constructor.constructor("return typeof process")());
        return reached.join();
      }`,
    });
    expect(await all("SELECT VALUE udf.probe({}) FROM c WHERE c.id = 'i0'", { partitionKey: "p0" })).toEqual([
      "undefined,undefined,undefined,undefined,undefined",
    ]);
  });

  it("are kept across a restart", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "cosmos-udfs-"));
    let cosmos = await startCosmos({ dataDir, partitions: 1 });
    const open = () => new CosmosClient({ endpoint: cosmos.endpoint, key: cosmos.key }).database("kept");
    const { database } = await open().client.databases.createIfNotExists({ id: "kept" });
    const { container } = await database.containers.create({ id: "items", partitionKey: { paths: ["/pk"] } });
    await container.scripts.userDefinedFunctions.create({ id: "triple", body: "function (x) { return 3 * x; }" });
    await container.items.create({ id: "a", pk: "a", n: 2 });
    await cosmos.stop();
    cosmos = await startCosmos({ dataDir, partitions: 1 });
    const { resources } = await open().container("items").items.query("SELECT VALUE udf.triple(c.n) FROM c").fetchAll();
    expect(resources).toEqual([6]);
    await cosmos.stop();
  });
});
