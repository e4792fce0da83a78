import autocannon from "autocannon";
import { ChangeFeedStartFrom } from "@azure/cosmos";
import { HttpRequest, InvocationContext, type HttpResponseInit } from "@azure/functions";
import type { AddressInfo } from "node:net";
import { startCosmos } from "../local/cosmos";
import { devToken } from "../local/host/dev-auth";
import { createHttpServer } from "../local/host/http-server";
import { routes } from "../src/api/routes";
import type { Settings } from "../src/config";
import { handlePostsChanges } from "../src/pipeline/posts-feed";
import { createStore, useStore } from "../src/store/client";
import { measureCosmos } from "../src/store/metering";
import { provision } from "../src/store/provision";
import type { PostChange } from "../src/store/views";

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
  /** Q6 and Q2 under a concurrent HTTP load (autocannon, local host), with and without the feed micro-cache (Q2 has none: its cache is a CDN's, by Cache-Control). */
  load: LoadFigures[];
}

const SECRET = "bench-secret-of-at-least-thirty-two-characters!!";

/** The scale figures of the capacity model, against a fresh embedded server in this process. */
export async function measureScale(options: { loadSeconds: number; connections: number }): Promise<ScaleFigures> {
  const cosmos = await startCosmos();
  const settings = (feedCacheMs: number): Settings => ({
    cosmos: { endpoint: cosmos.endpoint, key: cosmos.key, databaseName: "blogscale" },
    auth: { devSecret: SECRET },
    softDeleteTtlSeconds: 3600,
    feedCacheMs,
  });
  let store = useStore(createStore(settings(0)));
  try {
    await provision(store.client, "blogscale");
    /** A write route's handler, called as the Functions host calls it, signed in as the author. */
    const call = async (name: "createUser" | "createPost", body: unknown) => {
      const route = routes.find((r) => r.name === name)!;
      const headers = { authorization: `Bearer ${await devToken("author", SECRET)}`, "content-type": "application/json" };
      const request = new HttpRequest({ method: "POST", url: `http://localhost/api/${route.route}`, headers, body: { string: JSON.stringify(body) } });
      return route.handler(request, new InvocationContext({ functionName: name, logHandler: () => {} }));
    };
    await call("createUser", { username: "author" });
    const postId = (((await call("createPost", { title: "viral", content: "c" })) as HttpResponseInit).jsonBody as { postId: string }).postId;
    const iterator = store.posts.items.getChangeFeedIterator<PostChange>({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning(postId) });
    const created = (await iterator.readNext()).result.find((c) => c.type === "post")!;

    // Feed writes for a like storm, through the real handler with a durable starter that records.
    const services = { orchestrations: { ensureStarted: async () => undefined } };
    store.dispose();
    store = useStore(createStore({ ...settings(0), feedRefreshSeconds: 5 }));
    await handlePostsChanges([created], services);
    const { usage } = await measureCosmos(async () => {
      for (let likes = 1; likes <= 1000; likes++) await handlePostsChanges([{ ...created, likeCount: likes, _lsn: created._lsn + likes }], services);
    });
    const feedWritesPer1000Likes = usage.requests.filter((r) => r.path.includes("/colls/feed/docs") && r.method !== "GET" && !r.isQuery && !r.isQueryPlan).length;

    const load: LoadFigures[] = [];
    for (const cached of [false, true]) {
      store.dispose();
      store = useStore(createStore(settings(cached ? 1000 : 0)));
      for (const [request, path] of [["Q6 feed", "/api/feed?limit=20"], ["Q2 get post", `/api/posts/${postId}`]] as const) {
        load.push(await loadTest(request, path, cached, options));
      }
    }
    return { feedWritesPer1000Likes, load };
  } finally {
    store.dispose();
    await cosmos.stop();
  }
}

/** autocannon against the local host's HTTP server, counting the Cosmos DB requests the handlers sent meanwhile. */
async function loadTest(request: string, path: string, cached: boolean, options: { loadSeconds: number; connections: number }): Promise<LoadFigures> {
  // The server is created inside the measurement, so every request it serves is counted in it.
  const { result, usage } = await measureCosmos(async () => {
    const server = createHttpServer(routes, () => {});
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
