import { writeFileSync } from "node:fs";
import { measureScans } from "./scan";
import { measureHostile } from "./hostile";
import { apiOverhead } from "./api-overhead";
import { cpus, platform, release, totalmem } from "node:os";
import { commandLine, defineCommand, refuse } from "../local/command-line";
import { startCosmos, type RunningCosmos } from "embedded-cosmos";
import { random } from "../local/random";
import { createStore } from "../src/store/client";
import { projectRoot } from "../src/store/script-files";
import { provision } from "../src/store/provision";
import { ProgressBar } from "../scripts/progress";
import { createV1Containers, generateDataset, itemCount, loadV1, loadV3 } from "./dataset";
import { measureCall, summarize, type CallCost, type PartitionCounts } from "./measure";
import { measurePipeline } from "./pipeline";
import { measureColdStart } from "./cold-start";
import { measureIdle } from "./idle";
import { measureScale } from "./scale";
import { measureServer } from "./server";
import { measureInstances } from "./instances";
import { compareWithBaseline, prepareBaseline } from "./baseline";
import { formatTable, row, type Report } from "./report";
import { scenarios } from "./scenarios";
import { V1Strategy } from "./v1";

export interface BenchOptions {
  users: number;
  seed: number;
  iterations: number;
  feedSize: number;
  /** A real account or emulator; the embedded server when absent. */
  endpoint?: string;
  /** Account key; without one, Entra ID (DefaultAzureCredential). */
  key?: string;
  database: string;
  /** Progress bars on stderr. */
  progress: boolean;
  /** Measure the local pipeline (posts made visible, rename of `renameItems` items in `renamePosts` posts); 0 items skips it. */
  pipeline: { posts: number; renameItems: number; renamePosts: number };
  /** Measure the embedded server in a process of its own, with a comment load this long; 0 skips it. */
  serverCommentSeconds: number;
  /** Fresh processes per variant for the cold-start figure; 0 skips it. */
  coldStartSamples: number;
  /** Seconds the idle local system is watched for its CPU; 0 skips it. */
  idleSeconds: number;
  /** Seconds after start before the idle watch begins (start-up's own work is not idleness). */
  idleSettleSeconds: number;
  /** Seconds of each concurrent load of the scale figures; 0 skips them. */
  scaleSeconds: number;
  /** Likers in the like storm of the scale figures. */
  stormLikers: number;
  /** Items of the largest unindexable-scan figure (0 skips it); a quarter and a half are measured too. */
  scanItems: number;
  /** Seconds of point reads alone, and as many beside a client sending hostile queries (0 skips). */
  hostileSeconds: number;
  /** The app on 1..N instances sharing one account (0 skips it), and the rebalance after a kill (slow: the leases' 60 s expiration). */
  instances?: { upTo: number; seconds: number; rebalance: boolean };
  /** Every route under a concurrent load beside a baseline's build (a git ref), in one run; absent: skipped. */
  baseline?: { ref: string; seconds: number; rounds: number; warmupSeconds: number };
}

/** Loads the dataset in both layouts, runs every request K times per strategy, and reports. */
async function runBenchmark(options: BenchOptions): Promise<Report> {
  let embedded: RunningCosmos | undefined;
  const endpoint = options.endpoint ?? (embedded = await startCosmos()).endpoint;
  const key = options.key ?? embedded?.key;
  // The micro-cache off: these figures are what each request costs Cosmos DB (the scale figures measure the cache).
  const store = createStore({ cosmos: { endpoint, key, databaseName: options.database }, feedCacheMs: 0 });
  try {
    await provision(store.client, options.database);
    const v1Containers = await createV1Containers(store.database);
    const dataset = generateDataset(options.users, options.seed);
    const items = itemCount(dataset);

    const started = performance.now();
    // V3 also writes one short-form copy per post into `users`.
    const bar = options.progress ? new ProgressBar("loading V3 + V1", 2 * items + dataset.posts.length) : undefined;
    await loadV3(store, dataset, (n) => bar?.tick(n));
    await loadV1(v1Containers, dataset, (n) => bar?.tick(n));
    bar?.finish();
    const loadSeconds = (performance.now() - started) / 1000;

    const partitionCounts: PartitionCounts = {
      users: 2 * dataset.users.length, // profiles and username claims
      posts: dataset.posts.length,
      feed: 1,
      v1_users: dataset.users.length,
      v1_posts: dataset.posts.length,
      leases: 1,
    };
    const pick = random(options.seed + 1);
    const list = scenarios(store, dataset, new V1Strategy(v1Containers), pick, options.feedSize);
    // Against the embedded server, request units are its cost model's (docs/request-units.md); against an account, Azure's.
    const measuresRequestUnits = true;
    const rows = [];
    const runBar = options.progress ? new ProgressBar("measuring", list.length * (options.iterations + 1) * 2) : undefined;
    for (const scenario of list) {
      // One unmeasured call per strategy warms the SDK's caches (container, partition key ranges).
      await scenario.v1(options.iterations);
      await scenario.v3(options.iterations);
      runBar?.tick(2);
      const v1: CallCost[] = [];
      const v3: CallCost[] = [];
      for (let i = 0; i < options.iterations; i++) {
        v1.push(await measureCall(() => scenario.v1(i), partitionCounts));
        v3.push(await measureCall(() => scenario.v3(i), partitionCounts));
        runBar?.tick(2);
      }
      rows.push(row(scenario.id, scenario.name, summarize(v1), summarize(v3), measuresRequestUnits));
    }
    runBar?.finish();
    const overhead = await apiOverhead(
      store,
      options.iterations,
      dataset.posts.map((p) => p.postId),
      options.feedSize,
      pick,
    );
    const cpu = cpus();
    const report: Report = {
      meta: {
        date: new Date().toISOString(),
        machine: `${cpu.length} x ${cpu[0]?.model ?? "cpu"}, ${Math.round(totalmem() / 2 ** 30)} GiB, ${platform()} ${release()}`,
        node: process.version,
        target: embedded ? "embedded Cosmos DB server (in process, loopback)" : new URL(endpoint).host,
        measuresRequestUnits,
        requestUnits: embedded ? "model" : "measured",
        users: dataset.users.length,
        posts: dataset.posts.length,
        items,
        seed: options.seed,
        iterations: options.iterations,
        loadSeconds,
      },
      rows,
      apiOverhead: overhead,
    };
    return report;
  } finally {
    store.dispose();
    await embedded?.stop();
  }
}

/** The request benchmark, then (unless skipped) the local pipeline figures. */
export async function runAll(options: BenchOptions): Promise<Report> {
  const log = (line: string) => options.progress && console.error(line);
  const report = await runBenchmark(options);
  if (options.pipeline.renameItems > 0) report.pipeline = await measurePipeline(options.pipeline);
  if (!options.endpoint && options.serverCommentSeconds > 0) {
    report.server = await measureServer({ users: options.users, seed: options.seed, partitions: 4, commentSeconds: options.serverCommentSeconds });
  }
  if (!options.endpoint && options.scaleSeconds > 0)
    report.scale = await measureScale({ loadSeconds: options.scaleSeconds, connections: 32, likers: options.stormLikers });
  if (!options.endpoint && options.scanItems > 0) report.scans = await measureScans([options.scanItems / 4, options.scanItems / 2, options.scanItems]);
  if (!options.endpoint && options.hostileSeconds > 0) {
    log(`point reads alone and beside hostile queries (${options.hostileSeconds} s each)`);
    report.hostile = await measureHostile(options.hostileSeconds);
  }
  // The baseline's checkout, for the figures that put it beside today's (cold start, idle, routes).
  const baseline = options.baseline && { ref: options.baseline.ref, ...prepareBaseline(projectRoot(), options.baseline.ref, log) };
  if (options.coldStartSamples > 0) report.coldStart = await measureColdStart(projectRoot(), options.coldStartSamples, baseline);
  if (!options.endpoint && options.idleSeconds > 0)
    report.idle = await measureIdle(projectRoot(), { seconds: options.idleSeconds, settleSeconds: options.idleSettleSeconds, baseline });
  if (!options.endpoint && options.instances && options.instances.upTo > 0) report.instances = await measureInstances(options.instances);
  if (!options.endpoint && options.baseline && baseline)
    report.baseline = await compareWithBaseline(projectRoot(), {
      ...options.baseline,
      ...baseline,
      connections: 32,
      log,
    });
  return report;
}

const COMMAND = defineCommand({
  name: "npm run bench",
  summary:
    "Measures the ten requests in the article's V1 and V3 models (latency, requests, partitions, RU), then the pipeline, the embedded server, scale, scans, hostile queries, cold start and idle CPU; prints the tables.",
  flags: {
    users: { type: "string", default: "200", value: "n", description: "users in the generated dataset" },
    seed: { type: "string", default: "42", value: "n", description: "the dataset's random seed" },
    iterations: { type: "string", default: "20", value: "n", description: "calls per request and model" },
    feed: { type: "string", default: "100", value: "n", description: "posts in Q6's feed" },
    out: { type: "string", value: "file.json", description: "also write the report as JSON" },
    endpoint: {
      type: "string",
      default: process.env.COSMOS_ENDPOINT,
      value: "url",
      description: "a real account or emulator (COSMOS_ENDPOINT); the embedded server when absent",
    },
    key: { type: "string", default: process.env.COSMOS_KEY, value: "key", description: "its key (COSMOS_KEY); Entra ID when absent" },
    database: { type: "string", default: "blogbench", value: "name", description: "the database the benchmark creates" },
    "pipeline-items": { type: "string", default: "10000", value: "n", description: "items a username change rewrites (0 skips the pipeline figures)" },
    "pipeline-posts": { type: "string", default: "500", value: "n", description: "posts those items are spread over" },
    "server-seconds": { type: "string", default: "10", value: "s", description: "the embedded server's comment load (0 skips)" },
    "cold-start-samples": { type: "string", default: "15", value: "n", description: "fresh processes for the cold start (0 skips)" },
    "idle-seconds": { type: "string", default: "30", value: "s", description: "npm start watched idle for its CPU (0 skips)" },
    "idle-settle-seconds": { type: "string", default: "30", value: "s", description: "seconds after start before the idle watch" },
    "scale-seconds": { type: "string", default: "5", value: "s", description: "each concurrent load of the scale figures (0 skips)" },
    "storm-likers": { type: "string", default: "1000", value: "n", description: "likers in the like storm" },
    "scan-items": { type: "string", default: "60000", value: "n", description: "items of the largest unindexed scan (0 skips)" },
    "hostile-seconds": { type: "string", default: "5", value: "s", description: "point reads alone, then beside hostile queries (0 skips)" },
    instances: { type: "string", default: "0", value: "n", description: "the app on 1..n instances on one account (0 skips)" },
    "instance-seconds": { type: "string", default: "10", value: "s", description: "load per instance count" },
    rebalance: { type: "boolean", default: false, description: "with --instances: the rebalance after a kill (slow)" },
    baseline: { type: "string", value: "git-ref", description: "every route under load beside this ref's build, in one run" },
    "baseline-seconds": { type: "string", default: "5", value: "s", description: "load per route and round" },
    "baseline-rounds": { type: "string", default: "2", value: "n", description: "rounds per route, alternating" },
    "baseline-warmup": { type: "string", default: "10", value: "s", description: "warm-up per route and system" },
  },
  examples: [
    "npm run bench",
    "npm run bench -- --users 20 --idle-seconds 0 --cold-start-samples 0",
    "npm run bench -- --baseline origin/main --out bench.json",
  ],
});

async function main(): Promise<void> {
  const { values } = commandLine(COMMAND);
  const number = (name: string, value: string | undefined, min: number, max: number) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min || n > max) refuse(COMMAND, `--${name} must be an integer from ${min} to ${max}`);
    return n;
  };
  const report = await runAll({
    users: number("users", values.users, 1, 100_000),
    seed: number("seed", values.seed, 0, 2 ** 31),
    iterations: number("iterations", values.iterations, 1, 10_000),
    feedSize: number("feed", values.feed, 1, 100),
    endpoint: values.endpoint,
    key: values.key,
    database: values.database!,
    progress: true,
    pipeline: {
      posts: 10,
      renameItems: number("pipeline-items", values["pipeline-items"], 0, 100_000),
      renamePosts: number("pipeline-posts", values["pipeline-posts"], 1, 100_000),
    },
    serverCommentSeconds: number("server-seconds", values["server-seconds"], 0, 3600),
    coldStartSamples: number("cold-start-samples", values["cold-start-samples"], 0, 1000),
    idleSeconds: number("idle-seconds", values["idle-seconds"], 0, 3600),
    idleSettleSeconds: number("idle-settle-seconds", values["idle-settle-seconds"], 0, 3600),
    scaleSeconds: number("scale-seconds", values["scale-seconds"], 0, 600),
    stormLikers: number("storm-likers", values["storm-likers"], 1, 100_000),
    scanItems: number("scan-items", values["scan-items"], 0, 1_000_000),
    hostileSeconds: number("hostile-seconds", values["hostile-seconds"], 0, 600),
    instances: {
      upTo: number("instances", values.instances, 0, 8),
      seconds: number("instance-seconds", values["instance-seconds"], 1, 600),
      rebalance: values.rebalance === true,
    },
    baseline: values.baseline
      ? {
          ref: values.baseline,
          seconds: number("baseline-seconds", values["baseline-seconds"], 1, 600),
          rounds: number("baseline-rounds", values["baseline-rounds"], 1, 20),
          warmupSeconds: number("baseline-warmup", values["baseline-warmup"], 0, 600),
        }
      : undefined,
  });
  console.log(formatTable(report));
  console.log(`\n(dataset loaded in ${report.meta.loadSeconds.toFixed(1)} s; ${report.meta.machine}; Node ${report.meta.node})`);
  if (values.out) {
    writeFileSync(values.out, JSON.stringify(report, null, 2));
    console.log(`JSON written to ${values.out}`);
  }
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(`bench failed: ${(error as Error).stack ?? error}`);
    process.exit(1);
  });
}
