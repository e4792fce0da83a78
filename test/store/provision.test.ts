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
    await provision(client, "provisioned");
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
});
