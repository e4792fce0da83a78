import { HttpRequest, InvocationContext } from "@azure/functions";
import { startCosmos, type CosmosOptions, type RunningCosmos } from "embedded-cosmos";
import { devToken } from "../../local/dev-auth";
import { Router } from "local-host";
import { routes } from "../../src/api/routes";
import type { Settings } from "../../src/config";
import { createStore, type BlogStore } from "../../src/store/client";
import { measureCosmos, type CosmosUsage } from "../../src/store/metering";
import { provision } from "../../src/store/provision";

export const TEST_SECRET = "test-secret-of-at-least-thirty-two-characters!!";

export interface ApiResponse {
  status: number;
  headers: Record<string, string>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

export interface RequestOptions {
  body?: unknown;
  /** Sent as-is instead of JSON-encoding `body`. */
  rawBody?: string;
  /** Sent as these bytes, exactly (other encodings than UTF-8). */
  rawBytes?: Uint8Array;
  /** A user id to sign a dev token for, or a literal Authorization header value. */
  as?: string;
  authorization?: string;
  headers?: Record<string, string>;
  /** The store the route works on: the fixture's unless a test brings another (one that stalls some requests, say). */
  store?: BlogStore;
}

export interface ApiFixture {
  cosmos: RunningCosmos;
  blog: BlogStore;
  settings: Settings;
  request(method: string, path: string, options?: RequestOptions): Promise<ApiResponse>;
  /** Like `request`, also returning every Cosmos DB request the call made. */
  measured(method: string, path: string, options?: RequestOptions): Promise<{ response: ApiResponse; usage: CosmosUsage }>;
  token(userId: string): Promise<string>;
  /** Receives every line a handler logs (the invocation's log). */
  onLog(listener: (line: string) => void): void;
  /** Creates a user profile through the API. */
  user(userId: string, username?: string): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Embedded Cosmos DB + provisioning + the real handlers, called the way the Functions host
 * calls them: with @azure/functions' HttpRequest and InvocationContext.
 */
export async function apiFixture(
  options: { cosmos?: CosmosOptions; settings?: Partial<Omit<Settings, "cosmos">>; maxRetryWaitSeconds?: number; now?: () => number } = {},
): Promise<ApiFixture> {
  const cosmos = await startCosmos(options.cosmos);
  const blog = createStore(
    {
      cosmos: { endpoint: cosmos.endpoint, key: cosmos.key, databaseName: "blog", maxRetryWaitSeconds: options.maxRetryWaitSeconds },
      auth: { devSecret: TEST_SECRET },
      softDeleteTtlSeconds: 3600,
      // Tests read the feed right after changing it; the micro-cache has tests of its own.
      feedCacheMs: 0,
      ...options.settings,
    },
    { now: options.now },
  );
  const { settings } = blog;
  await provision(blog.client, settings.cosmos.databaseName);
  const router = new Router(routes);
  const listeners: ((line: string) => void)[] = [];

  async function request(method: string, path: string, opts: RequestOptions = {}): Promise<ApiResponse> {
    const url = new URL(path, "http://localhost:7071");
    const match = router.match(method, url.pathname);
    if (!("route" in match)) return { status: match.status, headers: {}, body: undefined };
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.as !== undefined) headers.authorization = `Bearer ${await devToken(opts.as, TEST_SECRET)}`;
    if (opts.authorization !== undefined) headers.authorization = opts.authorization;
    const body = opts.rawBody ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body));
    if (body !== undefined) headers["content-type"] ??= "application/json";
    const sent = opts.rawBytes !== undefined ? { bytes: opts.rawBytes } : body === undefined ? undefined : { string: body };
    const httpRequest = new HttpRequest({ method, url: url.toString(), headers, params: match.params, body: sent });
    const context = new InvocationContext({
      functionName: match.route.name,
      logHandler: (level, ...args) => listeners.forEach((listen) => listen(`${level}: ${args.map(String).join(" ")}`)),
    });
    const response = await match.route.handler(httpRequest, context, { store: opts.store ?? blog });
    const responseHeaders = Object.fromEntries(Object.entries((response.headers ?? {}) as Record<string, string>).map(([k, v]) => [k.toLowerCase(), v]));
    // A kept answer comes serialized (`body`); every other JSON answer as `jsonBody`.
    const answered = typeof response.body === "string" ? JSON.parse(response.body) : response.jsonBody;
    return { status: response.status ?? 200, headers: responseHeaders, body: answered };
  }

  return {
    cosmos,
    blog,
    settings,
    request,
    async measured(method, path, opts) {
      const { result, usage } = await measureCosmos(() => request(method, path, opts));
      return { response: result, usage };
    },
    token: (userId) => devToken(userId, TEST_SECRET),
    onLog: (listener) => void listeners.push(listener),
    async user(userId, username = userId) {
      const response = await request("POST", "/api/users", { as: userId, body: { username } });
      if (response.status !== 201) throw new Error(`creating user ${userId} failed: ${response.status} ${JSON.stringify(response.body)}`);
    },
    async stop() {
      blog.dispose();
      await cosmos.stop();
    },
  };
}
