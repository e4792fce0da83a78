import { measureScans } from "./scan";
import { measureHostile } from "./hostile";
import { apiOverhead } from "./api-overhead";
import { cpus, platform, release, totalmem } from "node:os";
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
import { measurePeer } from "./peer";
import { compareWithFloors } from "./floors";
import { measureSearch } from "./search";
import { measurePriority } from "./priority";
import { measureInstances } from "./instances";
import { compareWithBaseline, prepareBaseline } from "./baseline";
import { row, type Report } from "./report";
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
  /** The embedded server beside its peer: seconds per operation, concurrency and server, and rounds (0 seconds skips). */
  peer: { seconds: number; rounds: number; items?: number };
  /** The app on 1..N instances sharing one account (0 skips it), and the rebalance after a kill (slow: the leases' 60 s expiration). */
  instances?: { upTo: number; seconds: number; rebalance: boolean };
  /** Readers beside a throttled background, with priorities and without (bench/priority.ts): seconds per run; 0 skips it. */
  prioritySeconds: number;
  /** Each route under a concurrent load beside the platform's floor (bench/floors.ts); 0 seconds skips it. */
  floors: { seconds: number; rounds: number; warmupSeconds: number };
  /** Every route under a concurrent load beside a baseline's build (a git ref), in one run; absent: skipped. */
  baseline?: { ref: string; seconds: number; rounds: number; warmupSeconds: number };
}

/** Loads the dataset in both layouts, runs every request K times per strategy, and reports. */
export async function runBenchmark(options: BenchOptions): Promise<Report> {
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
    const search = await measureSearch(store, dataset, options.iterations, partitionCounts);
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
      search,
    };
    return report;
  } finally {
    store.dispose();
    await embedded?.stop();
  }
}

/** One phase of the run: its name, whether these options run it, and the work. */
interface Phase {
  name: string;
  runs: boolean;
  work(): Promise<void>;
}

/**
 * The request benchmark, then every figure these options ask for, phase by phase: each says
 * when it starts (`[3/9] the pipeline...`) and how long it took, so a long run is never silent.
 */
export async function runAll(options: BenchOptions): Promise<Report> {
  const log = (line: string) => options.progress && console.error(line);
  const local = !options.endpoint;
  let report!: Report;
  let baseline: ({ ref: string } & ReturnType<typeof prepareBaseline>) | undefined;
  const phases: Phase[] = [
    { name: "the article's ten requests, V1 beside V3", runs: true, work: async () => void (report = await runBenchmark(options)) },
    {
      name: `the pipeline (a rename of ${options.pipeline.renameItems} items)`,
      runs: options.pipeline.renameItems > 0,
      work: async () => void (report.pipeline = await measurePipeline(options.pipeline)),
    },
    {
      name: "the embedded server in a process of its own",
      runs: local && options.serverCommentSeconds > 0,
      work: async () =>
        void (report.server = await measureServer({ users: options.users, seed: options.seed, partitions: 4, commentSeconds: options.serverCommentSeconds })),
    },
    {
      name: "scale: the micro-cache under load and a like storm",
      runs: local && options.scaleSeconds > 0,
      work: async () => void (report.scale = await measureScale({ loadSeconds: options.scaleSeconds, connections: 32, likers: options.stormLikers })),
    },
    {
      name: `unindexed scans of up to ${options.scanItems} items`,
      runs: local && options.scanItems > 0,
      work: async () => void (report.scans = await measureScans([options.scanItems / 4, options.scanItems / 2, options.scanItems])),
    },
    {
      name: `point reads alone and beside hostile queries (${options.hostileSeconds} s each)`,
      runs: local && options.hostileSeconds > 0,
      work: async () => void (report.hostile = await measureHostile(options.hostileSeconds)),
    },
    {
      name: `the embedded server beside its peer (${options.peer.rounds} rounds of ${options.peer.seconds} s per operation)`,
      runs: local && options.peer.seconds > 0,
      work: async () => void (report.peer = await measurePeer({ ...options.peer, onProgress: log })),
    },
    {
      // The baseline's checkout, for the figures that put it beside today's (cold start, idle, routes).
      name: `the baseline's build (${options.baseline?.ref})`,
      runs: options.baseline !== undefined,
      work: async () => void (baseline = { ref: options.baseline!.ref, ...prepareBaseline(projectRoot(), options.baseline!.ref, log) }),
    },
    {
      name: `cold start (${options.coldStartSamples} fresh processes per variant)`,
      runs: options.coldStartSamples > 0,
      work: async () => void (report.coldStart = await measureColdStart(projectRoot(), options.coldStartSamples, baseline)),
    },
    {
      name: `idle CPU (${options.idleSettleSeconds} s to settle, ${options.idleSeconds} s watched)`,
      runs: local && options.idleSeconds > 0,
      work: async () =>
        void (report.idle = await measureIdle(projectRoot(), { seconds: options.idleSeconds, settleSeconds: options.idleSettleSeconds, baseline })),
    },
    {
      name: `1 to ${options.instances?.upTo} instances on one account`,
      runs: local && (options.instances?.upTo ?? 0) > 0,
      work: async () => void (report.instances = await measureInstances(options.instances!)),
    },
    {
      name: `readers beside a throttled background, with priorities and without (4 runs of ${options.prioritySeconds} s)`,
      runs: local && options.prioritySeconds > 0,
      work: async () => void (report.priority = await measurePriority(options.prioritySeconds)),
    },
    {
      name: `each route beside the platform's floor (${options.floors.rounds} alternating rounds of ${options.floors.seconds} s)`,
      runs: local && options.floors.seconds > 0,
      work: async () => void (report.floors = await compareWithFloors(projectRoot(), { ...options.floors, connections: 32, log })),
    },
    {
      name: `every route beside ${options.baseline?.ref}`,
      runs: local && options.baseline !== undefined,
      work: async () => void (report.baseline = await compareWithBaseline(projectRoot(), { ...options.baseline!, ...baseline!, connections: 32, log })),
    },
  ];
  const running = phases.filter((phase) => phase.runs);
  for (const [index, phase] of running.entries()) {
    const started = performance.now();
    log(`[${index + 1}/${running.length}] ${phase.name}...`);
    await phase.work();
    log(`[${index + 1}/${running.length}] ${phase.name}: done in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  }
  return report;
}
