import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LOCAL_COSMOS_KEY } from "embedded-cosmos";
import { devToken } from "../local/dev-auth";
import { projectRoot } from "../src/store/script-files";
import { load, ROUTES, seed, USERS, type Seeded } from "./baseline";
import type { CapturedAnswer } from "./floor/app";
import { fixed as f, JUDGED_ROUNDS, median } from "./measure";
import { announced, groupCpuSeconds, startSystem, type RunningSystem } from "./system-process";

/**
 * Each route beside the floor of the platform it runs on, measured in the same run: the
 * same local host and invocation, serving an app (bench/floor/app.ts) that makes the same Cosmos
 * DB calls on the same data and answers the same bytes, with nothing of its own. What the API
 * costs above that floor is its own doing: validation, auth, telemetry, shaping the answer.
 */
export interface FloorComparison {
  request: string;
  app: { requestsPerSecond: number; p99Ms: number; cpuMsPerRequest: number };
  floor: { requestsPerSecond: number; p99Ms: number; cpuMsPerRequest: number };
  /** The app's rate over the floor's, per round, and their median. */
  ratio: number;
  spread: [number, number];
}

export interface FloorFigures {
  connections: number;
  seconds: number;
  rounds: number;
  routes: FloorComparison[];
}

/** Every route has a floor: the reads and the writes of the article's ten requests. */
const REQUESTS = Object.keys(ROUTES);
/** What a route must reach beside its floor: a read 0.9 of its rate, a write (procedures, several calls) 0.8. */
const targetOf = (request: string) => (request.startsWith("Q") ? 0.9 : 0.8);
/** The paths each route's load visits (its path for n = 0, 1, ...), enough to capture every one. */
const PATHS_PER_ROUTE = 64;

/** What the API answers for every method and path the load visits: the bytes and the headers a client reads (a write: its first answer). */
async function capture(system: RunningSystem, seeded: Seeded, tokens: string[]): Promise<Record<string, CapturedAnswer>> {
  const answers: Record<string, CapturedAnswer> = {};
  for (const request of REQUESTS)
    for (let n = 0; n < PATHS_PER_ROUTE; n++) {
      const route = ROUTES[request];
      const path = `/api${route.path(seeded, n)}`;
      // The floor finds its answer by method and path: the query string (Q6's limit) is the same for every request of a route.
      const key = `${route.method} ${path.split("?")[0]}`;
      if (answers[key]) continue;
      const response = await fetch(`${system.api.replace(/\/api$/, "")}${path}`, {
        method: route.method,
        headers: { ...(route.as ? { authorization: `Bearer ${tokens[route.as(n) % tokens.length]}` } : {}), "content-type": "application/json" },
        body: route.body ? JSON.stringify(route.body(n)) : undefined,
      });
      const headers: Record<string, string> = {};
      for (const name of ["content-type", "etag", "cache-control", "location"]) {
        const value = response.headers.get(name);
        if (value) headers[name] = value;
      }
      answers[key] = { status: response.status, headers, body: await response.text() };
    }
  return answers;
}

/** The floor's server, compiled: beside this file when it runs from dist/, under dist/ when it runs from the sources (tests). */
const FLOOR_SERVER = existsSync(join(__dirname, "floor", "serve.js")) ? join(__dirname, "floor", "serve.js") : join(projectRoot(), "dist/bench/floor/serve.js");

/** The floor app served by the local host in a process of its own, with npm start's Node flags, on the system's Cosmos DB server. */
async function startFloor(cosmosEndpoint: string, answersFile: string): Promise<{ api: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ["--experimental-async-context-frame", "--max-semi-space-size=4", "--heap-growing-percent=25", FLOOR_SERVER], {
    env: { ...process.env, COSMOS_ENDPOINT: cosmosEndpoint, COSMOS_KEY: LOCAL_COSMOS_KEY, FLOOR_ANSWERS: answersFile, OTEL_EXPORTER_OTLP_ENDPOINT: "" },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const [, api] = await announced(child, /FLOOR=(\S+)/, "the floor");
  return { api, child };
}

/**
 * Today's `npm start` and the floor on its data, each route loaded on one and then the
 * other (which goes first alternates by round), with the CPU both processes used per request:
 * the floor's Cosmos DB requests are served by the system's process, so its CPU counts for both.
 */
export async function compareWithFloors(
  root: string,
  options: { seconds: number; rounds: number; warmupSeconds: number; connections: number; log?: (line: string) => void },
): Promise<FloorFigures> {
  const log = options.log ?? (() => {});
  const secret = randomBytes(32).toString("base64url");
  const users = Array.from({ length: USERS }, (_, i) => `bench-user-${i}`);
  const tokens = await Promise.all(users.map((user) => devToken(user, secret)));
  const system = await startSystem(root, secret);
  let floor: { api: string; child: ChildProcess } | undefined;
  try {
    const seeded = await seed(system.api, tokens, users);
    const answersFile = join(mkdtempSync(join(tmpdir(), "floor-")), "answers.json");
    writeFileSync(answersFile, JSON.stringify(await capture(system, seeded, tokens)));
    floor = await startFloor(system.cosmosEndpoint, answersFile);
    const floorCpu = () => groupCpuSeconds(floor!.child.pid!) + system.cpuSeconds();
    const sides = { app: { api: system.api, cpu: () => system.cpuSeconds() }, floor: { api: floor.api, cpu: floorCpu } };
    const routes: FloorComparison[] = [];
    for (const request of REQUESTS) {
      const route = ROUTES[request];
      for (const side of Object.values(sides)) if (options.warmupSeconds > 0) await load(side.api, route, seeded, tokens, options, options.warmupSeconds);
      const totals = {
        app: { requests: 0, seconds: 0, p99Ms: 0, cpu: 0, rates: [] as number[] },
        floor: { requests: 0, seconds: 0, p99Ms: 0, cpu: 0, rates: [] as number[] },
      };
      for (let round = 0; round < options.rounds; round++) {
        const order = round % 2 === 0 ? (["app", "floor"] as const) : (["floor", "app"] as const);
        for (const which of order) {
          const cpuBefore = sides[which].cpu();
          const figure = await load(sides[which].api, route, seeded, tokens, options);
          const total = totals[which];
          total.cpu += sides[which].cpu() - cpuBefore;
          total.requests += figure.requests;
          total.seconds += figure.seconds;
          total.p99Ms = Math.max(total.p99Ms, figure.p99Ms);
          total.rates.push(figure.requests / figure.seconds);
        }
      }
      const figure = (t: typeof totals.app) => ({ requestsPerSecond: t.requests / t.seconds, p99Ms: t.p99Ms, cpuMsPerRequest: (t.cpu * 1000) / t.requests });
      const ratios = totals.app.rates.map((rate, i) => rate / totals.floor.rates[i]);
      const comparison = {
        request,
        app: figure(totals.app),
        floor: figure(totals.floor),
        ratio: median(ratios),
        spread: [Math.min(...ratios), Math.max(...ratios)] as [number, number],
      };
      routes.push(comparison);
      log(
        `floor: ${request}: ${comparison.app.requestsPerSecond.toFixed(0)} req/s against ${comparison.floor.requestsPerSecond.toFixed(0)} (x${comparison.ratio.toFixed(2)})`,
      );
    }
    return { connections: options.connections, seconds: options.seconds, rounds: options.rounds, routes };
  } finally {
    if (floor) process.kill(-floor.child.pid!, "SIGKILL");
    await system.stop();
  }
}

/** The floor's rows of the full report. */
export function floorTable(figures: FloorFigures): string[] {
  return [
    "",
    `| ${figures.connections} connections, ${figures.rounds} x ${figures.seconds} s, alternating | app req/s | floor req/s | ratio (spread), target >= 0.9 (reads), 0.8 (writes) | app / floor p99 ms (target <= 1.5x) | CPU ms per request, app / floor (the app's own) |`,
    "|---|---|---|---|---|---|",
    ...figures.routes.map(
      (r) =>
        `| ${r.request} | ${f(r.app.requestsPerSecond, 0)} | ${f(r.floor.requestsPerSecond, 0)} | ${f(r.ratio, 2)} (${f(r.spread[0], 2)}-${f(r.spread[1], 2)}) ${r.ratio >= targetOf(r.request) ? "met" : "not met"} | ${f(r.app.p99Ms, 0)} / ${f(r.floor.p99Ms, 0)} ${r.app.p99Ms <= 1.5 * r.floor.p99Ms ? "met" : "not met"} | ${f(r.app.cpuMsPerRequest, 2)} / ${f(r.floor.cpuMsPerRequest, 2)} (${f(r.app.cpuMsPerRequest - r.floor.cpuMsPerRequest, 2)}) |`,
    ),
  ];
}

/** The summary's lines: each route's rate against its floor's, and its p99 (judged over JUDGED_ROUNDS rounds). */
export function floorVerdicts(figures: FloorFigures): { figure: string; measured: string; target: string; met: boolean | undefined }[] {
  const judged = figures.rounds >= JUDGED_ROUNDS;
  const target = (goal: string) => (judged ? goal : `${goal}, judged over ${JUDGED_ROUNDS} rounds: --full`);
  return figures.routes.flatMap((r) => [
    {
      figure: `${r.request} beside the platform's floor`,
      measured: `${r.ratio.toFixed(2)}x (${r.app.requestsPerSecond.toFixed(0)} against ${r.floor.requestsPerSecond.toFixed(0)} req/s)`,
      target: target(`>= ${targetOf(r.request)}x`),
      met: judged ? r.ratio >= targetOf(r.request) : undefined,
    },
    {
      figure: `${r.request} p99 beside the floor's`,
      measured: `${r.app.p99Ms.toFixed(0)} against ${r.floor.p99Ms.toFixed(0)} ms`,
      target: target("<= 1.5x"),
      met: judged ? r.app.p99Ms <= 1.5 * r.floor.p99Ms : undefined,
    },
  ]);
}
