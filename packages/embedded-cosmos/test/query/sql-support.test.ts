import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Container } from "@azure/cosmos";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UNSUPPORTED_CONSTRUCTS } from "../../src/query/sql-support";
import { cosmosFixture, statusOf, type CosmosFixture } from "../fixture";

/** docs/sql.md, kept true: every row runs as it says, in one partition and across all. */
let fixture: CosmosFixture;
let container: Container;
beforeAll(async () => {
  fixture = await cosmosFixture();
  container = await fixture.container({ indexingPolicy: { compositeIndexes: [] } });
  const kinds = ["a", "b", "a", "c", "b", "a"];
  for (const [i, kind] of kinds.entries())
    await container.items.create({ id: `d${i}`, pk: i < 3 ? "p" : `q${i}`, n: i, kind, tags: i % 2 === 0 ? ["x", "y"] : ["z"] });
});
afterAll(() => fixture.stop());

const rows = readFileSync(join(__dirname, "../../docs/sql.md"), "utf8")
  .split("\n")
  .filter((line) => /^\| .* \| `SELECT/.test(line))
  .map((line) => {
    const [construct, example, status] = line.split(" | ").map((cell) => cell.replace(/^\| /, "").replace(/ \|$/, ""));
    return { construct, query: example.replace(/^`|`$/g, ""), supported: status.startsWith("supported") };
  });

const run = (query: string, partitionKey?: string) =>
  container.items.query({ query, parameters: [{ name: "@n", value: 2 }] }, { partitionKey, maxItemCount: 2 }).fetchAll();

describe("SQL on the embedded server, as docs/sql.md says", () => {
  it("names every construct the server refuses", () => {
    const doc = readFileSync(join(__dirname, "../../docs/sql.md"), "utf8").replace(/`/g, "");
    expect(rows.length).toBeGreaterThan(15);
    for (const { construct } of UNSUPPORTED_CONSTRUCTS) expect(doc, construct).toContain(construct.replace(/ with .*/, ""));
  });

  it.each(rows.map((row) => [row.construct, row] as const))("%s", async (_construct, row) => {
    for (const partitionKey of ["p", undefined]) {
      if (row.supported) {
        const { resources } = await run(row.query, partitionKey);
        expect(Array.isArray(resources), `${row.query} (${partitionKey ?? "all partitions"})`).toBe(true);
      } else {
        const error = await run(row.query, partitionKey).then(
          () => undefined,
          (e: { code?: number; message?: string }) => e,
        );
        expect(error?.code, `${row.query} (${partitionKey ?? "all partitions"})`).toBe(400);
        expect(error?.message).toMatch(/not supported by the embedded server/);
      }
    }
  });
});

describe("parameters named like a keyword", () => {
  it("are parameters, not the construct they are named after (@like, @top, @iif)", async () => {
    const { resources } = await container.items
      .query({
        query: "SELECT TOP @top c.id FROM c WHERE (c.kind = @like OR c.kind = @iif) ORDER BY c.id",
        parameters: [
          { name: "@top", value: 3 },
          { name: "@like", value: "a" },
          { name: "@iif", value: "c" },
        ],
      })
      .fetchAll();
    expect(resources).toEqual([{ id: "d0" }, { id: "d2" }, { id: "d3" }]);
  });
});

describe("the clauses the server applies, found by the grammar", () => {
  it("are clauses only where the query has them: not in a comment, and after one", async () => {
    const ids = async (query: string) => ((await run(query, "p")).resources as string[]).sort();
    expect(await ids("SELECT VALUE c.id FROM c -- OFFSET 1 LIMIT 1")).toEqual(["d0", "d1", "d2"]);
    expect(await ids("SELECT VALUE c.id FROM c WHERE c.kind != 'x' -- GROUP BY c.kind")).toEqual(["d0", "d1", "d2"]);
    expect(await ids("-- the kinds\nSELECT DISTINCT VALUE c.kind FROM c")).toEqual(["a", "b"]);
    expect(await ids("SELECT VALUE c.id FROM c ORDER BY c.id OFFSET 1 LIMIT 1 -- a page")).toEqual(["d1"]);
  });

  it("refuses a construct only where the query has it: not in a comment, nor a user-defined function of that name", async () => {
    expect((await run("SELECT TOP 1 VALUE c.id FROM c ORDER BY c.id -- no OFFSET 1 LIMIT 1 here", "p")).resources).toEqual(["d0"]);
    await container.scripts.userDefinedFunctions.create({ id: "RegexMatch", body: "function (s) { return s === 'a'; }" });
    expect((await run("SELECT VALUE c.id FROM c WHERE udf.RegexMatch(c.kind) ORDER BY c.id", "p")).resources).toEqual(["d0", "d2"]);
    expect(await statusOf(run("SELECT VALUE c.id FROM c WHERE RegexMatch(c.kind, 'a')", "p"))).toBe(400);
  });
});

describe("DISTINCT and OFFSET ... LIMIT", () => {
  it("give Azure's results in one partition and across partitions, paged by the SDK", async () => {
    expect((await run("SELECT DISTINCT VALUE c.kind FROM c", "p")).resources.sort()).toEqual(["a", "b"]);
    expect((await run("SELECT DISTINCT VALUE c.kind FROM c")).resources.sort()).toEqual(["a", "b", "c"]);
    expect((await run("SELECT DISTINCT c.kind FROM c")).resources.map((r: { kind: string }) => r.kind).sort()).toEqual(["a", "b", "c"]);
    expect((await run("SELECT VALUE c.id FROM c WHERE c.pk = 'p' OFFSET 1 LIMIT 2", "p")).resources).toEqual(["d1", "d2"]);
    const across = (await run("SELECT VALUE c.id FROM c OFFSET 1 LIMIT 3")).resources;
    expect(across).toHaveLength(3);
    expect(new Set(across).size).toBe(3);
    expect((await run("SELECT DISTINCT VALUE c.kind FROM c OFFSET 1 LIMIT 5")).resources).toHaveLength(2);
    expect((await run("SELECT VALUE c.id FROM c OFFSET 10 LIMIT 3")).resources).toEqual([]);
  });

  it("refuse a negative or non-numeric OFFSET or LIMIT, and a continuation they did not issue", async () => {
    expect(await statusOf(run("SELECT VALUE c.id FROM c OFFSET @missing LIMIT 1", "p"))).toBe(400);
    expect(await statusOf(container.items.query("SELECT DISTINCT VALUE c.kind FROM c", { partitionKey: "p", continuationToken: "SHAPED:x" }).fetchNext())).toBe(
      400,
    );
  });
});

describe("OFFSET ... LIMIT with ORDER BY", () => {
  it("skips and takes in order, in one partition and across partitions, paged by the SDK", async () => {
    expect((await run("SELECT VALUE c.n FROM c ORDER BY c.n DESC OFFSET 1 LIMIT 2", "p")).resources).toEqual([1, 0]);
    expect((await run("SELECT VALUE c.n FROM c ORDER BY c.n DESC OFFSET 1 LIMIT 3")).resources).toEqual([4, 3, 2]);
    expect((await run("SELECT c.id FROM c ORDER BY c.n OFFSET @n LIMIT 10")).resources.map((r: { id: string }) => r.id)).toEqual(["d2", "d3", "d4", "d5"]);
  });
});

describe("GROUP BY", () => {
  const sorted = <T>(items: T[]) => [...items].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));

  it("groups with every aggregate, in one partition and across partitions", async () => {
    const query = "SELECT c.kind, COUNT(1) AS n, SUM(c.n) AS total, MIN(c.n) AS least, MAX(c.n) AS most, AVG(c.n) AS mean FROM c GROUP BY c.kind";
    expect(sorted((await run(query, "p")).resources)).toEqual([
      { kind: "a", n: 2, total: 2, least: 0, most: 2, mean: 1 },
      { kind: "b", n: 1, total: 1, least: 1, most: 1, mean: 1 },
    ]);
    expect(sorted((await run(query)).resources)).toEqual([
      { kind: "a", n: 3, total: 7, least: 0, most: 5, mean: 7 / 3 },
      { kind: "b", n: 2, total: 5, least: 1, most: 4, mean: 2.5 },
      { kind: "c", n: 1, total: 3, least: 3, most: 3, mean: 3 },
    ]);
  });

  it("groups by several expressions, with VALUE, a filter, a parameter and a group that is undefined", async () => {
    expect(sorted((await run("SELECT c.kind, c.pk = 'p' AS first, COUNT(1) AS n FROM c WHERE c.n >= @n GROUP BY c.kind, c.pk = 'p'")).resources)).toEqual([
      { kind: "a", first: false, n: 1 },
      { kind: "a", first: true, n: 1 },
      { kind: "b", first: false, n: 1 },
      { kind: "c", first: false, n: 1 },
    ]);
    expect((await run("SELECT VALUE COUNT(1) FROM c GROUP BY c.kind")).resources.sort()).toEqual([1, 2, 3]);
    expect(sorted((await run("SELECT VALUE c.kind FROM c GROUP BY c.kind", "p")).resources)).toEqual(["a", "b"]);
    expect((await run("SELECT c.missing, COUNT(1) AS n FROM c GROUP BY c.missing")).resources).toEqual([{ n: 6 }]);
  });

  it("computes an aggregate inside a larger expression in one partition, and refuses it across partitions", async () => {
    const query = "SELECT c.kind, COUNT(1) + 1 AS n FROM c GROUP BY c.kind";
    expect(sorted((await run(query, "p")).resources)).toEqual([
      { kind: "a", n: 3 },
      { kind: "b", n: 2 },
    ]);
    await expect(run(query)).rejects.toMatchObject({ code: 400, message: expect.stringMatching(/not supported by the embedded server/) });
  });

  it.each([
    "SELECT c.id, COUNT(1) AS n FROM c GROUP BY c.kind",
    "SELECT * FROM c GROUP BY c.kind",
    "SELECT COUNT(1) AS n FROM c GROUP BY COUNT(1)",
    "SELECT VALUE c.kind FROM c GROUP BY",
    "SELECT VALUE c.kind FROM c GROUP BY c.kind,",
    "SELECT VALUE 1 GROUP BY 1",
  ])("answers %s with 400", async (query) => {
    for (const partitionKey of ["p", undefined]) expect(await statusOf(run(query, partitionKey)), `${query} (${partitionKey ?? "all partitions"})`).toBe(400);
  });
});
