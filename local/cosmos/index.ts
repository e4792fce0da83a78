import { CosmosServer } from "./server";

export interface CosmosOptions {
  /** Port on 127.0.0.1; 0 (default) picks a free one. */
  port?: number;
  host?: string;
  /** Collection calls a script may make before `isAccepted` turns false (default 5000). */
  scriptOperationLimit?: number;
  /** A script running longer is stopped and rolled back with 408 (default 5000 ms, as the service). */
  scriptTimeoutMs?: number;
}

export interface RunningCosmos {
  endpoint: string;
  key: string;
  stop(): Promise<void>;
}

/**
 * The key clients sign requests with. The embedded server does not check signatures (it only
 * listens on loopback), so any key works; this one is printed for convenience.
 */
export const LOCAL_COSMOS_KEY = Buffer.from("embedded-cosmos-local-only-key-0000000000000000").toString("base64");

/** Starts the embedded Cosmos DB-compatible server in this process. */
export async function startCosmos(options: CosmosOptions = {}): Promise<RunningCosmos> {
  const host = options.host ?? "127.0.0.1";
  const server = new CosmosServer({
    operationLimit: options.scriptOperationLimit ?? 5000,
    timeoutMs: options.scriptTimeoutMs ?? 5000,
  });
  const port = await server.listen(options.port ?? 0, host);
  return { endpoint: `http://${host}:${port}/`, key: LOCAL_COSMOS_KEY, stop: () => server.close() };
}
