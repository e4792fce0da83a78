import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { commandLine, defineCommand, refuse } from "../local/command-line";
import { formatSummary, formatTable } from "./report";
import { runAll } from "./run-all";

const COMMAND = defineCommand({
  name: "npm run bench",
  summary:
    "Measures the ten requests in the article's V1 and V3 models (latency, requests, partitions, RU), then the pipeline, the embedded server (alone and beside its peer), scale, scans, hostile queries, readers under throttling, cold start, idle CPU and each route beside the platform's floor, phase by phase; prints a summary of each figure against its target and writes the full tables to a file. Quick by default (about four and a half minutes on 2 cores); --full for the sizes the targets are set for.",
  flags: {
    full: { type: "boolean", default: false, description: "the full run (several minutes on 2 cores): the sizes after --full below" },
    report: { type: "string", default: "dist/bench-report.md", value: "file", description: "where the full tables go (the terminal shows the summary)" },
    users: { type: "string", value: "n", description: "users in the generated dataset (quick 20, --full 200)" },
    seed: { type: "string", default: "42", value: "n", description: "the dataset's random seed" },
    iterations: { type: "string", value: "n", description: "calls per request and model (quick 5, --full 20)" },
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
    "pipeline-items": {
      type: "string",
      value: "n",
      description: "items a username change rewrites (0 skips the pipeline figures) (quick 2,000, --full 10,000)",
    },
    "pipeline-posts": { type: "string", value: "n", description: "posts those items are spread over (quick 100, --full 500)" },
    "server-seconds": { type: "string", value: "s", description: "the embedded server's comment load (0 skips; quick 3, --full 10)" },
    "cold-start-samples": { type: "string", value: "n", description: "fresh processes for the cold start (0 skips; quick 5, --full 15)" },
    "idle-seconds": { type: "string", value: "s", description: "npm start watched idle for its CPU (0 skips; quick 10, --full 30)" },
    "idle-settle-seconds": { type: "string", value: "s", description: "seconds after start before the idle watch (quick 10, --full 30)" },
    "scale-seconds": { type: "string", value: "s", description: "each concurrent load of the scale figures (0 skips; quick 2, --full 5)" },
    "storm-likers": { type: "string", value: "n", description: "likers in the like storm (quick 200, --full 1,000)" },
    "scan-items": { type: "string", value: "n", description: "items of the largest unindexed scan (0 skips; quick 20,000, --full 60,000)" },
    "hostile-seconds": { type: "string", value: "s", description: "point reads alone_ then beside hostile queries (0 skips; quick 2, --full 5)" },
    "peer-seconds": { type: "string", value: "s", description: "each operation on the embedded server and on its peer (0 skips; quick 1, --full 2)" },
    "peer-rounds": { type: "string", value: "n", description: "alternating rounds of the peer comparison (quick 1, --full 3)" },
    "priority-seconds": { type: "string", value: "s", description: "each run of readers beside a throttled background (0 skips; quick 2, --full 10)" },
    "floor-seconds": { type: "string", value: "s", description: "load per route, on the app and on the platform's floor (0 skips; quick 2, --full 5)" },
    "floor-rounds": { type: "string", value: "n", description: "alternating rounds per route beside the floor (quick 1, --full 3)" },
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
    "npm run bench -- --full",
    "npm run bench -- --users 20 --idle-seconds 0 --cold-start-samples 0",
    "npm run bench -- --baseline origin/main --out bench.json",
  ],
});

/** Each size flag's quick and full value: the quick run by default, the full one with --full. */
const SIZES = {
  users: [20, 200],
  iterations: [5, 20],
  "pipeline-items": [2_000, 10_000],
  "pipeline-posts": [100, 500],
  "server-seconds": [3, 10],
  "cold-start-samples": [5, 15],
  "idle-seconds": [10, 30],
  "idle-settle-seconds": [10, 30],
  "scale-seconds": [2, 5],
  "storm-likers": [200, 1_000],
  "scan-items": [20_000, 60_000],
  "hostile-seconds": [2, 5],
  "peer-seconds": [1, 2],
  "peer-rounds": [1, 3],
  "priority-seconds": [2, 10],
  "floor-seconds": [2, 5],
  "floor-rounds": [1, 3],
} as const;

async function main(): Promise<void> {
  const { values: given } = commandLine(COMMAND);
  const sized = Object.fromEntries(Object.entries(SIZES).map(([name, [quick, full]]) => [name, String(given.full ? full : quick)]));
  const values = { ...sized, ...Object.fromEntries(Object.entries(given).filter(([, value]) => value !== undefined)) } as typeof given;
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
    prioritySeconds: number("priority-seconds", values["priority-seconds"], 0, 600),
    floors: {
      seconds: number("floor-seconds", values["floor-seconds"], 0, 600),
      rounds: number("floor-rounds", values["floor-rounds"], 1, 20),
      // V8 optimizes each system's hot path in its first seconds of load: not measured.
      warmupSeconds: given.full ? 5 : 2,
    },
    peer: { seconds: number("peer-seconds", values["peer-seconds"], 0, 600), rounds: number("peer-rounds", values["peer-rounds"], 1, 20) },
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
  const tables = `${formatTable(report)}\n\n(dataset loaded in ${report.meta.loadSeconds.toFixed(1)} s; ${report.meta.machine}; Node ${report.meta.node})\n`;
  mkdirSync(dirname(values.report!), { recursive: true });
  writeFileSync(values.report!, tables);
  console.log(`${formatSummary(report)}\n\nThe full tables: ${values.report}`);
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
