import { ChangeFeedStartFrom, CosmosClient } from "@azure/cosmos";
import { describe, expect, it } from "vitest";
import { parseFaultSpec, type FaultRule } from "../../src/limits/faults";
import { startCosmos, type RunningCosmos } from "../../src";
import { statusOf } from "../fixture";

/** A server injecting `rules`, a database with containers `a` and `b`, and a client that retries 429 `throttleRetries` times. */
async function faultyServer(rules: FaultRule[], throttleRetries = 9) {
  const cosmos = await startCosmos({ faults: { seed: 7, rules } });
  const client = new CosmosClient({
    endpoint: cosmos.endpoint,
    key: cosmos.key,
    connectionPolicy: {
      enableEndpointDiscovery: false,
      retryOptions: { maxRetryAttemptCount: throttleRetries, fixedRetryIntervalInMilliseconds: 0, maxWaitTimeInSeconds: 30 },
    },
  });
  const { database } = await client.databases.createIfNotExists({ id: "faults" });
  const { container: a } = await database.containers.create({ id: "a", partitionKey: { paths: ["/pk"] } });
  const { container: b } = await database.containers.create({ id: "b", partitionKey: { paths: ["/pk"] } });
  return { cosmos, a, b, stop: async () => (client.dispose(), await cosmos.stop()) };
}

const injected = (cosmos: RunningCosmos) => ({ ...cosmos.faults!.injected });

describe("fault specs", () => {
  it("reads the compact form, inline JSON and a JSON rule list, and names what is wrong", () => {
    expect(parseFaultSpec("429=50:0.05@write+sproc/posts, latency=200:0.1@read,sproc-timeout:0.02")).toEqual({
      rules: [
        { effect: "429", ms: 50, rate: 0.05, operations: ["write", "sproc"], containers: ["posts"] },
        { effect: "latency", ms: 200, rate: 0.1, operations: ["read"] },
        { effect: "sproc-timeout", rate: 0.02 },
      ],
    });
    expect(parseFaultSpec('{"seed":3,"rules":[{"effect":"503","rate":1,"operations":["changefeed"]}]}')).toEqual({
      seed: 3,
      rules: [{ effect: "503", rate: 1, operations: ["changefeed"] }],
    });
    expect(parseFaultSpec('[{"effect":"408","rate":0.5}]')).toEqual({ rules: [{ effect: "408", rate: 0.5 }] });
    expect(() => parseFaultSpec("500:0.1")).toThrow(/effect/);
    expect(() => parseFaultSpec("429:2")).toThrow(/rate/);
    expect(() => parseFaultSpec("429:0.1@reads")).toThrow(/operations/);
    expect(() => parseFaultSpec("sproc-timeout:0.1@write")).toThrow(/stored procedure/);
    expect(() => parseFaultSpec("429")).toThrow(/effect\[=ms\]:rate/);
  });
});

describe("faults injected by the embedded server, as the SDK sees them", () => {
  it("429 on reads: the SDK retries after x-ms-retry-after-ms and succeeds, or gives up with 429 when its retries are spent", async () => {
    const { cosmos, a, b, stop } = await faultyServer([{ effect: "429", rate: 1, ms: 5, operations: ["read"], containers: ["a"] }], 3);
    try {
      await a.items.create({ id: "x", pk: "p" });
      await b.items.create({ id: "x", pk: "p" });
      expect(await statusOf(a.item("x", "p").read())).toBe(429);
      expect(injected(cosmos)["429"]).toBe(4); // the first try and the SDK's three retries
      expect(await statusOf(b.item("x", "p").read())).toBe(200); // another container is not affected
    } finally {
      await stop();
    }
    const half = await faultyServer([{ effect: "429", rate: 0.5, ms: 1, operations: ["read"] }]);
    try {
      await half.a.items.create({ id: "x", pk: "p" });
      for (let i = 0; i < 20; i++) expect((await half.a.item("x", "p").read()).statusCode).toBe(200);
      expect(injected(half.cosmos)["429"]).toBeGreaterThan(0);
    } finally {
      await half.stop();
    }
  });

  it("503 on writes, 408 on queries, 449 on stored procedures and on change feed reads: the error reaches the caller and nothing was written", async () => {
    const { cosmos, a, stop } = await faultyServer([
      { effect: "503", rate: 1, operations: ["write"] },
      { effect: "408", rate: 1, operations: ["query"] },
      { effect: "449", rate: 1, operations: ["sproc", "changefeed"] },
    ]);
    try {
      expect(await statusOf(a.items.create({ id: "x", pk: "p" }))).toBe(503);
      expect(await statusOf(a.item("x", "p").read())).toBe(404);
      expect(await statusOf(a.items.query("SELECT * FROM c", { partitionKey: "p" }).fetchAll())).toBe(408);
      await a.scripts.storedProcedures.create({ id: "touch", body: "function touch() { getContext().getResponse().setBody(1); }" });
      expect(await statusOf(a.scripts.storedProcedure("touch").execute("p", []))).toBe(449);
      expect(await statusOf(a.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning() }).readNext())).toBe(449);
      expect(injected(cosmos)).toMatchObject({ "503": 1, "449": 2 });
      expect(injected(cosmos)["408"]).toBeGreaterThanOrEqual(1);
    } finally {
      await stop();
    }
  });

  it("a stored procedure that times out after partial work is rolled back and answers 408", async () => {
    const { cosmos, a, stop } = await faultyServer([{ effect: "sproc-timeout", rate: 1 }]);
    try {
      const body = `function createThree() {
        var c = getContext().getCollection();
        for (var i = 0; i < 3; i++) if (!c.createDocument(c.getSelfLink(), { id: "d" + i, pk: "p" })) throw new Error("not accepted");
        getContext().getResponse().setBody(3);
      }`;
      await a.scripts.storedProcedures.create({ id: "createThree", body });
      expect(await statusOf(a.scripts.storedProcedure("createThree").execute("p", []))).toBe(408);
      const { resources } = await a.items.query("SELECT * FROM c", { partitionKey: "p" }).fetchAll();
      expect(resources).toEqual([]);
      expect(injected(cosmos)["sproc-timeout"]).toBe(1);
    } finally {
      await stop();
    }
  });

  it("a rule with a limit is spent after that many faults (an outage that ends)", async () => {
    const { cosmos, a, stop } = await faultyServer([{ effect: "503", rate: 1, operations: ["write"], limit: 2 }]);
    try {
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push(await statusOf(a.items.create({ id: `x${i}`, pk: "p" })));
      expect(statuses).toEqual([503, 503, 201, 201]);
      expect(injected(cosmos)["503"]).toBe(2);
    } finally {
      await stop();
    }
  });

  it("added latency delays the matching requests only", async () => {
    const { cosmos, a, stop } = await faultyServer([{ effect: "latency", ms: 150, rate: 1, operations: ["read"] }]);
    try {
      await a.items.create({ id: "x", pk: "p" });
      expect(injected(cosmos).latency ?? 0).toBe(0);
      const started = performance.now();
      await a.item("x", "p").read();
      expect(injected(cosmos).latency).toBe(1);
      // A delay is a lower bound, whatever else the machine is doing.
      expect(performance.now() - started).toBeGreaterThanOrEqual(145);
    } finally {
      await stop();
    }
  });

  it("the same seed and the same requests give the same faults", async () => {
    const counts = [];
    for (let run = 0; run < 2; run++) {
      const { cosmos, a, stop } = await faultyServer([{ effect: "503", rate: 0.3, operations: ["write"] }]);
      const outcomes = [];
      for (let i = 0; i < 30; i++) outcomes.push(await statusOf(a.items.create({ id: `x${i}`, pk: "p" })));
      counts.push({ outcomes, injected: injected(cosmos) });
      await stop();
    }
    expect(counts[0].injected["503"]).toBeGreaterThan(0);
    expect(counts[1]).toEqual(counts[0]);
  });
});
