import type { AddressInfo } from "node:net";
import { HttpRequest, InvocationContext, type HttpResponseInit } from "@azure/functions";
import { createHttpServer } from "local-host";
import { loadApp } from "../local/app-entry";
import { routes } from "../src/api/routes";
import type { BlogStore } from "../src/store/client";
import { readFeed } from "../src/store/feed";
import { readPost } from "../src/store/posts";
import { percentile } from "./measure";
import type { ApiOverhead } from "./report";

async function timed(call: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await call();
  return performance.now() - started;
}

/** Q2 and Q6 as a bare store call, their handler called directly, through the worker's invocation and through the HTTP API of the local host. */
export async function apiOverhead(store: BlogStore, iterations: number, postIds: string[], feedSize: number, pick: () => number): Promise<ApiOverhead[]> {
  const app = await loadApp({ store });
  const server = createHttpServer(app.http, { log: () => {} });
  /** The app's HTTP functions by name, found once: the invocation's timings hold the invocation, not a search of the app's functions. */
  const httpFunctions = new Map(app.http.map((fn) => [fn.name, fn]));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;
  const cases: [string, (id: string) => Promise<unknown>, (id: string) => string][] = [
    ["Q2 get post", (id) => readPost(store, id), (id) => `${base}/posts/${id}`],
    [`Q6 feed (${feedSize})`, () => readFeed(store, feedSize), () => `${base}/feed?limit=${feedSize}`],
  ];
  /** The route a URL of the two cases calls, with its parameters and query. */
  const callOf = (url: string) => {
    const { pathname, searchParams } = new URL(url);
    const path = pathname.replace(/^\/api\//, "");
    const route = path === "feed" ? routes.find((r) => r.name === "getFeed")! : routes.find((r) => r.name === "getPost")!;
    const params: Record<string, string> = path === "feed" ? {} : { postId: path.split("/")[1] };
    return { route, params, query: Object.fromEntries(searchParams) };
  };
  /** The route's handler called directly, with the request the programming model would make: validation, metering, serialization, no HTTP. */
  const viaHandler = async (url: string) => {
    const { route, params, query } = callOf(url);
    const request = new HttpRequest({ method: "GET", url, params, query });
    const response = (await route.handler(request, new InvocationContext({ functionName: route.name, logHandler: () => {} }), { store })) as HttpResponseInit;
    if (response.status !== 200) throw new Error(`${url} -> ${response.status}`);
    JSON.stringify(response.jsonBody); // the host serializes the body
  };
  /**
   * The same call as the Functions worker makes it, no HTTP: the programming model
   * (`@azure/functions`) turns the host's data into the HttpRequest and the handler's answer into
   * the host's (through undici's Request and Response), with the app's invocation hooks.
   */
  const viaInvocation = async (url: string) => {
    const { route, params, query } = callOf(url);
    const { response } = await httpFunctions.get(route.name)!.invoke({ method: "GET", url, headers: {}, params, query });
    if (response.statusCode !== "200") throw new Error(`${url} -> ${response.statusCode} through the invocation`);
  };
  const results: ApiOverhead[] = [];
  try {
    for (const [request, bare, url] of cases) {
      const bareMs: number[] = [];
      const handlerMs: number[] = [];
      const invocationMs: number[] = [];
      const httpMs: number[] = [];
      for (let i = 0; i <= iterations; i++) {
        const id = postIds[Math.floor(pick() * postIds.length)];
        const b = await timed(() => bare(id));
        const d = await timed(() => viaHandler(url(id)));
        const v = await timed(() => viaInvocation(url(id)));
        const h = await timed(async () => {
          const response = await fetch(url(id));
          if (!response.ok) throw new Error(`${url(id)} -> ${response.status}`);
          await response.arrayBuffer();
        });
        if (i > 0) {
          // the first round warms connections and caches
          bareMs.push(b);
          handlerMs.push(d);
          invocationMs.push(v);
          httpMs.push(h);
        }
      }
      const stats = (ms: number[]) => {
        ms.sort((a, b) => a - b);
        return { p50: percentile(ms, 50), p95: percentile(ms, 95) };
      };
      const [bareStats, handlerStats, invocationStats, httpStats] = [stats(bareMs), stats(handlerMs), stats(invocationMs), stats(httpMs)];
      results.push({
        request,
        bare: bareStats,
        handler: handlerStats,
        invocation: invocationStats,
        http: httpStats,
        handlerRatio: handlerStats.p50 / bareStats.p50,
        ratio: httpStats.p50 / bareStats.p50,
      });
    }
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  return results;
}
