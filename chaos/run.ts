import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { commandLine, defineCommand, refuse } from "../local/command-line";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CosmosClient } from "@azure/cosmos";
import { parseFaultSpec } from "embedded-cosmos";
import { randomBytes } from "node:crypto";
import { random } from "../local/random";
import { containerDefinitions } from "../src/store/definitions";
import { ChaosClient } from "./api";
import { checkGuarantees } from "./check";
import { startCluster } from "./cluster";
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
  /**
   * Host processes at once (default 1: `npm start` with its own embedded server). With more, they
   * share one embedded server process and lease container, and one at a time is restarted.
   */
  instances?: number;
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
  acknowledged: { users: number; posts: number; deletedPosts: number; comments: number; likes: number; erasedAccounts: number };
}

/** The running host's operations figures in a few words (those of its current incarnation), or nothing if it cannot say now. */
async function opsSummary(apiUrl: string | undefined): Promise<string> {
  if (!apiUrl) return "";
  try {
    const response = await fetch(apiUrl.replace(/\/api$/, "/local/ops"), { signal: AbortSignal.timeout(2000) });
    if (!response.ok) return "";
    const ops = (await response.json()) as OpsFigures;
    const lag = Math.max(0, ...ops.lag.map((l) => l.items ?? 0));
    return `; ops: ${ops.requestsPerSecond.toFixed(1)} req/s, ${Math.round(ops.requestUnits.api + ops.requestUnits.background)} RU, ${ops.cosmos.throttled} throttled, ${ops.statusClasses["5xx"] ?? 0} 5xx, lag ≤ ${lag} changes`;
  } catch {
    return "";
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
  const instances = options.instances ?? 1;
  // Against a shared account the hosts take dev tokens signed with a secret of the run's own (the built-in one is for an embedded server).
  const devSecret = instances > 1 ? randomBytes(32).toString("base64url") : undefined;
  const clusterOf = (faults: typeof faultsFor) =>
    startCluster({
      dataDir,
      instances,
      faultsFor: faults,
      rng: random(options.seed + 11),
      onHost: options.onHost,
      env: devSecret ? { AUTH_DEV_SECRET: devSecret } : {},
    });
  let cluster = await clusterOf(faultsFor);
  const api = new ChaosClient(() => cluster.url(), 20_000, devSecret);
  const violations: string[] = [];
  // A quarter of the accounts may be erased along the way (at least one): the rest keep writing.
  const maxErasures = Math.max(1, Math.floor((options.users ?? 8) / 4));
  const workload = new Workload(api, rng, emptyAcknowledged(), (violation) => violations.push(violation), (options.users ?? 8) * 3, maxErasures);
  const started = Date.now();
  const deadline = started + options.seconds * 1000;
  let restarts = 0;

  const saboteur = new Saboteur(
    () => cluster.cosmos(),
    random(options.seed + 7),
    containerDefinitions.databaseName,
    () => cluster.url(),
    devSecret,
  );
  const sabotage = (async () => {
    const every = (options.sabotageEverySeconds ?? 2) * 1000;
    while (every > 0 && Date.now() + every < deadline) {
      await new Promise((resolve) => setTimeout(resolve, every));
      await saboteur.act();
    }
  })();
  // Each progress line also reads an instance's operations figures (what #/ops shows, live).
  const progress = setInterval(
    () =>
      void opsSummary(cluster.url()).then((ops) =>
        log(`chaos: ${Math.round((Date.now() - started) / 1000)} s, ${workload.operations} operations, ${api.requests} requests, ${restarts} restarts${ops}`),
      ),
    5000,
  );
  const restarter = (async () => {
    const every = (options.restartEverySeconds ?? 20) * 1000;
    // Due at fixed times from the start, however long each restart took on a busy machine: a run
    // makes the same number of restarts (one per `every` before the deadline) whatever the load.
    for (let due = started + every; due < deadline; due += every) {
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - Date.now())));
      const signal = restarts % 2 === 0 ? "SIGKILL" : "SIGINT";
      await cluster.restartOne(signal);
      restarts++;
      log(`chaos: ${instances > 1 ? "an instance" : "host"} restarted after ${signal} (${restarts})`);
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
  const faults = await cluster.stop();

  // Settle without faults: the pipeline catches up, then every guarantee must hold.
  log(`chaos: workload done (${workload.operations} operations); checking the guarantees while the pipeline settles`);
  cluster = await clusterOf(() => undefined);
  const account = cluster.cosmos()!;
  const client = new CosmosClient({ endpoint: account.endpoint, key: account.key, connectionPolicy: { enableEndpointDiscovery: false } });
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
    await cluster.stop();
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
    erasedAccounts: [...state.users.values()].filter((user) => user.erased).length,
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

const COMMAND = defineCommand({
  name: "npm run chaos",
  summary:
    "Runs a randomized workload against npm start with faults, kill -9 and Ctrl-C restarts, sabotage and hostile requests, then checks every guarantee; exits 1 on a violation.",
  flags: {
    minutes: { type: "string", default: "1", value: "n", description: "how long the workload runs" },
    seconds: { type: "string", value: "n", description: "the same in seconds (instead of --minutes)" },
    seed: { type: "string", default: "1", value: "n", description: "the random seed: the same seed, the same run" },
    faults: { type: "string", value: "spec", description: `the embedded server's faults (default: ${DEFAULT_FAULTS})` },
    users: { type: "string", default: "8", value: "n", description: "users the workload acts as" },
    "restart-every": { type: "string", default: "20", value: "s", description: "seconds between restarts of a host" },
    instances: { type: "string", default: "1", value: "n", description: "host processes on one account and task hub" },
    out: { type: "string", value: "file.json", description: "also write the result as JSON" },
  },
  examples: ["npm run chaos", "npm run chaos -- --minutes 2 --seed 7", "npm run chaos -- --instances 3 --out chaos.json"],
});

async function main(): Promise<void> {
  const { values } = commandLine(COMMAND);
  const seconds = values.seconds !== undefined ? Number(values.seconds) : Number(values.minutes) * 60;
  const numbers = {
    seconds,
    seed: Number(values.seed),
    users: Number(values.users),
    restartEverySeconds: Number(values["restart-every"]),
    instances: Number(values.instances),
  };
  for (const [name, value] of Object.entries(numbers))
    if (!Number.isInteger(value) || value < 0) refuse(COMMAND, `--${name} must be a whole number, got ${value}`);
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
    `chaos: acknowledged ${a.users} users (${a.erasedAccounts} erased), ${a.posts} posts (${a.deletedPosts} deleted), ${a.comments} comments, ${a.likes} likes; settled in ${result.settleSeconds} s`,
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
