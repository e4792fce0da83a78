import type { Clock } from "./engine/clock";
import type { ItemsChanged } from "./engine/account";
import type { FaultInjector, FaultSpec } from "./limits/faults";
import type { CostFeatures } from "./limits/request-units";

/** How the embedded server is started, and the handle a started one gives (in this thread or on its own). */

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
