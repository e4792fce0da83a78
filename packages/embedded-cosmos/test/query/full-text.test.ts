import type { Container } from "@azure/cosmos";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cosmosFixture, statusOf, type CosmosFixture } from "../fixture";

/** A small blog: each post in a logical partition of its own (`spread`), and all of them in one (`together`). */
const POSTS = [
  { id: "p1", title: "Partitioning in Azure Cosmos DB", body: "Choose a partition key that spreads writes. Partition keys decide where items live." },
  { id: "p2", title: "Modeling data", body: "Embed or reference: modeling data for a read-heavy workload." },
  { id: "p3", title: "The change feed", body: "The change feed lists changes in order, partition by partition." },
  { id: "p4", title: "Cats", body: "The cat sat on the mat. Cats like mats." },
  { id: "p5", title: "Request units", body: "Every request costs request units; a point read costs one." },
  { id: "p6", title: "Hot partitions", body: "A hot partition throttles: spread the partition key, or the partition's budget runs out." },
  { id: "p7", title: "Search in a blog", body: "Full-text search ranks posts by BM25 over their words." },
  { id: "p8", title: "Indexing", body: "An indexing policy includes and excludes paths; a partition key is indexed too." },
];

const POLICY = {
  fullTextPolicy: { defaultLanguage: "en-US", fullTextPaths: ["/title", "/body"].map((path) => ({ path, language: "en-US" })) },
  indexingPolicy: { fullTextIndexes: [{ path: "/title" }, { path: "/body" }] },
};

let f: CosmosFixture;
let spread: Container;
let together: Container;
beforeAll(async () => {
  f = await cosmosFixture({ partitions: 4 });
  spread = await f.container({ partitionKey: { paths: ["/id"] }, ...POLICY });
  together = await f.container({ partitionKey: { paths: ["/blog"] }, ...POLICY });
  for (const post of POSTS) {
    await spread.items.create(post);
    await together.items.create({ ...post, blog: "b" });
  }
});
afterAll(() => f.stop());

const ids = async (container: Container, query: string, partitionKey?: string) =>
  (await container.items.query<{ id: string }>(query, partitionKey ? { partitionKey } : {}).fetchAll()).resources.map((r) => r.id);

describe("full-text search: the four functions", () => {
  it("finds the words of a keyword by their stems, without stop words, in one partition and across them", async () => {
    for (const [query, expected] of [
      [`SELECT c.id FROM c WHERE FullTextContains(c.body, "partitions")`, ["p1", "p3", "p6", "p8"]],
      [`SELECT c.id FROM c WHERE FullTextContainsAll(c.body, "partition", "spreading")`, ["p1", "p6"]],
      [`SELECT c.id FROM c WHERE FullTextContainsAny(c.body, "cat", "requests")`, ["p4", "p5"]],
      [`SELECT c.id FROM c WHERE FullTextContains(c.body, "The")`, []],
      [`SELECT c.id FROM c WHERE FullTextContains(c.title, "cats") OR FullTextContains(c.title, "indexes")`, ["p4", "p8"]],
    ] as const) {
      expect((await ids(spread, query)).sort(), query).toEqual(expected);
      expect((await ids(together, query, "b")).sort(), query).toEqual(expected);
    }
  });

  it("loads only the items a full-text index finds; without a full-text policy the functions answer the same, loading every item", async () => {
    const plain = await f.container({ partitionKey: { paths: ["/blog"] } });
    for (const post of POSTS) await plain.items.create({ ...post, blog: "b" });
    const query = `SELECT c.id FROM c WHERE FullTextContainsAny(c.body, "cats", "throttling")`;
    const metrics = async (container: Container) => {
      const page = await container.items.query<{ id: string }>(query, { partitionKey: "b", populateQueryMetrics: true }).fetchNext();
      return { ids: page.resources.map((r) => r.id), retrieved: page.queryMetrics?.["0"].retrievedDocumentCount, charge: page.requestCharge };
    };
    const [indexed, scanned] = [await metrics(together), await metrics(plain)];
    expect(indexed.ids).toEqual(["p4", "p6"]);
    expect(scanned.ids).toEqual(indexed.ids);
    expect(indexed.retrieved).toBe(2);
    expect(scanned.retrieved).toBe(POSTS.length);
    expect(scanned.charge).toBeGreaterThan(indexed.charge);
  });

  it("refuses FullTextScore outside ORDER BY RANK", async () => {
    expect(await statusOf(spread.items.query(`SELECT VALUE FullTextScore(c.body, "cat") FROM c`, { partitionKey: "p4" }).fetchAll())).toBe(400);
  });
});

describe("full-text search: ORDER BY RANK", () => {
  // Across 4 physical partitions through @azure/cosmos' own hybrid search pipeline (the gateway's
  // plan, the statistics query on each range, the component queries, the fusion), and in one
  // logical partition answered directly: the container's statistics are the same, so the order is.
  const rankings = [
    `SELECT TOP 4 c.id FROM c ORDER BY RANK FullTextScore(c.body, "partition")`,
    `SELECT TOP 3 c.id, c.title FROM c WHERE c.id != "p6" ORDER BY RANK FullTextScore(c.body, "partition", "key")`,
    `SELECT c.id FROM c ORDER BY RANK FullTextScore(c.body, "partition") OFFSET 1 LIMIT 2`,
    `SELECT TOP 2 c.id FROM c ORDER BY RANK RRF(FullTextScore(c.title, "partitions"), FullTextScore(c.body, "spread"))`,
    `SELECT TOP 2 c.id FROM c ORDER BY RANK RRF(FullTextScore(c.title, "partitions"), FullTextScore(c.body, "spread"), [1, 3])`,
  ];

  it("ranks the same across partitions (the SDK's pipeline) as in one partition (the server alone)", async () => {
    for (const query of rankings) {
      const direct = await ids(together, query, "b");
      expect(direct.length, query).toBeGreaterThan(0);
      expect(await ids(spread, query), query).toEqual(direct);
    }
  });

  it("ranks by BM25: more of the keyword in a shorter text first, texts without it last", async () => {
    const order = await ids(spread, `SELECT TOP 8 c.id FROM c ORDER BY RANK FullTextScore(c.body, "partition")`);
    // p6 says it three times in 13 words; p3 twice in 7; p1 twice in 11; p8 once; the rest never.
    expect(order.slice(0, 4)).toEqual(["p6", "p3", "p1", "p8"]);
    expect(order.slice(4).sort()).toEqual(["p2", "p4", "p5", "p7"]);
  });

  it("weighs RRF's components as asked", async () => {
    const even = await ids(spread, `SELECT TOP 2 c.id FROM c ORDER BY RANK RRF(FullTextScore(c.title, "cat"), FullTextScore(c.body, "request"))`);
    const leaning = await ids(spread, `SELECT TOP 2 c.id FROM c ORDER BY RANK RRF(FullTextScore(c.title, "cat"), FullTextScore(c.body, "request"), [1, 5])`);
    expect(leaning[0]).toBe("p5");
    expect(even).toContain("p4");
  });

  it("refuses a ranked query across partitions without TOP or LIMIT, and keywords that are not strings", async () => {
    expect(await statusOf(spread.items.query(`SELECT c.id FROM c ORDER BY RANK FullTextScore(c.body, "cat")`).fetchAll())).toBe(400);
    expect(await statusOf(together.items.query(`SELECT TOP 1 c.id FROM c ORDER BY RANK FullTextScore(c.body, 3)`, { partitionKey: "b" }).fetchAll())).toBe(400);
  });
});
