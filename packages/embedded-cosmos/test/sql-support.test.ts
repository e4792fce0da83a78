import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Container } from "@azure/cosmos";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UNSUPPORTED_CONSTRUCTS } from "../src/query/sql-support";
import { cosmosFixture, statusOf, type CosmosFixture } from "./fixture";

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

const rows = readFileSync(join(__dirname, "../docs/sql.md"), "utf8")
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
    const doc = readFileSync(join(__dirname, "../docs/sql.md"), "utf8").replace(/`/g, "");
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
