import { fixed as f, type Summary } from "./measure";
import type { ScanFigures } from "./scan";
import type { HostileFigures } from "./hostile";
import { peerTable, peerVerdicts, type PeerFigures } from "./peer";
import { floorTable, floorVerdicts, type FloorFigures } from "./floors";
import { searchTable, type SearchFigures } from "./search";
import { priorityTable, priorityVerdicts, type PriorityFigures } from "./priority";
import type { PipelineFigures } from "./pipeline";
import { coldStartTable, type ColdStartFigures } from "./cold-start";
import type { IdleFigures } from "./idle";
import type { ScaleFigures } from "./scale";
import { ARTICLE_RU, EXPLAINED_BEYOND, v3Differences } from "./article";
import type { ServerFigures } from "./server";
import type { InstanceFigures } from "./instances";
import type { BaselineFigures } from "./baseline";

export interface Row {
  id: string;
  name: string;
  v1: Summary;
  v3: Summary;
  ratio: { latencyP50: number; requests: number; itemsRead: number; requestCharge: number | null };
}

export interface ApiOverhead {
  request: string;
  /** The store call alone. */
  bare: { p50: number; p95: number };
  /** The route's handler called directly: validation, metering, problem mapping, serialization. */
  handler: { p50: number; p95: number };
  /** Through the Functions worker's invocation, no HTTP: the handler plus the programming model's conversions and the app's hooks. */
  invocation: { p50: number; p95: number };
  /** Through the local host's HTTP server (the invocation plus HTTP). */
  http: { p50: number; p95: number };
  /** handler p50 / bare p50: the API's own cost (target at most 1.2). */
  handlerRatio: number;
  /** http p50 / bare p50. */
  ratio: number;
}

export interface Report {
  meta: {
    date: string;
    machine: string;
    node: string;
    target: string;
    measuresRequestUnits: boolean;
    /** Where the request units come from: the embedded server's cost model, or an Azure account. */
    requestUnits?: "model" | "measured";
    users: number;
    posts: number;
    items: number;
    seed: number;
    iterations: number;
    loadSeconds: number;
  };
  rows: Row[];
  apiOverhead: ApiOverhead[];
  /** GET /api/search's query, beside Q3 and Q6. */
  search?: SearchFigures;
  /** The local host's change feed pipeline (absent when skipped or when benchmarking a remote account). */
  pipeline?: PipelineFigures;
  /** The embedded server in a process of its own (absent when skipped or when benchmarking a remote account). */
  server?: ServerFigures;
  /** Loading the function app in a fresh process, bundled and not (absent when skipped). */
  coldStart?: ColdStartFigures;
  /** npm start with no traffic: its CPU. */
  idle?: IdleFigures;
  /** Feed writes under a like storm and a concurrent load with and without the feed micro-cache (absent when skipped). */
  scale?: ScaleFigures;
  /** The app on 1..N instances sharing one account. */
  instances?: InstanceFigures[];
  /** Every route under load beside a baseline's build, in one run (--baseline). */
  baseline?: BaselineFigures;
  /** Unindexable queries over growing item counts, read to the end through the SDK. */
  scans?: ScanFigures[];
  /** Point reads alone and beside a client sending hostile queries. */
  hostile?: HostileFigures;
  /** The embedded server beside @vercel/cosmosdb-server, operation by operation. */
  peer?: PeerFigures;
  /** Each route beside the platform's floor. */
  floors?: FloorFigures;
  /** Readers beside a throttled background, with priorities and without. */
  priority?: PriorityFigures;
}

const ratio = (a: number, b: number) => (b === 0 ? (a === 0 ? 1 : Infinity) : a / b);

export function row(id: string, name: string, v1: Summary, v3: Summary, measuresRequestUnits: boolean): Row {
  return {
    id,
    name,
    v1,
    v3,
    ratio: {
      latencyP50: ratio(v1.p50, v3.p50),
      requests: ratio(v1.requests, v3.requests),
      itemsRead: ratio(v1.itemsRead, v3.itemsRead),
      requestCharge: measuresRequestUnits ? ratio(v1.requestCharge, v3.requestCharge) : null,
    },
  };
}

const x = (n: number | null) => (n === null ? "n/a" : `${f(n)}x`);

/** The article's summary table, V1 next to V3, with the V1/V3 ratios. */
export function formatTable(report: Report): string {
  const ru = (s: Summary) => (report.meta.measuresRequestUnits ? f(s.requestCharge, 2) : "n/a");
  const article = (model: "v1" | "v3", id: string) => (ARTICLE_RU[model][id] === undefined ? "n/a" : f(ARTICLE_RU[model][id], 2));
  const lines = [
    `Blog benchmark — ${report.meta.target}; ${report.meta.users} users, ${report.meta.posts} posts, ${report.meta.items} items; ${report.meta.iterations} calls per request; ${report.meta.date}`,
    report.meta.requestUnits === "model"
      ? "Request units: the embedded server's cost model (docs/request-units.md), beside the article's published figures."
      : report.meta.measuresRequestUnits
        ? "Request units: as the account charged them, beside the article's published figures."
        : "Request units: n/a; 'items read' (query metrics + point reads) is the work figure.",
    "",
    "| req | V1 latency p50/p95/p99 ms | V1 requests | V1 partitions | V1 items read | V1 RU | article V1 RU | V3 latency p50/p95/p99 ms | V3 requests | V3 partitions | V3 items read | V3 RU | article V3 RU | V1/V3 latency | V1/V3 items read | V1/V3 RU |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
  ];
  for (const r of report.rows) {
    const side = (s: Summary, model: "v1" | "v3") =>
      `${f(s.p50)} / ${f(s.p95)} / ${f(s.p99)} | ${f(s.requests)} | ${f(s.partitions)} | ${f(s.itemsRead)} | ${ru(s)} | ${article(model, r.id)}`;
    lines.push(
      `| ${r.id} ${r.name} | ${side(r.v1, "v1")} | ${side(r.v3, "v3")} | ${x(r.ratio.latencyP50)} | ${x(r.ratio.itemsRead)} | ${x(r.ratio.requestCharge)} |`,
    );
  }
  lines.push(
    "",
    "Requests include the SDK's query-plan request where it sends one. Partitions: logical partitions read (a cross-partition query counts all of its container's).",
  );
  if (report.meta.measuresRequestUnits)
    lines.push(
      "",
      `Where our V3's RU are more than ${EXPLAINED_BEYOND * 100} % from the article's V3, and why (docs/request-units.md):`,
      ...v3Differences(report.rows),
    );
  lines.push(
    "",
    "| API overhead | bare Cosmos p50 / p95 ms | handler, called directly, p50 / p95 ms | through the worker's invocation p50 / p95 ms | through the HTTP API p50 / p95 ms | handler / bare (p50; target <= 1.2x) | HTTP / bare (p50) |",
    "|---|---|---|---|---|---|---|",
  );
  for (const o of report.apiOverhead) {
    const pair = (figure: { p50: number; p95: number }) => `${f(figure.p50, 2)} / ${f(figure.p95, 2)}`;
    lines.push(
      `| ${o.request} | ${pair(o.bare)} | ${pair(o.handler)} | ${pair(o.invocation)} | ${pair(o.http)} | ${f(o.handlerRatio, 2)}x | ${f(o.ratio, 2)}x |`,
    );
  }
  const p = report.pipeline;
  if (p) {
    lines.push("", "| pipeline (local host, over HTTP) | measured | target |", "|---|---|---|");
    lines.push(
      `| new post visible in Q6 and Q3 (${p.postVisibleMs.samples} posts) | p50 ${f(p.postVisibleMs.p50, 0)} ms, p95 ${f(p.postVisibleMs.p95, 0)} ms, max ${f(p.postVisibleMs.max, 0)} ms | within 2 s |`,
    );
    lines.push(
      `| username change reaches every item (${p.rename.items} items in ${p.rename.posts} posts) | ${f(p.rename.ms, 0)} ms | within 10 s for 10,000 items in 500 posts |`,
    );
  }
  const e = report.server;
  if (e) {
    lines.push("", `| embedded server (own process, ${e.partitions} partitions, ${e.items} items) | measured | target |`, "|---|---|---|");
    lines.push(`| load (bulk batches) | ${f(e.loadSeconds, 1)} s, then ${e.rssAfterLoadMB} MB RSS | RSS under 500 MB |`);
    lines.push(
      `| stale-partition lookup (${e.staleLookup.items} items, ${e.staleLookup.pages} pages) | ${f(e.staleLookup.firstMs, 0)} ms first (indexes built), ${f(e.staleLookup.againMs, 0)} ms after; ${e.staleLookup.itemsRead} items read | under 1 s |`,
    );
    lines.push(
      `| sustained comment load (${f(e.commentLoad.seconds, 0)} s, 32 in flight) | ${f(e.commentLoad.perSecond, 0)} comments/s, peak ${e.commentLoad.rssMB} MB RSS | RSS under 500 MB |`,
    );
    lines.push(`| restart after kill -9 | ${f(e.restart.seconds, 2)} s, then ${e.restart.rssAfterMB} MB RSS | under 5 s |`);
    const rates = (r: { readsPerSecond: number; upsertsPerSecond: number } | null) =>
      r ? `${f(r.readsPerSecond, 0)} reads/s, ${f(r.upsertsPerSecond, 0)} upserts/s` : "n/a (no dotnet on PATH)";
    lines.push(`| point operations, @azure/cosmos (32 in flight) | ${rates(e.pointOperations.javascript)} | no regression |`);
    lines.push(`| point operations, Microsoft.Azure.Cosmos (32 in flight) | ${rates(e.pointOperations.dotnet)} | no regression |`);
  }
  const inst = report.instances;
  if (inst && inst.length > 0) {
    lines.push(
      "",
      "| instances (one embedded server process, 32 requests in flight) | requests/s | p95 | new post in every Q6 (p50 / max) | rebalance after kill -9: change feed / task hub |",
      "|---|---|---|---|---|",
    );
    const seconds = (value: number | undefined) => (value === undefined ? "not measured" : `${f(value, 1)} s`);
    for (const figure of inst)
      lines.push(
        `| ${figure.instances} | ${f(figure.requestsPerSecond, 0)} | ${f(figure.p95Ms, 0)} ms | ${f(figure.visibleMs.p50, 0)} / ${f(figure.visibleMs.max, 0)} ms | ${seconds(figure.rebalanceSeconds)} / ${seconds(figure.hubRebalanceSeconds)} |`,
      );
  }
  const sc = report.scale;
  if (sc) {
    lines.push("", "| scale (local host, embedded server) | measured | target |", "|---|---|---|");
    lines.push(
      `| feed writes per 1,000 likes on one post within seconds (FEED_REFRESH_SECONDS=5; the refresh due then adds one) | ${sc.feedWritesPer1000Likes} | at most 10 |`,
    );
    if (sc.likeStorms.length > 0) {
      const st0 = sc.likeStorms[0];
      lines.push(
        "",
        `| like storm: ${st0.likers} likers at once on one post, ${st0.operationsPerSecond} operations/s per partition, clients retrying after Retry-After | likes/s accepted | procedure calls (likes per committed call) | answers 429 | other failures | likeCount / like items |`,
        "|---|---|---|---|---|---|",
      );
      for (const st of sc.likeStorms) {
        lines.push(
          `| LIKE_BATCH_MAX=${st.likeBatchMax}, SDK retries ${st.sdkRetryWaitSeconds} s | ${f(st.acceptedPerSecond, 0)} (${f(st.seconds, 1)} s) | ${st.procedureCalls} (${f(st.likesPerCall, 1)}) | ${st.throttled} | ${st.failed} | ${st.likeCount} / ${st.likeItems} |`,
        );
      }
    }
    lines.push("", "| concurrent load (autocannon) | feed micro-cache | req/s | p50 / p99 ms | Cosmos DB requests/s |", "|---|---|---|---|---|");
    for (const l of sc.load)
      lines.push(
        `| ${l.request} | ${l.cached ? "on (1 s)" : "off"} | ${f(l.requestsPerSecond, 0)} | ${f(l.p50Ms, 0)} / ${f(l.p99Ms, 0)} | ${f(l.cosmosRequestsPerSecond, 0)} |`,
      );
  }
  if (report.scans) {
    lines.push("", "| unindexable query (`WHERE c.n % 2 = 0`, 4 partitions, SDK, maxItemCount 1000) | time | items scanned/s | target |", "|---|---|---|---|");
    for (const scan of report.scans)
      lines.push(`| ${scan.items} items, ${scan.results} results | ${f(scan.seconds, 2)} s | ${scan.itemsPerSecond} | 60,000 under 3 s, linear |`);
  }
  const h = report.hostile;
  if (h) {
    lines.push(
      "",
      `| point reads, ${h.seconds} s each, embedded server | reads | p50 / p99 / max ms |`,
      "|---|---|---|",
      `| alone | ${h.alone.reads} | ${f(h.alone.p50Ms, 1)} / ${f(h.alone.p99Ms, 1)} / ${f(h.alone.maxMs, 1)} |`,
      `| beside a client sending triple JOINs of one item and queries nested 12 deep (${h.hostile} sent, ${h.refused} refused with 408) | ${h.beside.reads} | ${f(h.beside.p50Ms, 1)} / ${f(h.beside.p99Ms, 1)} / ${f(h.beside.maxMs, 1)} |`,
    );
  }
  if (report.search) lines.push(...searchTable(report.search, report.rows));
  if (report.peer) lines.push(...peerTable(report.peer));
  if (report.floors) lines.push(...floorTable(report.floors));
  if (report.priority) lines.push(...priorityTable(report.priority));
  if (report.coldStart) lines.push(...coldStartTable(report.coldStart));
  const idle = report.idle;
  if (idle)
    lines.push(
      "",
      `| idle: npm start with no traffic | CPU | ${idle.baseline ? `${idle.baseline.ref}: CPU | ` : ""}target |`,
      `|---|---|${idle.baseline ? "---|" : ""}---|`,
      `| ${f(idle.seconds, 0)} s, from ${f(idle.settleSeconds, 0)} s after it answered | ${f(idle.percentOfCore, 2)} % of a core | ${
        idle.baseline ? `${f(idle.baseline.percentOfCore, 2)} % | ` : ""
      }under 1 % (${idle.percentOfCore < 1 ? "met" : "not met"}) |`,
    );
  const b = report.baseline;
  if (b) {
    lines.push(
      "",
      `| ${b.connections} connections, ${b.rounds} x ${b.seconds} s each${b.warmupSeconds ? ` after ${b.warmupSeconds} s of warm-up` : ""} | req/s | p99 ms | ${b.ref} (${b.commit.slice(0, 7)}): req/s | p99 ms | ratio (target >= 1.0) | warm-up: req/s, ratio |`,
      "|---|---|---|---|---|---|---|",
    );
    for (const r of b.routes) {
      const warmup = r.warmup ? `${f(r.warmup.current, 0)} against ${f(r.warmup.baseline, 0)}, ${f(r.warmup.current / r.warmup.baseline, 2)}` : "-";
      lines.push(
        `| ${r.request} | ${f(r.current.requestsPerSecond, 0)} | ${f(r.current.p99Ms, 0)} | ${f(r.baseline.requestsPerSecond, 0)} | ${f(r.baseline.p99Ms, 0)} | ${f(r.ratio, 2)} | ${warmup} |`,
      );
    }
  }
  return lines.filter((line, i) => line !== "" || i > 1).join("\n");
}

/** One figure of the summary: what it is, what was measured, its target and whether it was met, the baseline's beside. */
interface Verdict {
  figure: string;
  measured: string;
  target: string;
  met: boolean | undefined;
  baseline?: string;
}

/** The figures that have a target, each with it: what a terminal shows whole (the tables go to a file). */
export function verdicts(report: Report): Verdict[] {
  const out: Verdict[] = [];
  // A few calls give a noisy median: the ratio is judged at the full run's 20 calls per request or more.
  const enoughCalls = report.meta.iterations >= 20;
  for (const o of report.apiOverhead)
    out.push({
      figure: `${o.request}: the handler over the bare store call (p50)`,
      measured: `${f(o.handlerRatio, 2)}x`,
      target: enoughCalls ? "<= 1.2x" : "<= 1.2x, judged at 20 calls: --full",
      met: enoughCalls ? o.handlerRatio <= 1.2 : undefined,
    });
  const p = report.pipeline;
  if (p) {
    out.push({
      figure: "a new post visible in Q6 and Q3 (p95)",
      measured: `${f(p.postVisibleMs.p95, 0)} ms`,
      target: "within 2 s",
      met: p.postVisibleMs.p95 <= 2000,
    });
    const full = p.rename.items >= 10_000;
    out.push({
      figure: `a rename reaches every item (${p.rename.items} items in ${p.rename.posts} posts)`,
      measured: `${f(p.rename.ms, 0)} ms`,
      target: full ? "within 10 s" : "within 10 s, set for 10,000 items: --full",
      met: full ? p.rename.ms <= 10_000 : undefined,
    });
  }
  if (report.scale)
    out.push({
      figure: "feed writes per 1,000 likes on one post",
      measured: String(report.scale.feedWritesPer1000Likes),
      target: "at most 10",
      met: report.scale.feedWritesPer1000Likes <= 10,
    });
  if (report.peer) out.push(...peerVerdicts(report.peer));
  if (report.floors) out.push(...floorVerdicts(report.floors));
  if (report.priority) out.push(...priorityVerdicts(report.priority));
  const c = report.coldStart;
  if (c)
    out.push({
      figure: "cold start with a connection string, as in Azure (p50)",
      measured: `${f(c.withTelemetry.p50, 0)} ms`,
      target: "under 150 ms",
      met: c.withTelemetry.p50 < 150,
      baseline: c.baseline && `${c.baseline.ref}: ${f(c.baseline.p50, 0)} ms`,
    });
  const idle = report.idle;
  if (idle)
    out.push({
      figure: "npm start idle",
      measured: `${f(idle.percentOfCore, 2)} % of a core`,
      // Start-up's own work fades within half a minute: the target is judged after the full run's 30 s.
      target: idle.settleSeconds >= 30 ? "under 1 %" : "under 1 %, judged 30 s after start: --full",
      met: idle.settleSeconds >= 30 ? idle.percentOfCore < 1 : undefined,
      baseline: idle.baseline && `${idle.baseline.ref}: ${f(idle.baseline.percentOfCore, 2)} %`,
    });
  for (const route of report.baseline?.routes ?? [])
    out.push({
      figure: `${route.request} under load, beside ${report.baseline!.ref}`,
      measured: `${f(route.current.requestsPerSecond, 0)} req/s`,
      target: ">= 0.9x the baseline",
      met: route.ratio >= 0.9,
      baseline: `${f(route.baseline.requestsPerSecond, 0)} req/s (${f(route.ratio, 2)}x)`,
    });
  return out;
}

/** The summary, one line per figure with a target, short enough for a terminal. */
export function formatSummary(report: Report): string {
  const mark = (met: boolean | undefined) => (met === undefined ? "  -  " : met ? " met " : " MISS");
  const all = verdicts(report);
  const lines = all.map((v) => `${mark(v.met)} ${v.figure}: ${v.measured} (target ${v.target})${v.baseline ? `; ${v.baseline}` : ""}`);
  const missed = all.filter((v) => v.met === false).length;
  return [
    `Summary (${report.meta.users} users, ${report.meta.iterations} calls per request): ${missed === 0 ? "every target met" : `${missed} target(s) missed`}`,
    ...lines,
  ].join("\n");
}
