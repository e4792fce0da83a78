import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCosmos, type RunningCosmos } from "embedded-cosmos";
import { clientFor } from "../support/cosmos";
import { containerDefinitions } from "../../src/store/definitions";
import { provision } from "../../src/store/provision";

let cosmos: RunningCosmos;
beforeAll(async () => (cosmos = await startCosmos()));
afterAll(() => cosmos.stop());

/** Local provisioning creates what the Bicep creates in Azure, from the same infra/containers.json. */
describe("provision", () => {
  it("creates every container with its partition key, indexing policy and full-text policy, and is safe to run again", async () => {
    const client = clientFor(cosmos);
    await provision(client, "provisioned");
    const again: string[] = [];
    await provision(client, "provisioned", (line) => again.push(line));
    expect(again.filter((line) => line.includes("brought up to date"))).toEqual([]);
    for (const definition of containerDefinitions.containers) {
      const { resource } = await client.database("provisioned").container(definition.name).read();
      expect(resource?.partitionKey?.paths, definition.name).toEqual([definition.partitionKeyPath]);
      const { excludedPaths, ...policy } = definition.indexingPolicy;
      // The service adds the `_etag` path to the excluded ones.
      expect(resource?.indexingPolicy, definition.name).toMatchObject(policy);
      expect(resource?.indexingPolicy?.excludedPaths, definition.name).toEqual(expect.arrayContaining(excludedPaths));
      expect(resource?.fullTextPolicy, definition.name).toEqual("fullTextPolicy" in definition ? definition.fullTextPolicy : undefined);
    }
  });

  it("brings a container made by an older version up to date: its full-text policy and indexes, declared since", async () => {
    const client = clientFor(cosmos);
    const { database } = await client.databases.createIfNotExists({ id: "upgraded" });
    // The posts container as round 4 declared it: no full-text policy, no full-text indexes.
    await database.containers.create({ id: "posts", partitionKey: { paths: ["/postId"] } });
    const lines: string[] = [];
    await provision(client, "upgraded", (line) => lines.push(line));
    const { resource } = await database.container("posts").read();
    const posts = containerDefinitions.containers.find((c) => c.name === "posts")!;
    expect(resource?.fullTextPolicy).toEqual((posts as { fullTextPolicy?: unknown }).fullTextPolicy);
    expect(resource?.indexingPolicy?.fullTextIndexes).toEqual(posts.indexingPolicy.fullTextIndexes);
    expect(lines).toContain("container posts: its indexing and full-text policies brought up to date");
    // Up to date now: the next start replaces nothing.
    lines.length = 0;
    await provision(client, "upgraded", (line) => lines.push(line));
    expect(lines.filter((line) => line.includes("brought up to date"))).toEqual([]);
  });

  it("creates the container without its full-text policy where the account refuses it (400), saying search will scan", async () => {
    const client = clientFor(cosmos);
    const posts = containerDefinitions.containers.find((c) => c.name === "posts")!;
    // A language the embedded server does not tokenize: refused, as an emulator without full-text search would refuse the policy.
    const refused = { ...posts, fullTextPolicy: { defaultLanguage: "xx-XX", fullTextPaths: [{ path: "/title", language: "xx-XX" }] } };
    const lines: string[] = [];
    await provision(client, "refusing", (line) => lines.push(line), [refused]);
    const { resource } = await client.database("refusing").container("posts").read();
    expect(resource?.fullTextPolicy).toBeUndefined();
    expect(resource?.indexingPolicy?.fullTextIndexes ?? []).toEqual([]);
    expect(resource?.partitionKey?.paths).toEqual(["/postId"]);
    expect(lines).toContainEqual(expect.stringMatching(/^container posts: this account refused its full-text policy \(.*xx-XX.*\); search will scan$/));
  });
});
