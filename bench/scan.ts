import { CosmosClient } from "@azure/cosmos";
import { startCosmos } from "embedded-cosmos";

/** An unindexable query over N small items across the partitions, read to the end through the SDK. */
export interface ScanFigures {
  items: number;
  /** Query results (half the items match). */
  results: number;
  seconds: number;
  /** Items scanned per second: constant when the scan is linear in the items. */
  itemsPerSecond: number;
}

/**
 * The scan figure for the embedded server: `SELECT c.id FROM c WHERE c.n % 2 = 0` (no index can
 * serve a modulo), paged by the SDK with maxItemCount 1000, over `sizes` items each.
 */
export async function measureScans(sizes: readonly number[] = [15_000, 30_000, 60_000]): Promise<ScanFigures[]> {
  const figures: ScanFigures[] = [];
  for (const size of sizes) {
    const cosmos = await startCosmos({ partitions: 4 });
    const client = new CosmosClient({ endpoint: cosmos.endpoint, key: cosmos.key, connectionPolicy: { enableEndpointDiscovery: false } });
    try {
      const { database } = await client.databases.createIfNotExists({ id: "scan" });
      const { container } = await database.containers.createIfNotExists({ id: "items", partitionKey: { paths: ["/pk"] } });
      for (let start = 0; start < size; start += 100) {
        const operations = Array.from({ length: Math.min(100, size - start) }, (_, i) => ({
          operationType: "Create" as const,
          resourceBody: { id: `i${start + i}`, pk: `p${(start + i) % 997}`, n: start + i },
        }));
        await container.items.bulk(operations);
      }
      const started = performance.now();
      const { resources } = await container.items.query({ query: "SELECT c.id FROM c WHERE c.n % 2 = 0" }, { maxItemCount: 1000 }).fetchAll();
      const seconds = (performance.now() - started) / 1000;
      figures.push({ items: size, results: resources.length, seconds, itemsPerSecond: Math.round(size / seconds) });
    } finally {
      client.dispose();
      await cosmos.stop();
    }
  }
  return figures;
}

if (require.main === module) {
  void measureScans().then((figures) => {
    for (const f of figures) console.log(`scan of ${f.items} items: ${f.results} results in ${f.seconds.toFixed(2)} s (${f.itemsPerSecond} items/s)`);
  });
}
