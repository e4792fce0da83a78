import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Container } from "@azure/cosmos";
import { cosmosFixture, type CosmosFixture } from "../fixture";

/**
 * Stored procedures written as an attacker would: each tries to reach an object of the host's
 * realm (a host error, a host function on the stack, a call site) and, through its constructor,
 * the host's `Function` and so `process`. `probe` reports what it reached; a real escape would
 * also set `sandboxEscaped` on the host's global object.
 */
const PROBE = `
  function probe(value) {
    try {
      if (value === null || value === undefined) return "contained";
      var F = value.constructor && value.constructor.constructor;
      if (typeof F !== "function") return "contained";
      var global = F("return this")();
      if (global && typeof global.process === "object") { global.sandboxEscaped = true; return "escaped"; }
    } catch (e) {}
    return "contained";
  }
  function probeCallers(start) {
    var seen = [];
    for (var f = start, i = 0; f && i < 50; i++) {
      seen.push(probe(f));
      try { f = f.caller; } catch (e) { break; }
    }
    return seen.indexOf("escaped") >= 0 ? "escaped" : "contained";
  }
`;

/** A procedure: PROBE, then `code`, which ends by answering what it reached. */
const hostile = (code: string) => `function hostile() { ${PROBE}\n${code}\n}`;

let f: CosmosFixture;
let c: Container;
let n = 0;
beforeAll(async () => {
  f = await cosmosFixture({ scriptTimeoutMs: 500 });
  c = await f.container();
});
afterAll(() => f.stop());

/** Runs `body` as a new procedure; answers its response body, or the status it failed with. */
async function run(body: string): Promise<unknown> {
  const id = `hostile-${++n}`;
  await c.scripts.storedProcedures.create({ id, body });
  try {
    return (await c.scripts.storedProcedure(id).execute("p")).resource;
  } catch (error) {
    return { status: (error as { code?: number }).code };
  }
}

async function expectContained(body: string): Promise<unknown> {
  const answer = await run(body);
  const host = globalThis as { sandboxEscaped?: boolean };
  const escaped = host.sandboxEscaped;
  delete host.sandboxEscaped;
  expect(JSON.stringify(answer)).not.toContain("escaped");
  expect(escaped).toBeUndefined();
  // The server still serves.
  expect((await c.items.upsert({ id: "alive", pk: "p" })).statusCode).toBeLessThan(300);
  return answer;
}

describe("the stored-procedure sandbox keeps the host's realm out of reach", () => {
  it("the global object leads to the script's own Function, not the host's (this.constructor.constructor)", async () => {
    expect(await expectContained(hostile(`getContext().getResponse().setBody([probe(this), probe(globalThis), probeCallers(hostile)].join());`))).toBe(
      "contained,contained,contained",
    );
  });

  it("a host JSON.parse error never reaches the script (the procedure that reached process through it)", async () => {
    await expectContained(
      hostile(`
        var original = JSON.stringify;
        JSON.stringify = function () { return "{not json"; };
        var reached = "nothing thrown";
        try { __.readDocument(__.getSelfLink() + "/docs/x", {}, function () {}); } catch (e) { reached = probe(e); }
        JSON.stringify = original;
        getContext().getResponse().setBody(reached);`),
    );
  });

  it("replaced JSON, String and Array intrinsics do not change what crosses the bridge", async () => {
    await expectContained(
      hostile(`
        var reached = [];
        JSON.stringify = function () { return { toString: function () { reached.push(probeCallers(arguments.callee.caller)); return "[]"; } }; };
        JSON.parse = function () { return { accepted: true, error: null }; };
        Array.prototype.push = function () { throw new Error("push replaced"); };
        try { __.createDocument(__.getSelfLink(), { id: "x" }, function () {}); } catch (e) { reached[reached.length] = probe(e); }
        getContext().getResponse().setBody(String(reached));`),
    );
  });

  it("Error.prepareStackTrace sees no host function or receiver on the stack", async () => {
    await expectContained(
      hostile(`
        var reached = [];
        Error.prepareStackTrace = function (error, sites) {
          for (var i = 0; i < sites.length; i++) {
            reached.push(probe(sites[i]));
            try { reached.push(probe(sites[i].getThis())); reached.push(probe(sites[i].getFunction())); } catch (e) {}
          }
          return "trace";
        };
        new Error("own").stack;
        JSON.stringify = function () { return "{not json"; };
        try { __.readDocument("x", function () {}); } catch (e) { reached.push(probe(e)); try { e.stack; } catch (e2) {} }
        function deep(depth) { try { return deep(depth + 1); } catch (e) { try { __.readDocument("x", function () {}); } catch (e2) { reached.push(probe(e2)); } return depth; } }
        deep(0);
        getContext().getResponse().setBody(reached.indexOf("escaped") >= 0 ? "escaped" : "contained");`),
    );
  });

  it("Symbol.species and getters on the arguments run nothing with the host on the stack", async () => {
    await expectContained(
      hostile(`
        var reached = "contained";
        function Species() { if (probeCallers(arguments.callee.caller) === "escaped") reached = "escaped"; return []; }
        Object.defineProperty(Array, Symbol.species, { get: function () { return Species; } });
        var args = [1, 2];
        args.constructor = { };
        args.constructor[Symbol.species] = Species;
        var doc = { pk: "p", list: args };
        Object.defineProperty(doc, "id", { enumerable: true, get: function () { if (probeCallers(arguments.callee.caller) === "escaped") reached = "escaped"; return "getter-doc"; } });
        __.upsertDocument(__.getSelfLink(), doc, function (err) {
          if (err) throw err;
          __.queryDocuments(__.getSelfLink(), { query: "SELECT * FROM c WHERE c.id = @id", parameters: [{ name: "@id", value: doc.id }] }, function (err2, found) {
            getContext().getResponse().setBody({ reached: reached, found: found.length });
          });
        });`),
    );
  });

  it("a thrown proxy, a toJSON that throws and a message getter that never returns are answered by the server, not run by it", async () => {
    const proxyThrown = await expectContained(
      hostile(`
        var trap = function () { if (probeCallers(arguments.callee.caller) === "escaped") throw "escaped"; for (;;) {} };
        throw new Proxy({}, { get: trap, getPrototypeOf: trap, has: trap, ownKeys: trap, getOwnPropertyDescriptor: trap });`),
    );
    expect(proxyThrown).toEqual({ status: expect.any(Number) });
    const looping = await expectContained(hostile(`throw { get message() { for (;;) {} }, get number() { for (;;) {} } };`));
    expect(looping).toEqual({ status: expect.any(Number) });
    const toJson = await expectContained(hostile(`getContext().getResponse().setBody({ toJSON: function () { throw new Error("no JSON for you"); } });`));
    expect(toJson).toEqual({ status: 400 });
    const proxyBody = await expectContained(hostile(`getContext().getResponse().setBody(new Proxy({}, { ownKeys: function () { for (;;) {} } }));`));
    expect(proxyBody).toEqual({ status: expect.any(Number) });
  });

  it("promise callbacks run inside the script's time limit, and a rejected promise does not take the server down", async () => {
    const spinning = await expectContained(hostile(`Promise.resolve().then(function () { for (;;) {} }); getContext().getResponse().setBody("returned");`));
    expect(spinning).toEqual({ status: 408 });
    await expectContained(hostile(`Promise.reject(new Error("nobody catches this")); getContext().getResponse().setBody("returned");`));
    await expectContained(hostile(`(async function () { throw new Error("async"); })(); getContext().getResponse().setBody("returned");`));
  });

  it("a promise callback cannot write after its procedure has answered", async () => {
    await run(
      hostile(`
        Promise.resolve().then(function () { __.createDocument(__.getSelfLink(), { id: "late", pk: "p" }); });
        getContext().getResponse().setBody("done");`),
    );
    expect(
      await c
        .item("late", "p")
        .read()
        .then((r) => r.statusCode),
    ).toBe(404);
  });

  it("a script that exhausts its memory fails alone: the server and its other scripts go on", async () => {
    const answer = await expectContained(hostile(`var hoard = []; for (;;) hoard.push(new Array(1e6).fill(hoard.length));`));
    expect(answer).toEqual({ status: 408 });
    expect(await run(`function () { getContext().getResponse().setBody("next"); }`)).toBe("next");
  });

  it("Atomics.wait is stopped by the script's time limit", async () => {
    expect(await expectContained(hostile(`Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);`))).toEqual({ status: 408 });
  });
});
