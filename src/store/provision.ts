import type { Container, ContainerDefinition, CosmosClient, Database, TriggerOperation, TriggerType } from "@azure/cosmos";
import { containerDefinitions } from "./definitions";
import { scriptBody } from "./script-files";

/**
 * Creates the database, containers, stored procedures and triggers from infra/containers.json.
 * For local use only (embedded server, emulator): in Azure, Bicep owns these resources and the
 * app's identity has no right to create them.
 */
export async function provision(
  client: CosmosClient,
  databaseName = containerDefinitions.databaseName,
  log: (line: string) => void = () => {},
  definitions: typeof containerDefinitions.containers = containerDefinitions.containers,
): Promise<void> {
  const { database } = await client.databases.createIfNotExists({ id: databaseName });
  for (const definition of definitions) {
    const declared: ContainerDefinition = {
      id: definition.name,
      partitionKey: { paths: [definition.partitionKeyPath] },
      indexingPolicy: definition.indexingPolicy as never,
      ...("defaultTtl" in definition ? { defaultTtl: definition.defaultTtl } : {}),
      ...("fullTextPolicy" in definition ? { fullTextPolicy: definition.fullTextPolicy } : {}),
    };
    const container = await ensureContainer(database, declared, log);
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

/**
 * The container as declared: created, or, when made by an older version (a data directory kept
 * across upgrades), given the indexes declared since, as Bicep's deployment gives them in Azure.
 * An emulator that refuses full-text policies (400) gets the container without them: search
 * then scans, at a higher charge, as Cosmos DB's full-text functions do without an index.
 */
async function ensureContainer(database: Database, declared: ContainerDefinition, log: (line: string) => void): Promise<Container> {
  try {
    const { container, resource } = await database.containers.createIfNotExists(declared);
    if (resource && outdated(resource, declared)) {
      await container.replace(declared);
      log(`container ${declared.id}: its indexing and full-text policies brought up to date`);
    }
    return container;
  } catch (error) {
    if ((error as { code?: number }).code !== 400 || !declared.fullTextPolicy) throw error;
    log(`container ${declared.id}: this account refused its full-text policy (${(error as Error).message.split("\n")[0]}); search will scan`);
    const { fullTextIndexes: _, ...indexingPolicy } = declared.indexingPolicy ?? {};
    return ensureContainer(database, { ...declared, fullTextPolicy: undefined, indexingPolicy }, log);
  }
}

/**
 * Whether a container lacks what its definition declares: its full-text policy, its full-text
 * or composite indexes, or a path it must not index (the service adds defaults of its own to a
 * policy, so only what the definition names is compared).
 */
function outdated(current: ContainerDefinition, declared: ContainerDefinition): boolean {
  const same = (a: unknown, b: unknown) => JSON.stringify(a ?? []) === JSON.stringify(b ?? []);
  const [now, wanted] = [current.indexingPolicy, declared.indexingPolicy];
  const excluded = new Set((now?.excludedPaths ?? []).map((path) => path.path));
  return (
    JSON.stringify(current.fullTextPolicy ?? null) !== JSON.stringify(declared.fullTextPolicy ?? null) ||
    !same(now?.fullTextIndexes, wanted?.fullTextIndexes) ||
    !same(now?.compositeIndexes, wanted?.compositeIndexes) ||
    !(wanted?.excludedPaths ?? []).every((path) => excluded.has(path.path))
  );
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
