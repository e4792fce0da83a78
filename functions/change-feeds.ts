import { app, type InvocationContext } from "@azure/functions";
import * as df from "durable-functions";
import { changeFeedTriggers } from "../src/pipeline/change-feed-triggers";
import { invocationServices } from "../src/pipeline/invocation-services";
import { CONTAINERS } from "../src/store/definitions";
import { appServices } from "./composition-root";

// One change feed trigger per change feed consumer of the shared table (src/pipeline/change-feed-triggers.ts).
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
    handler: (documents: unknown[], context: InvocationContext) => trigger.handler(documents, invocationServices(context, appServices())),
  });
}
