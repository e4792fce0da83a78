import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { CosmosClient } from "@azure/cosmos";
import { parseFaultSpec } from "embedded-cosmos";
import { random } from "../local/random";
import { containerDefinitions } from "../src/store/definitions";
import { ChaosClient } from "./api";
import { checkGuarantees } from "./check";
import { injectedFaults, runHost, START_SCRIPT, type HostProcess } from "./host";
import { Saboteur } from "./saboteur";
import type { OpsFigures } from "../src/telemetry/ops-figures";
import { emptyAcknowledged, Workload } from "./workload";

/** Azure's failures at rates a busy account sees on a bad day. */
const DEFAULT_FAULTS = "429=20:0.03,503:0.01@read+query+changefeed,408:0.01@write+batch,449:0.005@write,sproc-timeout:0.02,latency=15:0.05";

export interface ChaosOptions {
  seconds: number;
  seed: number;
  /** Fault spec for the embedded server (`--faults` syntax); DEFAULT_FAULTS when absent, none when "". */
  faults?: string;
  /** Virtual users acting at once. */
  users?: number;
  /** A host kill (alternately kill -9 and Ctrl-C) and restart this often. */
  restartEverySeconds?: number;
  /** How long the pipeline may take to settle before the guarantees must hold. */
  settleSeconds?: number;
  /** Seconds between acts of sabotage (a malformed document written behind the API, a lease deleted or garbled, and a hostile request); 0 for none (default 2). */
  sabotageEverySeconds?: number;
  log?: (line: string) => void;
  /** Told the API URL of each host incarnation as it starts (to watch its operations page, say). */
  onHost?: (apiUrl: string) => void;
}

export interface ChaosResult {
  operations: number;
  requests: number;
  faults: number;
  restarts: number;
  /** Malformed documents written behind the API's back, and leases damaged. */
  sabotage: number;
  /** Requests an attacker would send (each must be refused), one with every act of sabotage. */
  hostileRequests: number;
  violations: string[];
  seconds: number;
  settleSeconds: number;
  /** What the clients were told, and so what the checker demanded. */
  acknowledged: { users: number; posts: number; deletedPosts: number; comments: number; likes: number };
}

/** One host process on the run's data directory, with the faults of this incarnation (re-seeded per restart). */
/** The running host's operations figures in a few words (those of its current incarnation), or nothing if it cannot say now. */
async function opsSummary(apiUrl: string | undefined): Promise<string> {
  if (!apiUrl) return "";
  try {
    const response = await fetch(apiUrl.replace(/\/api$/, "/local/ops"), { signal: AbortSignal.timeout(2000) });
    if (!response.ok) return "";
    const ops = (await response.json()) as OpsFigures;
    const lag = Math.max(0, ...ops.lag.map((l) => l.items ?? 0));
    return `; ops: ${ops.requestsPerSecond.toFixed(1)} req/s, ${Math.round(ops.cosmos.requestUnits)} RU, ${ops.cosmos.throttled} throttled, ${ops.statusClasses["5xx"] ?? 0} 5xx, lag ≤ ${lag} changes`;
  } catch {
    return "";
  }
}

class Incarnation {
  constructor(
    readonly process: HostProcess,
    readonly url: string,
    readonly cosmosEndpoint: string,
    readonly cosmosKey: string,
  ) {}

  static async start(dataDir: string, faults: string | undefined): Promise<Incarnation> {
    const args = [START_SCRIPT, "--data-dir", dataDir, ...(faults ? ["--faults", faults] : [])];
    const host = runHost("node", args);
    const ready = await host.ready;
    return new Incarnation(host, ready.url, ready.cosmosEndpoint, ready.cosmosKey!);
  }

  /** Stops it by `signal`; returns the faults its server injected (read just before). */
  async stop(signal: NodeJS.Signals): Promise<number> {
    const faults = await injectedFaults(this.cosmosEndpoint);
    this.process.child.kill(signal);
    await this.process.exited;
    return faults;
  }
}

/**
 * The randomized run: virtual users over HTTP against `npm start`'s host with faults on, the
 * host killed and restarted on its data directory meanwhile; then a host without faults, time
 * for the pipeline to settle, and every guarantee checked against the data.
 */
export async function runChaos(options: ChaosOptions): Promise<ChaosResult> {
  const log = options.log ?? (() => {});
  const rng = random(options.seed);
  const spec = options.faults === "" ? undefined : parseFaultSpec(options.faults ?? DEFAULT_FAULTS);
  const faultsFor = (incarnation: number) => spec && JSON.stringify({ ...spec, seed: options.seed * 1000 + incarnation });
  const dataDir = mkdtempSync(join(tmpdir(), "chaos-"));
  const startHost = async (faults: string | undefined) => {
    const started = await Incarnation.start(dataDir, faults);
    options.onHost?.(started.url);
    return started;
  };
  let host: Incarnation | undefined = await startHost(faultsFor(0));
  const api = new ChaosClient(() => host?.url, 20_000);
  const violations: string[] = [];
  const workload = new Workload(api, rng, emptyAcknowledged(), (violation) => violations.push(violation), (options.users ?? 8) * 3);
  const started = Date.now();
  const deadline = started + options.seconds * 1000;
  let faults = 0;
  let restarts = 0;

  const saboteur = new Saboteur(
    () => host && { endpoint: host.cosmosEndpoint, key: host.cosmosKey },
    random(options.seed + 7),
    containerDefinitions.databaseName,
    () => host?.url,
  );
  const sabotage = (async () => {
    const every = (options.sabotageEverySeconds ?? 2) * 1000;
    while (every > 0 && Date.now() + every < deadline) {
      await new Promise((resolve) => setTimeout(resolve, every));
      await saboteur.act();
    }
  })();
  // Each progress line also reads the host's operations figures (what #/ops shows, live).
  const progress = setInterval(
    () =>
      void opsSummary(host?.url).then((ops) =>
        log(`chaos: ${Math.round((Date.now() - started) / 1000)} s, ${workload.operations} operations, ${api.requests} requests, ${restarts} restarts${ops}`),
      ),
    5000,
  );
  const restarter = (async () => {
    const every = (options.restartEverySeconds ?? 20) * 1000;
    while (Date.now() + every < deadline) {
      await new Promise((resolve) => setTimeout(resolve, every));
      const signal = restarts % 2 === 0 ? "SIGKILL" : "SIGINT";
      const stopping = host!;
      host = undefined;
      faults += await stopping.stop(signal);
      restarts++;
      host = await startHost(faultsFor(restarts));
      log(`chaos: host restarted after ${signal} (${restarts})`);
    }
  })();
  const users = Array.from({ length: options.users ?? 8 }, (_, i) => `u${i + 1}`);
  await Promise.all(
    users.map(async (user) => {
      while (Date.now() < deadline) {
        await workload.step(user);
        await new Promise((resolve) => setTimeout(resolve, rng() * 20));
      }
    }),
  );
  await restarter;
  await sabotage;
  saboteur.dispose();
  clearInterval(progress);
  faults += await host!.stop("SIGINT");

  // Settle without faults: the pipeline catches up, then every guarantee must hold.
  log(`chaos: workload done (${workload.operations} operations); checking the guarantees while the pipeline settles`);
  host = await startHost(undefined);
  const client = new CosmosClient({ endpoint: host.cosmosEndpoint, key: host.cosmosKey, connectionPolicy: { enableEndpointDiscovery: false } });
  const settleStarted = Date.now();
  let remaining: string[];
  try {
    for (;;) {
      remaining = await checkGuarantees(client, containerDefinitions.databaseName, api, workload.state, saboteur.malformed);
      if (remaining.length === 0 || Date.now() - settleStarted > (options.settleSeconds ?? 90) * 1000) break;
      await new Promise((resolve) => setTimeout(resolve, 2000));
    }
  } finally {
    client.dispose();
    await host.stop("SIGINT");
    rmSync(dataDir, { recursive: true, force: true });
  }
  violations.push(...api.serverErrors, ...saboteur.unrefused, ...remaining);
  const state = workload.state;
  const acknowledged = {
    users: [...state.users.values()].filter((user) => user.username).length,
    posts: state.posts.size,
    deletedPosts: [...state.posts.values()].filter((post) => post.deleted).length,
    comments: state.comments.size,
    likes: [...state.likes.values()].filter((liked) => liked === true).length,
  };
  return {
    operations: workload.operations,
    requests: api.requests,
    faults,
    restarts,
    sabotage: saboteur.acts,
    hostileRequests: saboteur.hostileRequests,
    violations,
    seconds: options.seconds,
    settleSeconds: Math.round((Date.now() - settleStarted) / 1000),
    acknowledged,
  };
}

/** `npm run chaos -- --minutes N --seed S [--faults spec] [--users N] [--restart-every S] [--out file.json]` */
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      minutes: { type: "string", default: "1" },
      seconds: { type: "string" },
      seed: { type: "string", default: "1" },
      faults: { type: "string" },
      users: { type: "string", default: "8" },
      "restart-every": { type: "string", default: "20" },
      out: { type: "string" },
    },
  });
  const seconds = values.seconds !== undefined ? Number(values.seconds) : Number(values.minutes) * 60;
  const numbers = { seconds, seed: Number(values.seed), users: Number(values.users), restartEverySeconds: Number(values["restart-every"]) };
  for (const [name, value] of Object.entries(numbers))
    if (!Number.isInteger(value) || value < 0) throw new Error(`--${name} must be a whole number, got ${value}`);
  const result = await runChaos({
    ...numbers,
    faults: values.faults,
    log: (line) => console.log(line),
    onHost: (url) => console.log(`chaos: host up, its operations page live at ${url.replace(/\/api$/, "/")}#/ops`),
  });
  for (const violation of result.violations.slice(0, 50)) console.log(`  violation: ${violation}`);
  if (values.out) writeFileSync(values.out, JSON.stringify({ ...result, faultSpec: values.faults ?? DEFAULT_FAULTS, seed: numbers.seed }, null, 2));
  const { acknowledged: a } = result;
  console.log(
    `chaos: acknowledged ${a.users} users, ${a.posts} posts (${a.deletedPosts} deleted), ${a.comments} comments, ${a.likes} likes; settled in ${result.settleSeconds} s`,
  );
  console.log(
    `chaos: ${result.operations} operations, ${result.faults} faults, ${result.restarts} restarts, ${result.sabotage} acts of sabotage, ${result.hostileRequests} hostile requests, ${result.violations.length} violations`,
  );
  process.exit(result.violations.length === 0 ? 0 : 1);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(`chaos failed: ${(error as Error).message}`);
    process.exit(2);
  });
}
