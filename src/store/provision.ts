import type { CosmosClient, TriggerOperation, TriggerType } from "@azure/cosmos";
import { containerDefinitions } from "./definitions";
import { scriptBody } from "./script-files";

/**
 * Creates the database, containers, stored procedures and triggers from infra/containers.json.
 * For local use only (embedded server, emulator): in Azure, Bicep owns these resources and the
 * app's identity has no right to create them.
 */
export async function provision(client: CosmosClient, databaseName = containerDefinitions.databaseName, log: (line: string) => void = () => {}): Promise<void> {
  const { database } = await client.databases.createIfNotExists({ id: databaseName });
  for (const definition of containerDefinitions.containers) {
    const { container } = await database.containers.createIfNotExists({
      id: definition.name,
      partitionKey: { paths: [definition.partitionKeyPath] },
      indexingPolicy: definition.indexingPolicy as never,
      ...("defaultTtl" in definition ? { defaultTtl: definition.defaultTtl } : {}),
      ...("fullTextPolicy" in definition ? { fullTextPolicy: definition.fullTextPolicy } : {}),
    });
    for (const name of definition.storedProcedures) {
      const sproc = { id: name, body: scriptBody(name) };
      await createOrReplace(
        () => container.scripts.storedProcedures.create(sproc),
        () => container.scripts.storedProcedure(name).replace(sproc),
      );
    }
    for (const definitionOfTrigger of definition.triggers) {
      const trigger = {
        id: definitionOfTrigger.name,
        body: scriptBody(definitionOfTrigger.name),
        triggerType: definitionOfTrigger.triggerType.toLowerCase() as TriggerType,
        triggerOperation: definitionOfTrigger.triggerOperation.toLowerCase() as TriggerOperation,
      };
      await createOrReplace(
        () => container.scripts.triggers.create(trigger),
        () => container.scripts.trigger(trigger.id).replace(trigger),
      );
    }
    log(`container ${definition.name} (${definition.partitionKeyPath}) ready`);
  }
}

/** Scripts have no upsert in the SDK: create, and replace the body when it already exists. */
async function createOrReplace(create: () => Promise<unknown>, replace: () => Promise<unknown>): Promise<void> {
  try {
    await create();
  } catch (error) {
    if ((error as { code?: number }).code !== 409) throw error;
    await replace();
  }
}
