import { CosmosClient } from "@azure/cosmos";
import { startCosmos } from "embedded-cosmos";

/** Point reads' latency alone, and while one client sends hostile queries without pause. */
export interface HostileFigures {
  seconds: number;
  alone: { reads: number; p50Ms: number; p99Ms: number; maxMs: number };
  beside: { reads: number; p50Ms: number; p99Ms: number; maxMs: number };
  /** Hostile queries answered meanwhile, and how many of them were refused (408). */
  hostile: number;
  refused: number;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? 0;

async function timedReads(read: () => Promise<unknown>, until: number): Promise<HostileFigures["alone"]> {
  const times: number[] = [];
  while (performance.now() < until) {
    const started = performance.now();
    await read();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { reads: times.length, p50Ms: percentile(times, 50), p99Ms: percentile(times, 99), maxMs: times.at(-1) ?? 0 };
}

/** A query of function calls nested `depth` deep, each one new (`salt`), so no parse is cached. */
const nested = (depth: number, salt: number) => {
  let expression = `c.n + ${salt}`;
  for (let level = 0; level < depth; level++) expression = `ABS((${expression}))`;
  return `SELECT VALUE ${expression} FROM c`;
};

/**
 * What one hostile client costs everyone else on the embedded server: sequential point reads for
 * `seconds`, then as long again while another client loops the queries that held the server
 * before its row budget (one item's triple JOIN of 100 elements, refused with 408; of 60,
 * answered) and before its own grammar (function calls nested 12 deep, each text new), each
 * answered before the next is sent.
 */
export async function measureHostile(seconds: number): Promise<HostileFigures> {
  const cosmos = await startCosmos({ partitions: 4 });
  const client = new CosmosClient({ endpoint: cosmos.endpoint, key: cosmos.key, connectionPolicy: { enableEndpointDiscovery: false } });
  try {
    const { database } = await client.databases.createIfNotExists({ id: "hostile" });
    const { container } = await database.containers.createIfNotExists({ id: "items", partitionKey: { paths: ["/pk"] } });
    await container.items.create({ id: "profile", pk: "user", name: "someone" });
    for (const n of [60, 100]) await container.items.create({ id: `wide-${n}`, pk: `wide-${n}`, arr: Array.from({ length: n }, (_, i) => i) });
    const read = () => container.item("profile", "user").read();
    for (let i = 0; i < 200; i++) await read(); // warm
    const alone = await timedReads(read, performance.now() + seconds * 1000);

    let running = true;
    let hostile = 0;
    let refused = 0;
    const query = "SELECT VALUE COUNT(1) FROM c JOIN a IN c.arr JOIN b IN c.arr JOIN d IN c.arr";
    const attacker = (async () => {
      while (running) {
        const pk = ["wide-100", "wide-60", "wide-60"][hostile % 3];
        await container.items
          .query(hostile % 3 === 2 ? nested(12, hostile) : query, { partitionKey: pk })
          .fetchAll()
          .catch((error: { code?: number }) => void (error.code === 408 && refused++));
        hostile++;
      }
    })();
    const beside = await timedReads(read, performance.now() + seconds * 1000);
    running = false;
    await attacker;
    return { seconds, alone, beside, hostile, refused };
  } finally {
    client.dispose();
    await cosmos.stop();
  }
}
