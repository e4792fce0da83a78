import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Container } from "@azure/cosmos";
import { cosmosFixture, statusOf, type CosmosFixture } from "../fixture";

/**
 * An unindexed scan reads a bounded number of items per page, as Azure ends a page at its
 * budget: pages may be short, even empty, and carry a continuation. Long scans are then many
 * short requests, and nothing is repeated or skipped across pages.
 */
let fixture: CosmosFixture;
let container: Container;
const ids = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `i${String(i + from).padStart(4, "0")}`);

beforeAll(async () => {
  fixture = await cosmosFixture({ scanPageItems: 50 });
  container = await fixture.container();
  for (const [i, id] of ids(200).entries()) await container.items.create({ id, pk: i < 150 ? "p" : `q${i % 7}`, n: i });
});
afterAll(() => fixture.stop());

// `n % 2` is answered by no index: every item of the scope is a candidate.
const evens = "SELECT VALUE c.id FROM c WHERE c.n % 2 = 0";

describe("unindexed scans", () => {
  it("return short pages with a continuation, reading at most the page budget each", async () => {
    const iterator = container.items.query<string>(evens, { partitionKey: "p", maxItemCount: 1000, populateQueryMetrics: true });
    const pages: string[][] = [];
    while (iterator.hasMoreResults()) {
      const page = await iterator.fetchNext();
      pages.push(page.resources);
      const metrics = Object.values(page.queryMetrics ?? {})[0];
      if (metrics) expect(metrics.retrievedDocumentCount).toBeLessThanOrEqual(50);
    }
    expect(pages.length).toBe(3);
    expect(pages.every((page) => page.length <= 25)).toBe(true);
    expect(pages.flat()).toEqual(ids(150).filter((_, i) => i % 2 === 0));
  });

  it("give every item once across pages, whatever is written between them", async () => {
    const iterator = container.items.query<string>(evens, { partitionKey: "p", maxItemCount: 10 });
    const first = await iterator.fetchNext();
    // One already returned goes, one not yet reached goes, new ones come at the end.
    await container.item(first.resources[0], "p").delete();
    await container.item("i0120", "p").delete();
    for (const [i, id] of ids(4, 500).entries()) await container.items.create({ id, pk: "p", n: 1000 + i });
    const rest: string[] = [];
    while (iterator.hasMoreResults()) rest.push(...(await iterator.fetchNext()).resources);
    const all = [...first.resources, ...rest];
    expect(new Set(all).size).toBe(all.length);
    expect(all).toEqual([...ids(150).filter((id, i) => i % 2 === 0 && id !== "i0120"), "i0500", "i0502"]);
  });

  it("work across partitions through the SDK, and refuse a continuation they did not issue", async () => {
    const { resources } = await container.items.query<string>(evens, { maxItemCount: 7 }).fetchAll();
    expect(resources.sort()).toEqual([...ids(200).filter((id, i) => i % 2 === 0 && id !== "i0000" && id !== "i0120"), "i0500", "i0502"].sort());
    expect(await statusOf(container.items.query(evens, { partitionKey: "p", continuationToken: "SCAN:x:" }).fetchNext())).toBe(400);
  });
});
