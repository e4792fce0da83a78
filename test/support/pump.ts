import { ChangeFeedStartFrom, StatusCodes, type Container } from "@azure/cosmos";
import { measureCosmos, type CosmosRequest } from "../../src/store/metering";

/**
 * A change feed reader that hands every new batch to `handle`, on demand: the pipeline driven
 * step by step, so a test sees exactly what one delivery does (and which requests it makes).
 */
export function manualPump(container: Container, handle: (documents: unknown[]) => Promise<void>) {
  const iterator = container.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning(), maxItemCount: 1000 });
  return {
    /** Delivers everything new; returns the Cosmos DB requests the handler made. */
    async drain(): Promise<CosmosRequest[]> {
      const requests: CosmosRequest[] = [];
      for (;;) {
        const page = await iterator.readNext();
        if (page.statusCode === StatusCodes.NotModified || page.result.length === 0) return requests;
        const { usage } = await measureCosmos(() => handle(page.result));
        requests.push(...usage.requests);
      }
    },
  };
}

/** Writes among `requests` to one container (create, replace, upsert, patch, delete). */
export const writesTo = (requests: CosmosRequest[], container: string) =>
  requests.filter((r) => r.path.includes(`/colls/${container}/docs`) && r.method !== "GET" && !r.isQuery && !r.isQueryPlan);
