import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Container } from "@azure/cosmos";
import { cosmosFixture, statusOf, type CosmosFixture } from "../fixture";

let f: CosmosFixture;
let c: Container;
beforeAll(async () => {
  f = await cosmosFixture({ scriptOperationLimit: 10, scriptTimeoutMs: 300 });
  c = await f.container();
});
afterAll(() => f.stop());

async function define(id: string, fn: (...args: never[]) => void) {
  await c.scripts.storedProcedures.create({ id, body: fn.toString() });
  return c.scripts.storedProcedure(id);
}

const count = async (pk: string) => (await c.items.query("SELECT VALUE COUNT(1) FROM c", { partitionKey: pk }).fetchAll()).resources[0] as number;

describe("stored procedures", () => {
  it("start every run clean: nothing a run leaves on the global object reaches the next (sandboxes are reused)", async () => {
    const c = await f.container();
    const { sproc } = await c.scripts.storedProcedures.create({
      id: "leaky",
      body: "function () { var before = typeof leaked; leaked = (typeof leaked === 'number' ? leaked : 0) + 1; getContext().getResponse().setBody(before); }",
    });
    for (let i = 0; i < 3; i++) expect((await sproc.execute("p")).resource).toBe("undefined");
  });

  it("are created, read, replaced, listed and deleted through container.scripts", async () => {
    await c.scripts.storedProcedures.create({ id: "crud", body: "function crud() { getContext().getResponse().setBody(1); }" });
    expect((await c.scripts.storedProcedure("crud").read()).resource?.body).toContain("setBody(1)");
    await c.scripts.storedProcedure("crud").replace({ id: "crud", body: "function crud() { getContext().getResponse().setBody(2); }" });
    expect((await c.scripts.storedProcedure("crud").execute("any")).resource).toBe(2);
    const { resources } = await c.scripts.storedProcedures.readAll().fetchAll();
    expect(resources.map((s) => s.id)).toContain("crud");
    expect(await statusOf(c.scripts.storedProcedures.create({ id: "crud", body: "function x() {}" }))).toBe(409);
    await c.scripts.storedProcedure("crud").delete();
    expect(await statusOf(c.scripts.storedProcedure("crud").read())).toBe(404);
  });

  it("run with the server-side API: parameters, queries with parameters, writes and a response body", async () => {
    await c.items.create({ id: "seed", pk: "api", tag: "x" });
    const sproc = await define("api", function (prefix: string) {
      const collection = getContext().getCollection();
      const accepted = collection.queryDocuments(
        collection.getSelfLink(),
        { query: "SELECT * FROM c WHERE c.tag = @tag", parameters: [{ name: "@tag", value: "x" }] },
        {},
        function (err, docs) {
          if (err) throw err;
          __.createDocument(__.getSelfLink(), { id: prefix + docs.length, pk: "api" }, function (err2, created) {
            if (err2) throw err2;
            getContext()
              .getResponse()
              .setBody({ created: created.id, found: docs.length, sandbox: typeof require + typeof process });
          });
        },
      );
      if (!accepted) throw new Error("not accepted");
    });
    const { resource } = await sproc.execute("api", ["made-"]);
    expect(resource).toEqual({ created: "made-1", found: 1, sandbox: "undefinedundefined" });
    expect((await c.item("made-1", "api").read()).statusCode).toBe(200);
  });

  it("roll back every write when the script throws after two writes", async () => {
    const sproc = await define("twoThenThrow", function () {
      const collection = getContext().getCollection();
      collection.createDocument(collection.getSelfLink(), { id: "w1", pk: "rb" }, function () {
        collection.createDocument(collection.getSelfLink(), { id: "w2", pk: "rb" }, function () {
          throw new Error("boom after two writes");
        });
      });
    });
    const error = await sproc.execute("rb").catch((e: unknown) => e as { code: number; message: string });
    expect(error).toMatchObject({ code: 400 });
    expect((error as { message: string }).message).toContain("boom after two writes");
    expect(await count("rb")).toBe(0);
  });

  it("cannot read another partition's item", async () => {
    await c.items.create({ id: "secret", pk: "B" });
    const sproc = await define("readOther", function (id: string) {
      const collection = getContext().getCollection();
      collection.readDocument(`${collection.getAltLink()}/docs/${id}`, {}, function (err, doc) {
        if (err) throw err;
        getContext().getResponse().setBody(doc);
      });
    });
    expect(await statusOf(sproc.execute("A", ["secret"]))).toBe(404);
    expect((await sproc.execute("B", ["secret"])).resource?.id).toBe("secret");
  });

  it("cannot write into another partition", async () => {
    const sproc = await define("writeOther", function () {
      const collection = getContext().getCollection();
      collection.createDocument(collection.getSelfLink(), { id: "intruder", pk: "B" });
    });
    expect(await statusOf(sproc.execute("A"))).toBe(400);
    expect(await statusOf(c.item("intruder", "B").read())).toBe(404);
  });

  it("surface an unhandled operation error with its own status code", async () => {
    await c.items.create({ id: "exists", pk: "err" });
    const sproc = await define("dup", function () {
      const collection = getContext().getCollection();
      collection.createDocument(collection.getSelfLink(), { id: "exists", pk: "err" });
    });
    expect(await statusOf(sproc.execute("err"))).toBe(409);
  });

  it("are serialized per partition: 500 concurrent increments end at exactly 500", async () => {
    await c.items.create({ id: "counter", pk: "hot", n: 0 });
    const sproc = await define("increment", function () {
      const collection = getContext().getCollection();
      collection.readDocument(`${collection.getAltLink()}/docs/counter`, {}, function (err, doc) {
        if (err) throw err;
        doc.n += 1;
        collection.replaceDocument(doc._self, doc, { etag: doc._etag }, function (err2) {
          if (err2) throw err2;
        });
      });
    });
    await Promise.all(Array.from({ length: 500 }, () => sproc.execute("hot")));
    expect((await c.item("counter", "hot").read()).resource?.n).toBe(500);
  });

  it("stop accepting operations after the configured bound, so scripts resume with a continuation", async () => {
    const sproc = await define("bulkCreate", function (total: number, start: number) {
      const collection = getContext().getCollection();
      let next = start;
      while (next < total) {
        const accepted = collection.createDocument(collection.getSelfLink(), { id: `bulk${next}`, pk: "bulk" });
        if (!accepted) break;
        next += 1;
      }
      getContext()
        .getResponse()
        .setBody({ next, done: next >= total });
    });
    let state = { next: 0, done: false };
    let calls = 0;
    while (!state.done) {
      state = (await sproc.execute("bulk", [25, state.next])).resource;
      calls += 1;
    }
    expect(calls).toBe(3); // 10 + 10 + 5 with an operation limit of 10
    expect(await count("bulk")).toBe(25);
  });

  it("stop a script that never finishes with 408 and roll it back", async () => {
    const sproc = await define("forever", function () {
      const collection = getContext().getCollection();
      collection.createDocument(collection.getSelfLink(), { id: "before-loop", pk: "loop" }, function () {
        for (;;) {
          /* never returns */
        }
      });
    });
    expect(await statusOf(sproc.execute("loop"))).toBe(408);
    expect(await count("loop")).toBe(0);
  });

  it("page queries with pageSize and continuation, and fail a replace whose etag is stale", async () => {
    for (let i = 0; i < 7; i++) await c.items.create({ id: `pg${i}`, pk: "paging", n: i });
    const sproc = await define("pages", function () {
      const collection = getContext().getCollection();
      const seen: number[] = [];
      const pageSizes: number[] = [];
      function page(token?: string) {
        collection.queryDocuments(
          collection.getSelfLink(),
          "SELECT * FROM c ORDER BY c.n",
          { pageSize: 3, continuation: token },
          function (err, docs, options) {
            if (err) throw err;
            pageSizes.push(docs.length);
            docs.forEach(function (d: { n: number }) {
              seen.push(d.n);
            });
            if (options.continuation) page(options.continuation);
            else {
              const first = docs[0] as { _self: string };
              collection.replaceDocument(first._self, { id: "pg6", pk: "paging", n: 6 }, { etag: '"stale"' }, function (replaceErr) {
                getContext()
                  .getResponse()
                  .setBody({ seen: seen, pageSizes: pageSizes, status: replaceErr && replaceErr.number });
              });
            }
          },
        );
      }
      page();
    });
    const { resource } = await sproc.execute("paging");
    expect(resource).toEqual({ seen: [0, 1, 2, 3, 4, 5, 6], pageSizes: [3, 3, 1], status: 412 });
  });
});
