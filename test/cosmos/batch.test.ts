import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Container, OperationInput } from "@azure/cosmos";
import { cosmosFixture, statusOf, type CosmosFixture } from "../support/cosmos";

let f: CosmosFixture;
let c: Container;
beforeAll(async () => {
  f = await cosmosFixture();
  c = await f.container();
});
afterAll(() => f.stop());

describe("transactional batch", () => {
  it("commits every operation, including patch, when all succeed", async () => {
    await c.items.create({ id: "counter", pk: "p", n: 0 });
    const operations: OperationInput[] = [
      { operationType: "Create", resourceBody: { id: "x1", pk: "p" } },
      { operationType: "Upsert", resourceBody: { id: "x2", pk: "p" } },
      { operationType: "Patch", id: "counter", resourceBody: { operations: [{ op: "incr", path: "/n", value: 2 }] } },
      { operationType: "Read", id: "counter" },
    ];
    const response = await c.items.batch(operations, "p");
    expect(response.code).toBe(200);
    expect(response.result?.map((r) => r.statusCode)).toEqual([201, 201, 200, 200]);
    expect(response.result?.[3].resourceBody?.n).toBe(2);
  });

  it("rolls back the operations before a failure and marks the rest 424", async () => {
    await c.items.create({ id: "taken", pk: "q" });
    const operations: OperationInput[] = [
      { operationType: "Create", resourceBody: { id: "first", pk: "q" } },
      { operationType: "Patch", id: "taken", resourceBody: [{ op: "set", path: "/touched", value: true }] },
      { operationType: "Create", resourceBody: { id: "taken", pk: "q" } },
      { operationType: "Create", resourceBody: { id: "after", pk: "q" } },
    ];
    const response = await c.items.batch(operations, "q");
    expect(response.code).toBe(207);
    expect(response.result?.map((r) => r.statusCode)).toEqual([424, 424, 409, 424]);
    expect(await statusOf(c.item("first", "q").read())).toBe(404);
    expect(await statusOf(c.item("after", "q").read())).toBe(404);
    expect((await c.item("taken", "q").read()).resource).not.toHaveProperty("touched");
  });

  it("accepts 100 operations", async () => {
    const operations: OperationInput[] = Array.from({ length: 100 }, (_, i) => ({ operationType: "Create", resourceBody: { id: `many${i}`, pk: "m" } }));
    const response = await c.items.batch(operations, "m");
    expect(response.result).toHaveLength(100);
    const { resources } = await c.items.query("SELECT VALUE COUNT(1) FROM c", { partitionKey: "m" }).fetchAll();
    expect(resources).toEqual([100]);
  });
});
