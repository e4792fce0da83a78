import { accountLoader, accountRecords } from "./persistence/account-journal";
import { CosmosServer } from "./protocol/server";
import { DataDirectory } from "./persistence/storage";
import { ThroughputBudget } from "./limits/throughput";
import { FaultInjector, type FaultSpec } from "./limits/faults";
import type { Clock } from "./engine/clock";
import type { ItemsChanged } from "./engine/account";
import type { CostFeatures } from "./limits/request-units";

export interface CosmosOptions {
  /** Port on 127.0.0.1; 0 (default) picks a free one. */
  port?: number;
  host?: string;
  /** Collection calls a script may make before `isAccepted` turns false (default 5000). */
  scriptOperationLimit?: number;
  /** A script running longer is stopped and rolled back with 408 (default 5000 ms, as the service). */
  scriptTimeoutMs?: number;
  /** Keep the data here across restarts (journal + snapshot); in memory only when absent. */
  dataDir?: string;
  /** Physical partitions (key ranges) of every new container, as a scaled account has them (default 4). */
  partitions?: number;
  /**
   * Item operations each physical partition serves per second before answering 429, as a
   * partition out of request units does (unlimited by default).
   */
  operationsPerSecond?: number;
  /** Azure's failures injected into data-plane requests (off when absent); see `parseFaultSpec`. */
  faults?: FaultSpec;
  /** Items an unindexed scan reads per page before it returns, possibly short, with a continuation (default 20,000). */
  scanPageItems?: number;
  /** The account key (base64) requests must be signed with; LOCAL_COSMOS_KEY when absent. */
  key?: string;
  /** Start even when a data file is damaged: it is moved aside and only its part before the damage is loaded (`--recover-data`). */
  recoverDamagedData?: boolean;
  /** Journal size from which a snapshot is written (default 64 MiB, at least twice the last snapshot). */
  compactAfterBytes?: number;
  /** What `_ts`, TTL expiry and the throughput budget read (the system clock by default; tests move a manual one). Signatures are checked against the wall clock. */
  clock?: Clock;
  /** Host names answered besides loopback ones (LOCAL_ALLOWED_HOSTS; `*` any): a foreign Host is refused (DNS rebinding). */
  allowedHosts?: readonly string[];
  /** Told what each request did, in the cost model's units, and what it was charged (the calibration reads it). */
  onCharged?: (features: CostFeatures, charge: number) => void;
}

export interface RunningCosmos {
  endpoint: string;
  key: string;
  /** What the fault injector has injected so far, by effect (absent without faults). */
  faults?: FaultInjector;
  /**
   * Calls `listener` after each committed write to a container's items, whoever made it: a change
   * feed reader in this process can then wait for changes rather than poll for them. Returns the
   * function that stops the calls.
   */
  watchItems(listener: (change: ItemsChanged) => void): () => void;
  stop(): Promise<void>;
}

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
