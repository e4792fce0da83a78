import autocannon from "autocannon";
import { ChangeFeedStartFrom } from "@azure/cosmos";
import { HttpRequest, InvocationContext, type HttpResponseInit } from "@azure/functions";
import type { AddressInfo } from "node:net";
import { startCosmos } from "embedded-cosmos";
import { devToken } from "../local/dev-auth";
import { createHttpServer } from "local-host";
import { loadApp } from "../local/app-entry";
import { routes } from "../src/api/routes";
import { SETTING_DEFAULTS, type SettingsInput } from "../src/config";
import { handlePostsChanges } from "../src/pipeline/posts-change-feed";
import { createStore, type BlogStore } from "../src/store/client";
import { measureCosmos } from "../src/store/metering";
import { provision } from "../src/store/provision";
import type { PostChange } from "../src/store/copies";

export interface LoadFigures {
  request: string;
  cached: boolean;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Cosmos DB requests the API sent per second of load. */
  cosmosRequestsPerSecond: number;
}

export interface ScaleFigures {
  /** Feed writes the posts change feed handler makes for 1,000 counter-only changes to one post (default FEED_REFRESH_SECONDS). */
  feedWritesPer1000Likes: number;
  /**
   * A hot post under a like storm against a throttled server: what is accepted, what is refused,
   * and whether the count is exact; with group commit (LIKE_BATCH_MAX 50) and with one call per
   * like (1), each with the SDK giving up at once (the API's 429s show) and with its retries.
   */
  likeStorms: LikeStormFigures[];
  /** Q6 and Q2 under a concurrent HTTP load (autocannon, local host), with and without the feed micro-cache (Q2 has none: its cache is a CDN's, by Cache-Control). */
  load: LoadFigures[];
}

export interface LikeStormFigures {
  /** The embedded server's budget per physical partition, standing in for provisioned RU/s. */
  operationsPerSecond: number;
  /** LIKE_BATCH_MAX: changes of one post per stored procedure call at most. */
  likeBatchMax: number;
  /** COSMOS_MAX_RETRY_WAIT_SECONDS: how long the SDK retries a throttled call before the API answers 429. */
  sdkRetryWaitSeconds: number;
  likers: number;
  seconds: number;
  /** Likes answered 201 per second of the storm. */
  acceptedPerSecond: number;
  /** Answers 429 with Retry-After (each liker retries until accepted). */
  throttled: number;
  /** Any other answer (a 500 would be here): must be 0. */
  failed: number;
  /** The post's likeCount at the end, and the like items: both must equal the likers. */
  likeCount: number;
  likeItems: number;
  /** changeLikes calls sent (rolled-back and throttled ones included), and likes per committed call. */
  procedureCalls: number;
  likesPerCall: number;
}

const SECRET = "bench-secret-of-at-least-thirty-two-characters!!";

/** The scale figures of the capacity model, against a fresh embedded server in this process. */
export async function measureScale(options: { loadSeconds: number; connections: number; likers: number }): Promise<ScaleFigures> {
  const cosmos = await startCosmos();
  const settings = (feedCacheMs: number): SettingsInput => ({
    cosmos: { endpoint: cosmos.endpoint, key: cosmos.key, databaseName: "blogscale" },
    auth: { devSecret: SECRET },
    softDeleteTtlSeconds: 3600,
    feedCacheMs,
  });
  let store = createStore(settings(0));
  try {
    await provision(store.client, "blogscale");
    await callRoute(store, "createUser", "author", {}, { username: "author" });
    const postId = ((await callRoute(store, "createPost", "author", {}, { title: "viral", content: "c" })).jsonBody as { postId: string }).postId;
    const iterator = store.posts.items.getChangeFeedIterator<PostChange>({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning(postId) });
    const created = (await iterator.readNext()).result.find((c) => c.type === "post")!;

    // Feed writes for a like storm, through the real handler with a durable starter that records.
    const services = { orchestrations: { ensureStarted: async () => undefined } };
    store.dispose();
    store = createStore({ ...settings(0), feedRefreshSeconds: 5 });
    await handlePostsChanges(store, [created], services);
    const { usage } = await measureCosmos(async () => {
      for (let likes = 1; likes <= 1000; likes++) await handlePostsChanges(store, [{ ...created, likeCount: likes, _lsn: created._lsn + likes }], services);
    });
    const feedWritesPer1000Likes = usage.requests.filter(
      (r) => r.path.includes("/colls/feed/docs") && r.method !== "GET" && !r.isQuery && !r.isQueryPlan,
    ).length;

    const load: LoadFigures[] = [];
    for (const cached of [false, true]) {
      store.dispose();
      store = createStore(settings(cached ? 1000 : 0));
      for (const [request, path] of [
        ["Q6 feed", "/api/feed?limit=20"],
        ["Q2 get post", `/api/posts/${postId}`],
      ] as const) {
        load.push(await loadTest(store, request, path, cached, options));
      }
    }
    const storm = { likers: options.likers, operationsPerSecond: 200 };
    return {
      feedWritesPer1000Likes,
      load,
      likeStorms: [
        await measureLikeStorm({ ...storm, likeBatchMax: SETTING_DEFAULTS.likeBatchMax, sdkRetryWaitSeconds: 0 }),
        await measureLikeStorm({ ...storm, likeBatchMax: 1, sdkRetryWaitSeconds: 0 }),
        await measureLikeStorm({ ...storm, likeBatchMax: SETTING_DEFAULTS.likeBatchMax, sdkRetryWaitSeconds: SETTING_DEFAULTS.maxRetryWaitSeconds }),
        await measureLikeStorm({ ...storm, likeBatchMax: 1, sdkRetryWaitSeconds: SETTING_DEFAULTS.maxRetryWaitSeconds }),
      ],
    };
  } finally {
    store.dispose();
    await cosmos.stop();
  }
}

/** autocannon against the local host's HTTP server, counting the Cosmos DB requests the handlers sent meanwhile. */
async function loadTest(
  store: BlogStore,
  request: string,
  path: string,
  cached: boolean,
  options: { loadSeconds: number; connections: number },
): Promise<LoadFigures> {
  // The server is created inside the measurement, so every request it serves is counted in it.
  const { result, usage } = await measureCosmos(async () => {
    const server = createHttpServer((await loadApp({ store })).http, { log: () => {} });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
      return await autocannon({ url, connections: options.connections, duration: options.loadSeconds });
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${request}: ${result.non2xx} non-2xx responses, ${result.errors} errors`);
  return {
    request,
    cached,
    requestsPerSecond: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    cosmosRequestsPerSecond: usage.requests.filter((r) => !r.isQueryPlan).length / options.loadSeconds,
  };
}

/** A write route's handler, called as the Functions host calls it, signed in as `userId`. */
async function callRoute(store: BlogStore, name: string, userId: string, params: Record<string, string>, body?: unknown): Promise<HttpResponseInit> {
  const route = routes.find((r) => r.name === name)!;
  const headers = { authorization: `Bearer ${await devToken(userId, SECRET)}`, "content-type": "application/json" };
  const request = new HttpRequest({
    method: route.method,
    url: `http://localhost/api/${route.route}`,
    headers,
    params,
    body: body === undefined ? undefined : { string: JSON.stringify(body) },
  });
  return (await route.handler(request, new InvocationContext({ functionName: name, logHandler: () => {} }), { store })) as HttpResponseInit;
}

/**
 * Every liker likes one post at once, against a server whose partitions serve `operationsPerSecond`
 * each; a throttled like waits its Retry-After and tries again, as a client should. The SDK
 * gives up at once (COSMOS_MAX_RETRY_WAIT_SECONDS 0), so the API's 429s are visible.
 */
async function measureLikeStorm(options: {
  likers: number;
  operationsPerSecond: number;
  likeBatchMax: number;
  sdkRetryWaitSeconds: number;
}): Promise<LikeStormFigures> {
  const cosmos = await startCosmos({ operationsPerSecond: options.operationsPerSecond });
  const store = createStore({
    cosmos: { endpoint: cosmos.endpoint, key: cosmos.key, databaseName: "blogstorm", maxRetryWaitSeconds: options.sdkRetryWaitSeconds },
    auth: { devSecret: SECRET },
    softDeleteTtlSeconds: 3600,
    likeBatchMax: options.likeBatchMax,
  });
  const retrying = async (call: () => Promise<HttpResponseInit>, onThrottled = () => {}) => {
    for (;;) {
      const response = await call();
      if (response.status !== 429) return response;
      onThrottled();
      await new Promise((resolve) => setTimeout(resolve, Number((response.headers as Record<string, string>)["retry-after"]) * 1000));
    }
  };
  try {
    await provision(store.client, "blogstorm");
    const likers = Array.from({ length: options.likers }, (_, i) => `fan${i}`);
    for (const userId of ["author", ...likers]) await retrying(() => callRoute(store, "createUser", userId, {}, { username: userId }));
    const post = await retrying(() => callRoute(store, "createPost", "author", {}, { title: "viral", content: "c" }));
    const postId = (post.jsonBody as { postId: string }).postId;
    await new Promise((resolve) => setTimeout(resolve, 1100)); // a full budget when the storm starts
    let throttled = 0;
    let failed = 0;
    const started = performance.now();
    const { usage } = await measureCosmos(() =>
      Promise.all(
        likers.map(async (userId) => {
          const response = await retrying(
            () => callRoute(store, "likePost", userId, { postId }),
            () => throttled++,
          );
          if (response.status !== 201) failed++;
        }),
      ),
    );
    const seconds = (performance.now() - started) / 1000;
    const calls = usage.requests.filter((r) => r.path.endsWith("/sprocs/changeLikes"));
    const committed = calls.filter((r) => r.status === 200).length;
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const { resource } = await store.posts.item(postId, postId).read<{ likeCount: number }>();
    const { resources } = await store.posts.items
      .query<number>({ query: "SELECT VALUE COUNT(1) FROM c WHERE c.type = 'like' AND NOT IS_DEFINED(c.deleted)" }, { partitionKey: postId })
      .fetchAll();
    return {
      operationsPerSecond: options.operationsPerSecond,
      likeBatchMax: options.likeBatchMax,
      sdkRetryWaitSeconds: options.sdkRetryWaitSeconds,
      likers: likers.length,
      seconds,
      acceptedPerSecond: (likers.length - failed) / seconds,
      throttled,
      failed,
      likeCount: resource?.likeCount ?? 0,
      likeItems: resources[0] ?? 0,
      procedureCalls: calls.length,
      likesPerCall: committed === 0 ? 0 : likers.length / committed,
    };
  } finally {
    store.dispose();
    await cosmos.stop();
  }
}
