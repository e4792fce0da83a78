import { AsyncLocalStorage } from "node:async_hooks";
import { PriorityLevel } from "@azure/cosmos";
import type { HttpClient } from "@azure/core-rest-pipeline";

/**
 * Priority-based execution: when a partition runs out of request units, Cosmos DB throttles its
 * low-priority requests first, so that the ones a reader waits for go through. The API's
 * requests are high priority (the account's default); the background work (the change feed
 * consumers, the orchestrations' activities, the lag estimator, the copy rebuild) runs at low
 * priority: it catches up a moment later, and nobody is waiting on its answer.
 */
const background = new AsyncLocalStorage<true>();

/** Runs `work`, and everything it starts, with its Cosmos DB requests at low priority. */
export const inBackground = <T>(work: () => T): T => background.run(true, work);

/** The header the SDK's `priorityLevel` request option sets. */
const PRIORITY_HEADER = "x-ms-cosmos-priority-level";

/**
 * The SDK's HTTP client, wrapped: a request sent in the background says so, with the header the
 * SDK's `priorityLevel` option sends. The option is per request and the background's requests
 * are made by the same store functions as the API's, so the priority is the caller's context,
 * not an argument threaded through every one of them. A request that names its own priority keeps it.
 */
export function prioritizedHttpClient(inner: HttpClient): HttpClient {
  return {
    sendRequest(request) {
      if (background.getStore() && !request.headers.has(PRIORITY_HEADER)) request.headers.set(PRIORITY_HEADER, PriorityLevel.Low);
      return inner.sendRequest(request);
    },
  };
}
