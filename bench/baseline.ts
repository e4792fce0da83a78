import autocannon from "autocannon";
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { devToken } from "../local/dev-auth";
import { startSystem } from "./system-process";

/** One request of the article under a concurrent load, on today's code and on the baseline's, in one run. */
export interface RouteComparison {
  request: string;
  current: { requestsPerSecond: number; p99Ms: number };
  baseline: { requestsPerSecond: number; p99Ms: number };
  /** Today's requests per second over the baseline's: 1.0 or more is as fast or faster. */
  ratio: number;
  /** Requests per second in each system's unmeasured warm-up before the rounds (absent with no warm-up). */
  warmup?: { current: number; baseline: number };
}

export interface BaselineFigures {
  /** What was named (`--baseline`), and the commit it is. */
  ref: string;
  commit: string;
  connections: number;
  /** Seconds of load per route, per system and round. */
  seconds: number;
  rounds: number;
  /** Seconds of unmeasured load per route and system before its rounds. */
  warmupSeconds: number;
  routes: RouteComparison[];
}

export interface BaselineOptions {
  /** A git ref of this repository; checked out (git archive) and installed (npm ci) under dist/baseline/<commit>, once. */
  ref: string;
  /** An already installed checkout to use instead of the ref's (a test runs today's code against itself; npm run bench passes the one it prepared). */
  directory?: string;
  /** The commit that checkout holds, for the report; the ref when absent. */
  commit?: string;
  seconds: number;
  rounds: number;
  /**
   * Seconds of load per route and system before the measured rounds (0: none). V8 optimizes a
   * process's hot functions over its first seconds of load; without a warm-up the first round
   * measures that compilation (and the larger build, with more code to compile, pays more of it).
   */
  warmupSeconds?: number;
  connections: number;
  /** Only these requests (ids as in ROUTES); all when absent. */
  only?: string[];
  log?: (line: string) => void;
}

/** What each system holds before the load: the same users, posts, comments and likes in both. */
export const USERS = 8;
const POSTS_PER_USER = 3;

export interface Seeded {
  users: string[];
  posts: string[];
}

export interface LoadRequest {
  method: "GET" | "POST" | "PUT";
  path: (seeded: Seeded, n: number) => string;
  /** The caller (an index into the seeded users), for writes. */
  as?: (n: number) => number;
  body?: (n: number) => unknown;
}

/** The article's ten requests as HTTP requests both systems answer (the API has not changed shape since round 1). */
export const ROUTES: Record<string, LoadRequest> = {
  "Q1 get user": { method: "GET", path: (s, n) => `/users/${s.users[n % s.users.length]}` },
  "Q2 get post": { method: "GET", path: (s, n) => `/posts/${s.posts[n % s.posts.length]}` },
  "Q3 user's posts": { method: "GET", path: (s, n) => `/users/${s.users[n % s.users.length]}/posts` },
  "Q4 comments": { method: "GET", path: (s, n) => `/posts/${s.posts[n % s.posts.length]}/comments` },
  "Q5 likes": { method: "GET", path: (s, n) => `/posts/${s.posts[n % s.posts.length]}/likes` },
  "Q6 feed": { method: "GET", path: () => `/feed?limit=20` },
  "C1 edit user": {
    method: "PUT",
    path: (s, n) => `/users/${s.users[n % s.users.length]}`,
    as: (n) => n,
    body: (n) => ({ username: `bench_user_${n % USERS}` }),
  },
  "C2 create post": { method: "POST", path: () => `/posts`, as: (n) => n, body: (n) => ({ title: `load ${n}`, content: "A post written under load." }) },
  "C3 comment": {
    method: "POST",
    path: (s, n) => `/posts/${s.posts[n % s.posts.length]}/comments`,
    as: (n) => n,
    body: () => ({ content: "A comment under load." }),
  },
  "C4 like": { method: "POST", path: (s, n) => `/posts/${s.posts[n % s.posts.length]}/likes`, as: (n) => n },
};

/** The baseline's checkout, installed: dist/baseline/<commit>, made once (a marker says the install finished) and kept for later runs. */
export function prepareBaseline(root: string, ref: string, log: (line: string) => void): { directory: string; commit: string } {
  const commit = execFileSync("git", ["rev-parse", "--verify", `${ref}^{commit}`], { cwd: root, encoding: "utf8" }).trim();
  const directory = join(root, "dist/baseline", commit);
  const installed = join(directory, ".installed");
  if (!existsSync(installed)) {
    log(`baseline: checking out ${ref} (${commit.slice(0, 7)}) into ${directory} and installing it (npm ci)`);
    rmSync(directory, { recursive: true, force: true });
    mkdirSync(directory, { recursive: true });
    const archive = `${directory}.tar`;
    execFileSync("git", ["archive", "--format=tar", "-o", archive, commit], { cwd: root });
    execFileSync("tar", ["-xf", archive, "-C", directory]);
    rmSync(archive);
    execFileSync("npm", ["ci", "--no-audit", "--no-fund"], { cwd: directory, stdio: ["ignore", "ignore", "inherit"] });
    writeFileSync(installed, `${new Date().toISOString()}\n`);
  }
  return { directory, commit };
}

async function send(api: string, method: string, path: string, token: string, body?: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${api}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as Record<string, unknown>;
}

/** The same users, posts, comments and likes, through the API; resolves once the feed shows every post. */
export async function seed(api: string, tokens: string[], users: string[]): Promise<Seeded> {
  const posts: string[] = [];
  for (const [i, user] of users.entries()) {
    await send(api, "POST", "/users", tokens[i], { username: `bench_user_${i}` });
    for (let p = 0; p < POSTS_PER_USER; p++) {
      const post = await send(api, "POST", "/posts", tokens[i], { title: `post ${p} of ${user}`, content: `Content of post ${p}.`.repeat(5) });
      posts.push(String(post.postId));
    }
  }
  for (const [n, post] of posts.entries()) {
    await send(api, "POST", `/posts/${post}/comments`, tokens[n % tokens.length], { content: "A first comment." });
    await send(api, "POST", `/posts/${post}/likes`, tokens[(n + 1) % tokens.length]);
  }
  for (const deadline = Date.now() + 60_000; ;) {
    const feed = (await fetch(`${api}/feed?limit=100`).then((r) => r.json())) as { items: unknown[] };
    if (feed.items.length >= posts.length) break;
    if (Date.now() > deadline) throw new Error(`the feed at ${api} never showed the ${posts.length} posts`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { users, posts };
}

export async function load(
  api: string,
  route: LoadRequest,
  seeded: Seeded,
  tokens: string[],
  options: Pick<BaselineOptions, "connections" | "seconds">,
  seconds = options.seconds,
) {
  let n = 0;
  const result = await autocannon({
    url: api,
    connections: options.connections,
    duration: seconds,
    requests: [
      {
        setupRequest: (request) => {
          const i = n++;
          const caller = route.as ? tokens[route.as(i) % tokens.length] : undefined;
          return {
            ...request,
            method: route.method,
            path: `/api${route.path(seeded, i)}`,
            headers: { ...(caller ? { authorization: `Bearer ${caller}` } : {}), "content-type": "application/json" },
            ...(route.body ? { body: JSON.stringify(route.body(i)) } : {}),
          };
        },
      },
    ],
  });
  // Answers that are not 2xx (a 429, a 5xx) are no throughput: counted apart, and a route with any is reported.
  const failed = result.non2xx + result.errors;
  if (failed > result.requests.total / 100)
    throw new Error(`${route.method} ${route.path(seeded, 0)} at ${api}: ${failed} of ${result.requests.total} answers were not 2xx`);
  return { requests: result.requests.total - failed, seconds: result.duration, p99Ms: result.latency.p99 };
}

const requestsPerSecond = (load: { requests: number; seconds: number }) => load.requests / load.seconds;

/** Each system loaded with the route, unmeasured, for the warm-up's seconds: what each managed is kept apart from the rounds. */
async function warmUp(
  systems: Record<"current" | "baseline", { api: string }>,
  route: LoadRequest,
  seeded: Record<"current" | "baseline", Seeded>,
  tokens: string[],
  options: BaselineOptions,
) {
  if (!options.warmupSeconds) return undefined;
  const rate = async (which: "current" | "baseline") =>
    requestsPerSecond(await load(systems[which].api, route, seeded[which], tokens, options, options.warmupSeconds));
  return { current: await rate("current"), baseline: await rate("baseline") };
}

/**
 * Today's code and a baseline's, each as `npm start` runs it (a process with its embedded Cosmos
 * DB server, telemetry as it is by default), loaded with the same requests in one run: per route,
 * rounds that alternate which system goes first, so a busy moment of the machine hurts both.
 */
export async function compareWithBaseline(root: string, options: BaselineOptions): Promise<BaselineFigures> {
  const log = options.log ?? (() => {});
  const { directory, commit } = options.directory
    ? { directory: options.directory, commit: options.commit ?? options.ref }
    : prepareBaseline(root, options.ref, log);
  const secret = randomBytes(32).toString("base64url");
  const users = Array.from({ length: USERS }, (_, i) => `bench-user-${i}`);
  const tokens = await Promise.all(users.map((user) => devToken(user, secret)));
  const systems = { current: await startSystem(root, secret), baseline: await startSystem(directory, secret) };
  try {
    const seeded = { current: await seed(systems.current.api, tokens, users), baseline: await seed(systems.baseline.api, tokens, users) };
    const routes: RouteComparison[] = [];
    for (const [request, route] of Object.entries(ROUTES)) {
      if (options.only && !options.only.includes(request.split(" ")[0])) continue;
      const warmup = await warmUp(systems, route, seeded, tokens, options);
      const totals = { current: { requests: 0, seconds: 0, p99Ms: 0 }, baseline: { requests: 0, seconds: 0, p99Ms: 0 } };
      for (let round = 0; round < options.rounds; round++) {
        const order = round % 2 === 0 ? (["current", "baseline"] as const) : (["baseline", "current"] as const);
        for (const which of order) {
          const figure = await load(systems[which].api, route, seeded[which], tokens, options);
          totals[which].requests += figure.requests;
          totals[which].seconds += figure.seconds;
          totals[which].p99Ms = Math.max(totals[which].p99Ms, figure.p99Ms);
        }
      }
      const figure = (t: typeof totals.current) => ({ requestsPerSecond: requestsPerSecond(t), p99Ms: t.p99Ms });
      const [current, baseline] = [figure(totals.current), figure(totals.baseline)];
      const ratio = current.requestsPerSecond / baseline.requestsPerSecond;
      routes.push({ request, current, baseline, ratio, ...(warmup ? { warmup } : {}) });
      log(`baseline: ${request}: ${current.requestsPerSecond.toFixed(0)} req/s against ${baseline.requestsPerSecond.toFixed(0)} (x${ratio.toFixed(2)})`);
    }
    const { ref, connections, seconds, rounds, warmupSeconds = 0 } = options;
    return { ref, commit, connections, seconds, rounds, warmupSeconds, routes };
  } finally {
    await Promise.all([systems.current.stop(), systems.baseline.stop()]);
  }
}
