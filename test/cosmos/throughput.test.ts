import { describe, expect, it } from "vitest";
import { CosmosError } from "../../local/cosmos/errors";
import { ThroughputBudget } from "../../local/cosmos/throughput";

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
});
