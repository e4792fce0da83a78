import { app, type InvocationContext } from "@azure/functions";
import * as df from "durable-functions";
import { measureChangeFeedLag } from "../src/pipeline/change-feed-lag";
import { changeFeedTriggers } from "../src/pipeline/change-feed-triggers";
import { invocationServices } from "../src/pipeline/invocation";
import { CONTAINERS } from "../src/store/definitions";

// One Cosmos DB trigger per change feed consumer of the shared table (src/pipeline/change-feed-triggers.ts).
for (const trigger of changeFeedTriggers) {
  app.cosmosDB(trigger.name, {
    connection: "COSMOS",
    databaseName: "%COSMOS_DATABASE%",
    containerName: trigger.containerName,
    leaseContainerName: CONTAINERS.leases,
    leaseContainerPrefix: trigger.leaseContainerPrefix,
    createLeaseContainerIfNotExists: false,
    startFromBeginning: trigger.startFromBeginning,
    feedPollDelay: trigger.feedPollDelayMs,
    retry: trigger.retry,
    extraInputs: trigger.needsDurableClient ? [df.input.durableClient()] : [],
    handler: (documents: unknown[], context: InvocationContext) => trigger.handler(documents, invocationServices(context)),
  });
}

// The change feed estimator: each consumer's lag per lease, read from the leases and the change
// feed (not from the consumers), so a stalled or failing consumer shows. In Azure a timer runs on
// one instance at a time.
app.timer("changeFeedLag", {
  schedule: "%CHANGE_FEED_LAG_SCHEDULE%",
  handler: async () => void (await measureChangeFeedLag()),
});
