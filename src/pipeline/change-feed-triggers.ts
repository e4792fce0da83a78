import type { ExponentialBackoffRetryOptions } from "@azure/functions";
import { CONTAINERS } from "../store/definitions";
import { handlePostsChanges } from "./posts-change-feed";
import { setAsideMalformed } from "./set-aside";
import { observedConsumer } from "./observed";
import type { PipelineServices } from "./pipeline-services";
import { handleUsersChanges } from "./users-change-feed";

const logOf = (services: PipelineServices) => services.log ?? ((message: string) => console.warn(message));

export interface ChangeFeedTrigger {
  name: string;
  containerName: string;
  /** One lease prefix per function, all on the shared `leases` container. */
  leaseContainerPrefix: string;
  startFromBeginning: boolean;
  /** How long a drained lease waits before it reads its range again (the binding's feedPollDelay). */
  feedPollDelayMs: number;
  /** Retried until it succeeds (maxRetryCount -1): a batch is never skipped (malformed documents in it are set aside). */
  retry: ExponentialBackoffRetryOptions & { maxRetryCount: -1 };
  needsDurableClient: boolean;
  handler(documents: unknown[], services: PipelineServices): Promise<void>;
}

/**
 * A new post must show in the feed and its author's list within 2 s: the trigger's default
 * (5 s between polls of a drained range) is too slow for that, one second is not.
 */
const CHANGE_FEED_POLL_DELAY_MS = 1000;

const retryForever: ChangeFeedTrigger["retry"] = { strategy: "exponentialBackoff", maxRetryCount: -1, minimumInterval: 1000, maximumInterval: 60_000 };

/** A trigger whose handler is observed (a span and a count per batch, named from the trigger). */
const observed = (trigger: Omit<ChangeFeedTrigger, "handler">, handle: ChangeFeedTrigger["handler"]): ChangeFeedTrigger => ({
  ...trigger,
  handler: observedConsumer(trigger, handle),
});

/** THE change feed consumers: functions/ registers them with app.cosmosDB, the local host (packages/local-host) pumps them. */
export const changeFeedTriggers: readonly ChangeFeedTrigger[] = [
  observed(
    {
      name: "postsChangeFeed",
      containerName: CONTAINERS.posts,
      leaseContainerPrefix: "posts-",
      startFromBeginning: true,
      feedPollDelayMs: CHANGE_FEED_POLL_DELAY_MS,
      retry: retryForever,
      needsDurableClient: true,
    },
    (documents, services) =>
      setAsideMalformed(services.store, "posts", documents, logOf(services), (wellFormed) => handlePostsChanges(services.store, wellFormed, services)),
  ),
  observed(
    {
      name: "usersChangeFeed",
      containerName: CONTAINERS.users,
      leaseContainerPrefix: "users-",
      startFromBeginning: true,
      feedPollDelayMs: CHANGE_FEED_POLL_DELAY_MS,
      retry: retryForever,
      needsDurableClient: true,
    },
    (documents, services) =>
      setAsideMalformed(services.store, "users", documents, logOf(services), (wellFormed) =>
        handleUsersChanges(services.store, wellFormed, services.orchestrations, services.policy),
      ),
  ),
];
