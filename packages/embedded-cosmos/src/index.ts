import { accountLoader, accountRecords } from "./persistence/account-journal";
import { CosmosServer } from "./protocol/server";
import { DataDirectory } from "./persistence/storage";
import { ThroughputBudget } from "./limits/throughput";
import { FaultInjector } from "./limits/faults";
import type { CosmosOptions, RunningCosmos } from "./server-options";

export type { CosmosOptions, RunningCosmos } from "./server-options";

/**
 * The key clients sign requests with (master-key authorization, checked as Azure and the
 * emulator check it): the default of `npm start`, which prints it; `key` sets another.
 */
export const LOCAL_COSMOS_KEY = Buffer.from("embedded-cosmos-local-only-key-0000000000000000").toString("base64");

/** Starts the embedded Cosmos DB-compatible server in this process. */
export async function startCosmos(options: CosmosOptions = {}): Promise<RunningCosmos> {
  const host = options.host ?? "127.0.0.1";
  const partitions = options.partitions ?? 4;
  if (!Number.isInteger(partitions) || partitions < 1 || partitions > 64) throw new Error(`partitions must be an integer from 1 to 64, got ${partitions}`);
  const key = options.key ?? LOCAL_COSMOS_KEY;
  const server = new CosmosServer(key, {
    limits: { operationLimit: options.scriptOperationLimit ?? 5000, timeoutMs: options.scriptTimeoutMs ?? 5000 },
    partitions,
    budget:
      options.operationsPerSecond === undefined
        ? undefined
        : new ThroughputBudget(options.operationsPerSecond, options.clock && (() => options.clock!.now().getTime())),
    faults: options.faults && new FaultInjector(options.faults),
    scanPageItems: options.scanPageItems,
    clock: options.clock,
    onCharged: options.onCharged,
    allowedHosts: options.allowedHosts ?? [],
  });

  const directory = options.dataDir ? openData(server, options.dataDir, options) : undefined;
  let port: number;
  try {
    port = await server.listen(options.port ?? 0, host);
  } catch (error) {
    directory?.close();
    throw error;
  }
  return {
    endpoint: `http://${host}:${port}/`,
    key,
    faults: server.faults,
    watchItems: (listener) => server.account.watchItems(listener),
    async stop() {
      await server.close();
      directory?.close();
    },
  };
}

/** Loads the account from the data directory and journals every change to it from now on. */
function openData(server: CosmosServer, path: string, options: CosmosOptions): DataDirectory {
  const loader = accountLoader(server.account);
  const directory = DataDirectory.open(path, loader.apply, {
    compactAfterBytes: options.compactAfterBytes,
    recoverDamaged: options.recoverDamagedData,
    onRecovered: (file, offset, aside) => console.error(`${file} was damaged at byte ${offset}: kept as ${aside}; loaded what comes before the damage`),
  });
  loader.finish();
  if (directory.wantsCompaction) directory.compact(accountRecords(server.account));
  server.account.journal = (record) => {
    directory.append(record);
    if (directory.wantsCompaction) directory.compact(accountRecords(server.account));
  };
  return directory;
}

// What users of the server reach besides starting it: its fault language, its cost model, the
// signing clients use, and the host-name rule it applies (a host beside it may apply the same).
export { parseFaultSpec, type FaultRule, type FaultSpec } from "./limits/faults";
export { random } from "./limits/random";
export { COEFFICIENTS, NO_COST, requestUnits, type CostFeatures } from "./limits/request-units";
export { authorizationHeaders } from "./protocol/auth";
export { commaList, hostnameOf, isAllowedHost, isLoopbackHost } from "./protocol/host-names";
export type { Clock } from "./engine/clock";
export type { ItemsChanged } from "./engine/account";
export { startCosmosThread, type ThreadOptions } from "./thread";
