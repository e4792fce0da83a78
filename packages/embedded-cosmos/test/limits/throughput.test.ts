import { describe, expect, it } from "vitest";
import { CosmosClient, PriorityLevel } from "@azure/cosmos";
import { cosmosFixture } from "../fixture";
import { CosmosError } from "../../src/wire/errors";
import { ThroughputBudget } from "../../src/limits/throughput";
import { ManualClock } from "../fixture";

/** A client of the fixture's server that never retries a 429 (the SDK's retries would hide it), and the container through it. */
function unretried(fixture: Awaited<ReturnType<typeof cosmosFixture>>, containerId: string) {
  const client = new CosmosClient({
    endpoint: fixture.cosmos.endpoint,
    key: fixture.cosmos.key,
    connectionPolicy: {
      enableEndpointDiscovery: false,
      retryOptions: { maxRetryAttemptCount: 0, fixedRetryIntervalInMilliseconds: 0, maxWaitTimeInSeconds: 0 },
    },
  });
  return { client, same: client.database(fixture.database.id).container(containerId) };
}

describe("the embedded server's throughput budget", () => {
  it("serves a second's worth of operations per partition, then 429 with the wait until the next, refilling with time", () => {
    let now = 0;
    const budget = new ThroughputBudget(10, () => now);
    for (let i = 0; i < 10; i++) budget.spend("p0");
    let thrown: unknown;
    try {
      budget.spend("p0");
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(CosmosError);
    expect(thrown).toMatchObject({ status: 429, code: "TooManyRequests", subStatus: 3200, headers: { "x-ms-retry-after-ms": "100" } });
    budget.spend("p1"); // another partition has its own budget
    now = 100; // a tenth of a second refills one operation
    budget.spend("p0");
    expect(() => budget.spend("p0")).toThrow(CosmosError);
    now = 10_000; // idle time saves up at most one second's worth
    for (let i = 0; i < 10; i++) budget.spend("p0");
    expect(() => budget.spend("p0")).toThrow(CosmosError);
  });

  it("admits a request while the budget lasts and then charges it in full, leaving a debt", () => {
    let now = 0;
    const budget = new ThroughputBudget(10, () => now);
    budget.spend("p0");
    budget.charge("p0", 14); // a stored procedure that made 15 collection calls: 10 - 15 = -5
    expect(() => budget.spend("p0")).toThrow(expect.objectContaining({ headers: { "x-ms-retry-after-ms": "600" } }));
    now = 600; // the debt and one more operation are earned back
    budget.spend("p0");
  });
});

describe("priority-based execution", () => {
  it("throttles low-priority requests first: they leave the last part of the budget to high-priority ones", () => {
    let now = 0;
    const budget = new ThroughputBudget(10, () => now);
    // Low priority stops while a tenth of the second's budget is left (here 1 operation)...
    for (let i = 0; i < 9; i++) budget.spend("p0", "Low");
    expect(() => budget.spend("p0", "Low")).toThrow(expect.objectContaining({ status: 429 }));
    // ...which high priority still gets.
    budget.spend("p0", "High");
    expect(() => budget.spend("p0", "High")).toThrow(CosmosError);
    // Low priority waits for the reserve to come back as well as its own operation.
    now = 100;
    expect(() => budget.spend("p0", "Low")).toThrow(expect.objectContaining({ headers: { "x-ms-retry-after-ms": "100" } }));
    budget.spend("p0"); // no priority named: the account's default, high
  });

  it("serves a reader through the SDK while the background's requests of the same partition are throttled", async () => {
    const clock = new ManualClock();
    const fixture = await cosmosFixture({ operationsPerSecond: 10, clock });
    try {
      const container = await fixture.container();
      await container.items.upsert({ id: "x", pk: "a" });
      clock.advance(1000);
      const { client, same } = unretried(fixture, container.id);
      const low = { priorityLevel: PriorityLevel.Low };
      let admitted = 0;
      for (; admitted < 20; admitted++) {
        const outcome = await same
          .item("x", "a")
          .read(low)
          .then(
            () => "ok",
            (error: { code?: number }) => error.code,
          );
        if (outcome !== "ok") {
          expect(outcome).toBe(429);
          break;
        }
      }
      expect(admitted).toBe(9);
      expect((await same.item("x", "a").read({ priorityLevel: PriorityLevel.High })).statusCode).toBe(200);
      client.dispose();
    } finally {
      await fixture.stop();
    }
  });
});

describe("a stored procedure call on a throttled server", () => {
  it("costs one operation per collection call it makes", async () => {
    const clock = new ManualClock();
    const fixture = await cosmosFixture({ operationsPerSecond: 10, clock });
    try {
      const container = await fixture.container();
      const { resource: sproc } = await container.scripts.storedProcedures.create({
        id: "readMany",
        body: "function readMany(n) { var c = getContext().getCollection(); for (var i = 0; i < n; i++) c.readDocuments(c.getSelfLink(), {}, function () {}); getContext().getResponse().setBody(n); }",
      });
      clock.advance(1000); // a full second's budget
      const { client, same } = unretried(fixture, container.id);
      await same.scripts.storedProcedure(sproc!.id).execute("a", [20]); // admitted with 10 left, charged 20: 10 in debt
      await expect(same.item("x", "a").read()).rejects.toMatchObject({ code: 429 });
      client.dispose();
    } finally {
      await fixture.stop();
    }
  });
});
