import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChangeFeedStartFrom, CosmosClient, StatusCodes, type Container } from "@azure/cosmos";
import { createDefaultHttpClient } from "@azure/core-rest-pipeline";
import { cosmosFixture, type CosmosFixture } from "../fixture";

/** Several physical partitions (key ranges), as on a scaled account: what the SDK sees and routes by. */
let f: CosmosFixture;
let c: Container;
const ids = Array.from({ length: 120 }, (_, i) => `item-${String(i).padStart(3, "0")}`);
beforeAll(async () => {
  f = await cosmosFixture({ partitions: 4 });
  c = await f.container();
  for (const [i, id] of ids.entries()) await c.items.create({ id, pk: `tenant-${i % 37}`, n: (i * 53) % 120 });
});
afterAll(() => f.stop());

async function drain(iterator: ReturnType<Container["items"]["getChangeFeedIterator"]>): Promise<{ ids: string[]; continuation: string }> {
  const seen: string[] = [];
  for (;;) {
    const page = await iterator.readNext();
    if (page.statusCode === StatusCodes.NotModified) return { ids: seen, continuation: page.continuationToken };
    seen.push(...page.result.map((r: { id: string }) => r.id));
  }
}

describe("several physical partitions", () => {
  it("show the SDK four key ranges covering the whole key space, each holding part of the data", async () => {
    const { resources } = await c.readPartitionKeyRanges().fetchAll();
    expect(resources.map((r) => [r.minInclusive, r.maxExclusive])).toEqual([
      ["", "1000"],
      ["1000", "2000"],
      ["2000", "3000"],
      ["3000", "FF"],
    ]);
    const ranges = await c.getFeedRanges();
    expect(ranges).toHaveLength(4);
    const perRange = await Promise.all(
      ranges.map((range) => drain(c.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning(range) }))),
    );
    expect(perRange.every((r) => r.ids.length > 0)).toBe(true);
    expect(perRange.flatMap((r) => r.ids).sort()).toEqual(ids);
  });

  it("give each range its own change feed and continuation: a write appears only in its own range, once", async () => {
    const ranges = await c.getFeedRanges();
    const positions = await Promise.all(
      ranges.map((range) => drain(c.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning(range) }))),
    );
    await c.items.create({ id: "late", pk: "tenant-5" });
    await c.items.upsert({ id: ids[0], pk: "tenant-0", n: -1 });
    const resumed = await Promise.all(
      positions.map((p) => drain(c.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Continuation(p.continuation) }))),
    );
    expect(resumed.flatMap((r) => r.ids).sort()).toEqual(["late", ids[0]].sort());
    expect(resumed.filter((r) => r.ids.length > 0).length).toBeLessThanOrEqual(2);
    // The whole-container iterator (as the rebuild uses) still sees every item once.
    expect((await drain(c.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning() }))).ids.sort()).toEqual([...ids, "late"].sort());
  });

  it("answer cross-partition ORDER BY, TOP and aggregates over all ranges", async () => {
    const { resources } = await c.items.query("SELECT c.id, c.n FROM c WHERE c.n >= 0 ORDER BY c.n DESC").fetchAll();
    expect(resources.map((r) => r.n)).toEqual([...resources.map((r) => r.n)].sort((a, b) => b - a));
    expect(resources).toHaveLength(119);
    expect((await c.items.query("SELECT TOP 3 c.n FROM c WHERE c.n >= 0 ORDER BY c.n ASC").fetchAll()).resources.map((r) => r.n)).toEqual([1, 2, 3]); // the only 0 became -1 above
    expect((await c.items.query("SELECT VALUE COUNT(1) FROM c").fetchAll()).resources).toEqual([121]);
  });

  it("hand ORDER BY, TOP and aggregates to the SDK's own pipeline: a query plan, then one query per range", async () => {
    const requests: { status: number; range?: string; plan: boolean }[] = [];
    const inner = createDefaultHttpClient();
    const client = new CosmosClient({
      endpoint: f.cosmos.endpoint,
      key: f.cosmos.key,
      connectionPolicy: { enableEndpointDiscovery: false },
      httpClient: {
        async sendRequest(request) {
          const response = await inner.sendRequest(request);
          if (request.method === "POST" && request.url.endsWith("/docs")) {
            const plan = request.headers.get("x-ms-cosmos-is-query-plan-request")?.toLowerCase() === "true";
            requests.push({ status: response.status, range: request.headers.get("x-ms-documentdb-partitionkeyrangeid") ?? undefined, plan });
          }
          return response;
        },
      },
    });
    const same = client.database(f.database.id).container(c.id);
    const { resources } = await same.items.query("SELECT c.n FROM c WHERE c.n >= 0 ORDER BY c.n DESC").fetchAll();
    expect(resources.map((r) => r.n)).toEqual([...resources.map((r) => r.n)].sort((a, b) => b - a));
    expect(requests.some((r) => r.plan)).toBe(true);
    expect(requests.some((r) => !r.plan && r.range === undefined && r.status === 400)).toBe(true); // the gateway's "needs the pipeline"
    expect(new Set(requests.filter((r) => r.range !== undefined).map((r) => r.range))).toEqual(new Set(["0", "1", "2", "3"]));
    const one = async (sql: string) => (await same.items.query(sql).fetchAll()).resources[0];
    const ns = Array.from({ length: 120 }, (_, i) => (i * 53) % 120).map((n, i) => (i === 0 ? -1 : n));
    expect(await one("SELECT VALUE SUM(c.n) FROM c")).toBe(ns.reduce((a, b) => a + b, 0));
    expect(await one("SELECT VALUE MIN(c.n) FROM c")).toBe(-1);
    expect(await one("SELECT VALUE MAX(c.n) FROM c")).toBe(119);
    expect(await one("SELECT VALUE AVG(c.n) FROM c WHERE IS_DEFINED(c.n)")).toBeCloseTo(ns.reduce((a, b) => a + b, 0) / 120, 6);
    client.dispose();
  });

  it("serve a single-partition container when asked for one range", async () => {
    const single = await cosmosFixture({ partitions: 1 });
    try {
      const one = await single.container();
      expect((await one.readPartitionKeyRanges().fetchAll()).resources).toHaveLength(1);
    } finally {
      await single.stop();
    }
  });
});
