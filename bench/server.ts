import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { CosmosClient } from "@azure/cosmos";
import { measureCosmos } from "../src/store/metering";
import { createStore, type BlogStore } from "../src/store/client";
import { createComment } from "../src/store/posts";
import { provision } from "../src/store/provision";
import { stalePartitionsPage } from "../src/store/username-propagation";
import { readUser } from "../src/store/users";
import { generateDataset, itemCount, loadV3 } from "./dataset";
import { announced, rssMB } from "./system-process";

/** What the embedded server costs on its own: measured in a process of its own, so its RSS is its own. */
export interface ServerFigures {
  partitions: number;
  items: number;
  loadSeconds: number;
  rssAfterLoadMB: number;
  /** The propagation's stale-partition lookup (cross-partition, paged): first run (builds indexes) and again. */
  staleLookup: { items: number; pages: number; firstMs: number; againMs: number; itemsRead: number };
  commentLoad: { seconds: number; comments: number; perSecond: number; rssMB: number };
  /** From kill -9 to serving again, on the same data directory. */
  restart: { seconds: number; rssAfterMB: number };
  /** Point reads and upserts a second, 32 in flight, through each SDK (the .NET one absent without `dotnet`). */
  pointOperations: { javascript: PointRates; dotnet: PointRates | null };
}

export interface PointRates {
  readsPerSecond: number;
  upsertsPerSecond: number;
}

// The compiled command line of the server: next to this file when it runs from dist/, under dist/ when run from the sources (tests).
/** The embedded server's command, beside its package's entry. */
const cli = join(dirname(require.resolve("embedded-cosmos")), "cli.js");

async function serve(dataDir: string, partitions: number): Promise<{ child: ChildProcess; endpoint: string; key: string }> {
  // As `npm run cosmos` runs it: a small young generation keeps RSS down under load (see the README).
  const child = spawn(
    process.execPath,
    ["--max-semi-space-size=4", "--heap-growing-percent=25", cli, "--port", "0", "--data-dir", dataDir, "--partitions", String(partitions)],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  const [, endpoint, key] = await announced(child, /COSMOS_ENDPOINT=(\S+)[\s\S]*COSMOS_KEY=(\S+)/, "the embedded server");
  return { child, endpoint, key };
}

const killed = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    child.removeAllListeners("exit");
    child.once("exit", () => resolve());
    child.kill("SIGKILL");
  });

const POINT_ITEMS = 1000;
const IN_FLIGHT = 32;

/** As many calls of `operation` (on item n) as `seconds` allow, IN_FLIGHT at a time, each loop with its own stride. */
async function rate(seconds: number, operation: (n: number) => Promise<unknown>): Promise<number> {
  let done = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async (_, loop) => {
      for (let n = loop; performance.now() < deadline; n += IN_FLIGHT) {
        await operation(n % POINT_ITEMS);
        done++;
      }
    }),
  );
  return done / ((performance.now() - started) / 1000);
}

/** Point reads, then upserts, through @azure/cosmos, on 1,000 items of their own. */
async function javascriptPointRates(client: CosmosClient, seconds: number): Promise<PointRates> {
  const { database } = await client.databases.createIfNotExists({ id: "bench-points-javascript" });
  const { container } = await database.containers.createIfNotExists({ id: "items", partitionKey: { paths: ["/pk"] } });
  const item = (n: number, version: number) => ({ id: `i${n}`, pk: `p${n % 97}`, n, version });
  for (let i = 0; i < POINT_ITEMS; i += 50) await Promise.all(Array.from({ length: 50 }, (_, k) => container.items.upsert(item(i + k, 0))));
  const readsPerSecond = await rate(seconds, (n) => container.item(`i${n}`, `p${n % 97}`).read());
  const upsertsPerSecond = await rate(seconds, (n) => container.items.upsert(item(n, 1)));
  return { readsPerSecond, upsertsPerSecond };
}

/** The same measure through Microsoft.Azure.Cosmos (bench/dotnet), when `dotnet` is on PATH; built with no build server left running to skew what is measured next. */
function dotnetPointRates(endpoint: string, key: string, seconds: number): PointRates | null {
  let root = __dirname;
  while (!existsSync(join(root, "bench", "dotnet", "PointOperations.csproj"))) {
    if (dirname(root) === root) throw new Error("bench/dotnet is missing");
    root = dirname(root);
  }
  const project = join(root, "bench", "dotnet");
  const build = spawnSync("dotnet", ["build", "-c", "Release", "--nologo", "-v", "q", "--disable-build-servers", project], { encoding: "utf8" });
  if (build.error && (build.error as NodeJS.ErrnoException).code === "ENOENT") return null;
  if (build.status !== 0) throw new Error(`bench/dotnet did not build: ${build.stdout}${build.stderr}`);
  const dll = join(project, "bin", "Release", "net10.0", "PointOperations.dll");
  const run = spawnSync("dotnet", [dll, endpoint, key, String(seconds), String(IN_FLIGHT)], { encoding: "utf8" });
  if (run.status !== 0) throw new Error(`bench/dotnet failed: ${run.stdout}${run.stderr}`);
  const { readsPerSecond, upsertsPerSecond } = JSON.parse(run.stdout.trim().split("\n").pop()!) as PointRates;
  return { readsPerSecond, upsertsPerSecond };
}

function storeFor(endpoint: string, key: string): BlogStore {
  return createStore({ cosmos: { endpoint, key, databaseName: "blog" } });
}

/** The V3 dataset loaded into a separate embedded server; its memory, index use, restart time and a comment load. */
export async function measureServer(options: { users: number; seed: number; partitions: number; commentSeconds: number }): Promise<ServerFigures> {
  const dataDir = mkdtempSync(join(tmpdir(), "bench-server-"));
  let server = await serve(dataDir, options.partitions);
  let store = storeFor(server.endpoint, server.key);
  try {
    await provision(store.client, "blog");
    const dataset = generateDataset(options.users, options.seed);
    const loadStarted = performance.now();
    await loadV3(store, dataset, () => {});
    const loadSeconds = (performance.now() - loadStarted) / 1000;
    const rssAfterLoadMB = rssMB(server.child);

    // The lookup the username propagation pages through, for the user with the most items.
    const counts = new Map<string, number>();
    for (const post of dataset.posts) for (const item of [post, ...post.comments, ...post.likes]) counts.set(item.userId, (counts.get(item.userId) ?? 0) + 1);
    const [userId, items] = [...counts].sort((a, b) => b[1] - a[1])[0];
    const lookup = async () => {
      const started = performance.now();
      let pages = 0;
      let continuation: string | null = null;
      const { usage } = await measureCosmos(
        async () => {
          do {
            const page = await stalePartitionsPage(store, userId, "renamed", 50, continuation);
            continuation = page.continuation;
            pages++;
          } while (continuation);
        },
        { queryMetrics: true },
      );
      return { ms: performance.now() - started, pages, itemsRead: usage.requests.reduce((n, r) => n + (r.retrievedDocumentCount ?? 0), 0) };
    };
    const first = await lookup();
    const again = await lookup();

    // A sustained comment load: as many createComment calls as the server takes, 32 at a time.
    const commenter = (await readUser(store, dataset.users[0].userId))!;
    const deadline = performance.now() + options.commentSeconds * 1000;
    let comments = 0;
    let peakRss = rssAfterLoadMB;
    const loadStarted2 = performance.now();
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (performance.now() < deadline) {
          const post = dataset.posts[(comments * 7919) % dataset.posts.length];
          await createComment(store, post.postId, commenter, randomUUID(), "a comment under load");
          comments++;
          if (comments % 500 === 0) peakRss = Math.max(peakRss, rssMB(server.child));
        }
      }),
    );
    const commentSeconds = (performance.now() - loadStarted2) / 1000;
    peakRss = Math.max(peakRss, rssMB(server.child));

    store.dispose();
    await killed(server.child);
    const restartStarted = performance.now();
    server = await serve(dataDir, options.partitions);
    const restartSeconds = (performance.now() - restartStarted) / 1000;
    store = storeFor(server.endpoint, server.key);
    await store.posts.read(); // answers: the data is back
    const rssAfterRestart = rssMB(server.child);

    const pointSeconds = Math.min(3, Math.max(1, options.commentSeconds));
    const pointOperations = {
      javascript: await javascriptPointRates(store.client, pointSeconds),
      dotnet: dotnetPointRates(server.endpoint, server.key, pointSeconds),
    };

    return {
      partitions: options.partitions,
      items: itemCount(dataset),
      loadSeconds,
      rssAfterLoadMB,
      staleLookup: { items, pages: first.pages, firstMs: first.ms, againMs: again.ms, itemsRead: again.itemsRead },
      commentLoad: { seconds: commentSeconds, comments, perSecond: comments / commentSeconds, rssMB: peakRss },
      restart: { seconds: restartSeconds, rssAfterMB: rssAfterRestart },
      pointOperations,
    };
  } finally {
    store.dispose();
    await killed(server.child);
    rmSync(dataDir, { recursive: true, force: true });
  }
}
