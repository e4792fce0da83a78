import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CosmosClient } from "@azure/cosmos";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCosmos } from "../../src";
import { cosmosFixture, statusOf, type CosmosFixture } from "../fixture";

let f: CosmosFixture;
beforeAll(async () => (f = await cosmosFixture()));
afterAll(() => f.stop());

const english = (...paths: string[]) => ({ defaultLanguage: "en-US", fullTextPaths: paths.map((path) => ({ path, language: "en-US" })) });

/** A container's full-text policy (what is tokenized, in which language) and its full-text indexes, as Azure keeps them. */
describe("full-text policy and indexes", () => {
  it("keeps a container's policy and indexes, and replaces them with the container", async () => {
    const { container, resource } = await f.database.containers.create({
      id: "articles",
      partitionKey: { paths: ["/articleId"] },
      fullTextPolicy: english("/title", "/body"),
      indexingPolicy: { fullTextIndexes: [{ path: "/title" }, { path: "/body" }] },
    });
    expect(resource?.fullTextPolicy).toEqual(english("/title", "/body"));
    expect(resource?.indexingPolicy?.fullTextIndexes).toEqual([{ path: "/title" }, { path: "/body" }]);
    const replaced = await container.replace({
      id: "articles",
      partitionKey: { paths: ["/articleId"] },
      fullTextPolicy: english("/title"),
      indexingPolicy: { fullTextIndexes: [{ path: "/title" }] },
    });
    expect(replaced.resource?.fullTextPolicy).toEqual(english("/title"));
    expect((await container.read()).resource?.indexingPolicy?.fullTextIndexes).toEqual([{ path: "/title" }]);
    await container.delete();
  });

  it("refuses a full-text index on a path the policy does not name, and a language it does not know", async () => {
    const create = (fullTextPolicy: unknown, fullTextIndexes: unknown[]) =>
      f.database.containers.create({
        id: "refused",
        partitionKey: { paths: ["/pk"] },
        fullTextPolicy: fullTextPolicy as never,
        indexingPolicy: { fullTextIndexes } as never,
      });
    expect(await statusOf(create(english("/title"), [{ path: "/body" }]))).toBe(400);
    expect(await statusOf(create(undefined, [{ path: "/body" }]))).toBe(400);
    expect(await statusOf(create({ defaultLanguage: "xx-XX", fullTextPaths: [{ path: "/title", language: "xx-XX" }] }, []))).toBe(400);
    expect(await statusOf(create({ defaultLanguage: "en-US", fullTextPaths: [{ path: "title" }] }, []))).toBe(400);
  });

  it("keeps them across a restart", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "cosmos-full-text-"));
    let cosmos = await startCosmos({ dataDir });
    const open = () => new CosmosClient({ endpoint: cosmos.endpoint, key: cosmos.key }).database("kept");
    await (
      await open().client.databases.createIfNotExists({ id: "kept" })
    ).database.containers.create({
      id: "articles",
      partitionKey: { paths: ["/articleId"] },
      fullTextPolicy: english("/title"),
      indexingPolicy: { fullTextIndexes: [{ path: "/title" }] },
    });
    await cosmos.stop();
    cosmos = await startCosmos({ dataDir });
    const { resource } = await open().container("articles").read();
    expect(resource?.fullTextPolicy).toEqual(english("/title"));
    expect(resource?.indexingPolicy?.fullTextIndexes).toEqual([{ path: "/title" }]);
    await cosmos.stop();
  });
});
