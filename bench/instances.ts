import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CosmosClient } from "@azure/cosmos";
import { sharedAccountCluster } from "../chaos/cluster";
import { devToken } from "../local/dev-auth";
import { random } from "../local/random";
import { CONTAINERS, containerDefinitions } from "../src/store/definitions";
import { msUntil, percentile } from "./measure";

/** The app on 1..N instances sharing one account (an embedded server process of its own), as Azure scales it out. */
export interface InstanceFigures {
  instances: number;
  /** Requests a second through the instances (a mix of Q6, Q2 and C3), 32 in flight, and their p95. */
  requestsPerSecond: number;
  p95Ms: number;
  /** From a new post's 201 to its being in Q6 on every instance (the posts change feed, then each instance's micro-cache). */
  visibleMs: { p50: number; max: number };
  /** From kill -9 of one instance until no lease is in its name: the leases' expiration (60 s) and an acquire round (13 s). */
  rebalanceSeconds?: number;
  /** The same for the durable task hub's partitions: their leases' expiration (10 s) and an acquire round (2 s). */
  hubRebalanceSeconds?: number;
}

const IN_FLIGHT = 32;

async function call(base: string, method: string, path: string, token: string, body?: unknown) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

/** One count of instances: a fresh account, a small dataset, a load, new posts followed to every Q6, and a kill when asked. */
async function measureCount(instances: number, seconds: number, rebalance: boolean): Promise<InstanceFigures> {
  const dataDir = mkdtempSync(join(tmpdir(), "bench-instances-"));
  const secret = randomBytes(32).toString("base64url");
  const rng = random(instances);
  const cluster = await sharedAccountCluster({ dataDir, instances, faultsFor: () => undefined, rng, env: { AUTH_DEV_SECRET: secret } });
  try {
    const bases = cluster.urls();
    const users = await Promise.all(Array.from({ length: 10 }, (_, i) => devToken(`bench${i}`, secret)));
    for (const [i, token] of users.entries()) await call(bases[0], "POST", "/users", token, { username: `bench${i}` });
    const posts: string[] = [];
    for (const token of users) posts.push((await call(bases[0], "POST", "/posts", token, { title: "a post", content: "to read and comment" })).body.postId);

    // The load: each request to an instance at random.
    const latencies: number[] = [];
    const started = performance.now();
    const deadline = started + seconds * 1000;
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (performance.now() < deadline) {
          const base = cluster.url()!;
          const draw = rng();
          const token = users[Math.floor(rng() * users.length)];
          const post = posts[Math.floor(rng() * posts.length)];
          const at = performance.now();
          if (draw < 0.6) await call(base, "GET", "/feed", token);
          else if (draw < 0.9) await call(base, "GET", `/posts/${post}`, token);
          else await call(base, "POST", `/posts/${post}/comments`, token, { content: "a comment under load" });
          latencies.push(performance.now() - at);
        }
      }),
    );
    const requestsPerSecond = latencies.length / ((performance.now() - started) / 1000);

    // A new post, followed until every instance's Q6 serves it.
    const visible: number[] = [];
    for (let sample = 0; sample < 5; sample++) {
      const postId = (await call(cluster.url()!, "POST", "/posts", users[sample], { title: `new ${sample}`, content: "followed" })).body.postId;
      const inEveryFeed = async () =>
        (
          await Promise.all(
            bases.map(async (base) => (await call(base, "GET", "/feed", users[0])).body.items.some((p: { postId: string }) => p.postId === postId)),
          )
        ).every(Boolean);
      visible.push(await msUntil(inEveryFeed, { everyMs: 20, limitMs: 30_000, what: "a new post in every instance's Q6" }));
    }

    let rebalanceSeconds: number | undefined;
    let hubRebalanceSeconds: number | undefined;
    if (rebalance && instances > 1) {
      const account = cluster.cosmos()!;
      const client = new CosmosClient({ endpoint: account.endpoint, key: account.key, connectionPolicy: { enableEndpointDiscovery: false } });
      const database = client.database(containerDefinitions.databaseName);
      const ownersIn = (container: string, query: string) => async () => (await database.container(container).items.query<string>(query).fetchAll()).resources;
      const owners = ownersIn(CONTAINERS.leases, "SELECT VALUE c.Owner FROM c WHERE IS_DEFINED(c.LeaseToken)");
      const hubOwners = ownersIn("taskHub", "SELECT VALUE c.owner FROM c WHERE c.kind = 'lease'");
      const victim = `instance-${instances - 1}`;
      const holds = (read: () => Promise<string[]>) => async () => (await read()).includes(victim);
      const takenOver = (read: () => Promise<string[]>) => async () => (await read()).every((owner) => owner && owner !== victim);
      try {
        await msUntil(holds(owners), { everyMs: 500, limitMs: 120_000, what: `a lease owned by ${victim}` });
        await msUntil(holds(hubOwners), { everyMs: 500, limitMs: 120_000, what: `a task hub partition held by ${victim}` });
        await cluster.kill(instances - 1);
        const [changeFeedMs, hubMs] = await Promise.all([
          msUntil(takenOver(owners), { everyMs: 500, limitMs: 180_000, what: `${victim}'s leases taken over` }),
          msUntil(takenOver(hubOwners), { everyMs: 250, limitMs: 180_000, what: `${victim}'s task hub partitions taken over` }),
        ]);
        rebalanceSeconds = changeFeedMs / 1000;
        hubRebalanceSeconds = hubMs / 1000;
      } finally {
        client.dispose();
      }
    }
    return {
      instances,
      requestsPerSecond,
      p95Ms: percentile(latencies, 95),
      visibleMs: { p50: percentile(visible, 50), max: Math.max(...visible) },
      rebalanceSeconds,
      hubRebalanceSeconds,
    };
  } finally {
    await cluster.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * The app on 1, 2, ... `upTo` instances, one count after another. On a 2-core machine more
 * instances mean more processes sharing the cores: the figure is what the sharing costs and
 * that nothing breaks, not a speed-up. The rebalance (60 s and more) is measured for `upTo` only.
 */
export async function measureInstances(options: { upTo: number; seconds: number; rebalance: boolean }): Promise<InstanceFigures[]> {
  const figures: InstanceFigures[] = [];
  for (let n = 1; n <= options.upTo; n++) figures.push(await measureCount(n, options.seconds, options.rebalance && n === options.upTo));
  return figures;
}
