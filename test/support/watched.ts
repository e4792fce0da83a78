import type { ChangeFeedTrigger } from "../../src/pipeline/change-feed-triggers";

/** A change feed consumer of the test container `watched`, retrying quickly, handing each batch to `handler`. */
export function watchedTrigger(handler: ChangeFeedTrigger["handler"]): ChangeFeedTrigger {
  return {
    name: "watchedChangeFeed",
    containerName: "watched",
    leaseContainerPrefix: "watched-",
    startFromBeginning: true,
    retry: { strategy: "exponentialBackoff", maxRetryCount: -1, minimumInterval: 20, maximumInterval: 200 },
    needsDurableClient: false,
    handler,
  };
}
