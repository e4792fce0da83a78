import type { CosmosDBTriggerFunction } from "../../src";

/** A change feed trigger on the `watched` container, as the host sees one the app registered, delivering to `handler`. */
export function watchedTrigger(
  handler: (documents: unknown[]) => Promise<void>,
  retry: Partial<CosmosDBTriggerFunction["retry"]> = {},
): CosmosDBTriggerFunction {
  return {
    name: "watchedChangeFeed",
    connection: "COSMOS",
    databaseName: "test",
    containerName: "watched",
    leaseContainerName: "leases",
    leaseContainerPrefix: "watched-",
    startFromBeginning: true,
    feedPollDelayMs: 20,
    retry: { minimumIntervalMs: 20, maximumIntervalMs: 200, maxRetryCount: -1, ...retry },
    leaseTiming: {},
    invoke: handler,
  };
}
