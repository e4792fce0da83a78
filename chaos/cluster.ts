import { join } from "node:path";
import { injectedFaults, runAccount, runHost, START_SCRIPT, type HostProcess } from "./host";

/**
 * The hosts a chaos run drives. One instance is `npm start` as a user runs it, with its own
 * embedded Cosmos DB server, restarted whole. Several instances are what Azure runs when it
 * scales the app out: host processes that share one embedded server (a process of its own) and
 * one lease container and one durable task hub, each with its own name on the leases, killed
 * and restarted one at a time while the others serve.
 */
export interface Cluster {
  /** The API base URL of a running instance, chosen at random; undefined while none is up. */
  url(): string | undefined;
  /** The one account every instance uses; undefined while it is down. */
  cosmos(): { endpoint: string; key: string } | undefined;
  /** Stops one instance, chosen at random, by `signal`, and starts it again. */
  restartOne(signal: NodeJS.Signals): Promise<void>;
  /** Stops every instance and the account (Ctrl-C); the faults the account injected in all. */
  stop(): Promise<number>;
}

export interface ClusterOptions {
  dataDir: string;
  instances: number;
  /** The faults of each start of the account (`--faults` syntax, seeded per start); none when undefined. */
  faultsFor: (start: number) => string | undefined;
  /** Draws which instance to restart. */
  rng: () => number;
  /** The API URL of each instance as it starts. */
  onHost?: (apiUrl: string) => void;
  /** Extra environment of every host (the dev-token secret with a shared account). */
  env?: Record<string, string>;
}

/** A host process that is up: its API and the account it printed. */
interface Running {
  process: HostProcess;
  url: string;
  endpoint: string;
  key?: string;
}

async function started(process: HostProcess): Promise<Running> {
  const ready = await process.ready;
  return { process, url: ready.url, endpoint: ready.cosmosEndpoint, key: ready.cosmosKey };
}

async function stopped(running: Running, signal: NodeJS.Signals): Promise<void> {
  running.process.child.kill(signal);
  await running.process.exited;
}

/** `npm start` alone, with its own embedded server: each restart is a new incarnation of both, with faults seeded anew. */
async function singleHost(options: ClusterOptions): Promise<Cluster> {
  let starts = 0;
  let faults = 0;
  const start = async () => {
    const spec = options.faultsFor(starts++);
    const host = await started(runHost("node", [START_SCRIPT, "--data-dir", options.dataDir, ...(spec ? ["--faults", spec] : [])], options.env));
    options.onHost?.(host.url);
    return host;
  };
  let host: Running | undefined = await start();
  const stop = async (signal: NodeJS.Signals) => {
    const stopping = host!;
    host = undefined;
    faults += await injectedFaults(stopping.endpoint);
    await stopped(stopping, signal);
  };
  return {
    url: () => host?.url,
    cosmos: () => host && { endpoint: host.endpoint, key: host.key! },
    async restartOne(signal) {
      await stop(signal);
      host = await start();
    },
    async stop() {
      await stop("SIGINT");
      return faults;
    },
  };
}

/** N host processes (1 too) on one account process; one instance at a time is restarted, the account stays up. */
export async function sharedAccountCluster(options: ClusterOptions): Promise<Cluster & { urls(): string[]; kill(instance: number): Promise<void> }> {
  // Its port may change from one run phase to the next: lease ids name the account's host, not its port.
  const account = await started(runAccount(join(options.dataDir, "cosmos"), options.faultsFor(0)));
  const key = account.key!;
  const startInstance = async (i: number) => {
    const env = { ...options.env, COSMOS_ENDPOINT: account.endpoint, COSMOS_KEY: key, LOCAL_INSTANCE_NAME: `instance-${i}` };
    const host = await started(runHost("node", [START_SCRIPT, "--data-dir", join(options.dataDir, `instance-${i}`)], env));
    options.onHost?.(host.url);
    return host;
  };
  // One after another: each provisions the account (idempotent), and a first start should not race itself.
  const hosts: (Running | undefined)[] = [];
  for (let i = 0; i < options.instances; i++) hosts.push(await startInstance(i));
  const urls = () => hosts.filter((host): host is Running => host !== undefined).map((host) => host.url);
  return {
    url() {
      const up = urls();
      return up.length === 0 ? undefined : up[Math.floor(options.rng() * up.length)];
    },
    cosmos: () => ({ endpoint: account.endpoint, key }),
    urls,
    async kill(i) {
      const host = hosts[i];
      hosts[i] = undefined;
      if (host) await stopped(host, "SIGKILL");
    },
    async restartOne(signal) {
      const i = Math.floor(options.rng() * hosts.length);
      const host = hosts[i];
      if (!host) return;
      hosts[i] = undefined;
      await stopped(host, signal);
      hosts[i] = await startInstance(i);
    },
    async stop() {
      await Promise.all(hosts.splice(0).map((host) => host && stopped(host, "SIGINT")));
      const faults = await injectedFaults(account.endpoint);
      await stopped(account, "SIGINT");
      return faults;
    },
  };
}

/** Starts `options.instances` instances (1: `npm start` alone) on the run's data directory. */
export function startCluster(options: ClusterOptions): Promise<Cluster> {
  return options.instances <= 1 ? singleHost(options) : sharedAccountCluster(options);
}
