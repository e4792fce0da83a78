import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Container, OperationInput } from "@azure/cosmos";
import { cosmosFixture, statusOf, type CosmosFixture } from "../fixture";

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

describe("bulk (non-atomic batches the SDK routes by partition key range)", () => {
  it("runs every operation on its own across many partitions, each with its own status", async () => {
    const { cosmosFixture } = await import("../fixture");
    const fixture = await cosmosFixture({ partitions: 4 });
    try {
      const c = await fixture.container();
      await c.items.create({ id: "exists", pk: "p3" });
      const operations = [
        ...Array.from({ length: 150 }, (_, i) => ({
          operationType: "Create" as const,
          partitionKey: `p${i % 20}`,
          resourceBody: { id: `b${i}`, pk: `p${i % 20}`, n: i },
        })),
        { operationType: "Create" as const, partitionKey: "p3", resourceBody: { id: "exists", pk: "p3" } },
        { operationType: "Upsert" as const, partitionKey: "p4", resourceBody: { id: "up", pk: "p4" } },
        { operationType: "Read" as const, partitionKey: "p9", id: "missing" },
      ];
      const results = await c.items.bulk(operations);
      expect(results.slice(0, 150).every((r) => r.statusCode === 201)).toBe(true);
      expect(results.slice(150).map((r) => r.statusCode)).toEqual([409, 201, 404]);
      expect((await c.items.query("SELECT VALUE COUNT(1) FROM c").fetchAll()).resources).toEqual([152]);
      expect((await c.item("b42", "p2").read()).resource?.n).toBe(42);
    } finally {
      await fixture.stop();
    }
  });
});
