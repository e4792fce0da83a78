import { app, type InvocationContext } from "@azure/functions";
import * as df from "durable-functions";
import { changeFeedTriggers } from "../src/pipeline/triggers";
import { PROPAGATION } from "../src/pipeline/username-propagation";
import { CONTAINERS } from "../src/store/definitions";

// One Cosmos DB trigger per change feed consumer of the shared table (src/pipeline/triggers.ts).
for (const trigger of changeFeedTriggers) {
  app.cosmosDB(trigger.name, {
    connection: "COSMOS",
    databaseName: "%COSMOS_DATABASE%",
    containerName: trigger.containerName,
    leaseContainerName: CONTAINERS.leases,
    leaseContainerPrefix: trigger.leaseContainerPrefix,
    createLeaseContainerIfNotExists: false,
    startFromBeginning: trigger.startFromBeginning,
    retry: trigger.retry,
    extraInputs: trigger.needsDurableClient ? [df.input.durableClient()] : [],
    handler: (documents: unknown[], context: InvocationContext) =>
      trigger.handler(documents, {
        propagations: {
          async start(instanceId, input) {
            const client = df.getClient(context);
            // getStatus throws for an unknown instance: only then is there something to start.
            const exists = await client.getStatus(instanceId).then(() => true, () => false);
            if (!exists) await client.startNew(PROPAGATION, { instanceId, input });
          },
        },
      }),
  });
}
