import { CosmosClient, type Container, type ContainerDefinition, type Database } from "@azure/cosmos";
import { randomUUID } from "node:crypto";
import { startCosmos, type CosmosOptions, type RunningCosmos } from "../src";

export interface CosmosFixture {
  cosmos: RunningCosmos;
  client: CosmosClient;
  database: Database;
  /** A fresh container with a unique name. */
  container(definition?: Partial<ContainerDefinition>): Promise<Container>;
  stop(): Promise<void>;
}

export function clientFor(cosmos: { endpoint: string; key: string }): CosmosClient {
  return new CosmosClient({ endpoint: cosmos.endpoint, key: cosmos.key, connectionPolicy: { enableEndpointDiscovery: false } });
}

/** TEST_COSMOS_ENDPOINT and TEST_COSMOS_KEY: a real account or emulator, for the suites that check the server against Azure. */
function realAccount(): RunningCosmos | undefined {
  const endpoint = process.env.TEST_COSMOS_ENDPOINT?.trim();
  const key = process.env.TEST_COSMOS_KEY?.trim();
  // A remote account tells this process nothing of its writes.
  return endpoint && key ? { endpoint, key, watchItems: () => () => {}, stop: async () => {} } : undefined;
}

/**
 * Starts an embedded server and a database on it; tests talk to it only through @azure/cosmos.
 * With `{ againstAzure: true }` (the fidelity suite) and TEST_COSMOS_ENDPOINT set, the same
 * tests run against that account instead, in a database of their own, deleted at the end.
 */
export async function cosmosFixture(options: CosmosOptions = {}, { againstAzure = false } = {}): Promise<CosmosFixture> {
  const real = againstAzure ? realAccount() : undefined;
  const cosmos = real ?? (await startCosmos(options));
  const client = real ? new CosmosClient({ endpoint: real.endpoint, key: real.key }) : clientFor(cosmos);
  const { database } = await client.databases.createIfNotExists({ id: real ? `test-${randomUUID().slice(0, 8)}` : "test" });
  return {
    cosmos,
    client,
    database,
    async container(definition = {}) {
      const { container } = await database.containers.create({ id: `c-${randomUUID().slice(0, 8)}`, partitionKey: { paths: ["/pk"] }, ...definition });
      return container;
    },
    async stop() {
      if (real) await database.delete();
      client.dispose();
      await cosmos.stop();
    },
  };
}

/** Polls `check` until it returns a value (not undefined) or the deadline passes. */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 10_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** The HTTP status an SDK call ended with, whether it resolved (point reads report 404 this way) or threw. */
export const statusOf = async (promise: Promise<unknown>): Promise<number> => {
  try {
    const response = (await promise) as { statusCode?: number } | undefined;
    return response?.statusCode ?? 200;
  } catch (error) {
    return (error as { code: number }).code;
  }
};

/** A clock a test moves by hand: what `_ts`, TTL expiry and the throughput budget read. */
export class ManualClock {
  private time: number;

  constructor(start = "2026-01-01T00:00:00.000Z") {
    this.time = Date.parse(start);
  }

  now(): Date {
    return new Date(this.time);
  }

  advance(ms: number): void {
    this.time += ms;
  }
}
