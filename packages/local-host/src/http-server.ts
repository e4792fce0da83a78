import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { serveLocalRoute } from "./local-routes";
import type { DurableHost } from "./durable/host";
import { durableApiBase, serveDurableApi } from "./durable/http-api";
import { problem } from "./http/problem";
import { readBody } from "./http/request-body";
import { isAllowedHost } from "embedded-cosmos";
import { requestUrl } from "./http/request-target";
import { Router } from "./http/router";
import { serveWeb, type WebOptions } from "./web";
import type { RpcHttpData } from "./worker/functions-core";
import type { HttpFunction } from "./worker/function-app";

/** A cookie of the function's response as a Set-Cookie value. */
function setCookie(cookie: NonNullable<RpcHttpData["cookies"]>[number]): string {
  const attributes = Object.entries(cookie)
    .filter(([name, value]) => name !== "name" && name !== "value" && value !== undefined && value !== null && value !== false)
    .map(([name, value]) => (value === true ? name : `${name}=${String((value as { value?: unknown }).value ?? value)}`));
  return [`${cookie.name}=${cookie.value}`, ...attributes].join("; ");
}

/** Writes what the function answered (the worker's RPC form) as the host does. */
function writeResponse(res: ServerResponse, response: RpcHttpData): void {
  // CORS headers set earlier on `res` stay: writeHead merges them with these.
  const headers: Record<string, string | string[]> = { ...response.headers };
  if (response.cookies?.length) headers["set-cookie"] = response.cookies.map(setCookie);
  const body = response.body?.bytes ? Buffer.from(response.body.bytes) : response.body?.string;
  res.writeHead(Number(response.statusCode ?? 200), headers);
  res.end(body && body.length > 0 ? body : undefined);
}

/** What a browser on another origin may send and read, as the platform's CORS answers for a function app. */
const CORS_HEADERS = {
  methods: "GET, POST, PUT, DELETE, OPTIONS",
  requestHeaders: "authorization, content-type, if-match, if-none-match, idempotency-key",
};

/**
 * CORS as App Service answers it in front of a function app (`siteConfig.cors`): preflights of
 * an allowed origin get 204 with what may be sent; responses to it name the origin. Other origins get no CORS headers (the browser then refuses).
 */
function applyCors(req: IncomingMessage, res: ServerResponse, allowed: readonly string[]): { preflight: boolean } {
  const origin = req.headers.origin;
  if (!origin || !(allowed.includes("*") || allowed.includes(origin))) return { preflight: false };
  res.setHeader("access-control-allow-origin", allowed.includes("*") ? "*" : origin);
  res.setHeader("vary", "Origin");
  if (req.method === "OPTIONS" && req.headers["access-control-request-method"]) {
    res.setHeader("access-control-allow-methods", CORS_HEADERS.methods);
    res.setHeader("access-control-allow-headers", CORS_HEADERS.requestHeaders);
    res.setHeader("access-control-max-age", "600");
    return { preflight: true };
  }
  // The headers a client may read are the functions' own to name (Access-Control-Expose-Headers on every answer), as in Azure.
  return { preflight: false };
}

/** Servers that are shutting down: they answer new requests 503 while in-flight ones finish. */
const draining = new WeakSet<Server>();

/**
 * Stops the server as a host being recycled does: no new connections, new requests on open
 * ones refused with 503 + Retry-After, in-flight requests answered; whatever is still open
 * after `graceMs` is cut.
 */
export async function drainHttp(server: Server, graceMs: number): Promise<void> {
  draining.add(server);
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const grace = setTimeout(() => server.closeAllConnections(), graceMs);
  await closed;
  clearTimeout(grace);
}

export interface HttpServerOptions {
  log: (line: string) => void;
  /** Origins a browser may call the API from (`*` for any): CORS_ALLOWED_ORIGINS. Never applies to `/local/*`. */
  corsAllowedOrigins?: readonly string[];
  web?: WebOptions;
  /** Host names answered besides loopback ones (LOCAL_ALLOWED_HOSTS; `*` any). */
  allowedHosts?: readonly string[];
  /** A log line per request (LOG_REQUESTS; default on). */
  logRequests?: boolean;
  /** Serve the Durable Functions HTTP API over this durable host (loopback only). */
  durable?: DurableHost;
  /** The operations page's figures, at /local/ops (loopback only). */
  ops?: () => Promise<unknown>;
  /** host.json's extensions.http.routePrefix (default `api`). */
  routePrefix?: string;
  /** More for a request's log line, from the request the function was given (what it cost, say). */
  describeRequest?: (request: unknown) => string | undefined;
}

/** A request's line in npm start's output: status, time, and what the app says of it. */
function requestLine(req: IncomingMessage, res: ServerResponse, ms: number, description: string | undefined): string {
  const line = `${req.method} ${req.url} ${res.statusCode} ${ms.toFixed(0)}ms`;
  return description ? `${line} · ${description}` : line;
}

/** The request as the host hands it to the worker (RpcHttp). */
function rpcRequest(req: IncomingMessage, url: URL, params: Record<string, string>, body: Buffer): RpcHttpData {
  const headers = Object.fromEntries(Object.entries(req.headers).flatMap(([k, v]) => (v === undefined ? [] : [[k, Array.isArray(v) ? v.join(", ") : v]])));
  return { method: req.method, url: url.toString(), headers, params, body: body.length > 0 ? { bytes: body } : undefined };
}

/**
 * Serves the app's HTTP functions as the Functions host does: each request matched to a
 * registered route and method, and handed to the function through the worker's invocation.
 * Core Tools does not check auth levels locally; neither does this host.
 */
export function createHttpServer(functions: readonly HttpFunction[], options: HttpServerOptions): Server {
  const prefix = `/${options.routePrefix ?? "api"}`;
  const router = new Router(functions, prefix);
  const { log, corsAllowedOrigins = [], web, allowedHosts = [], logRequests = true, durable, ops, describeRequest } = options;
  /** What the app says of each request, for its log line. */
  const descriptions = new WeakMap<ServerResponse, string>();

  async function answer(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    if (!isAllowedHost(url.hostname, allowedHosts)) {
      return problem(
        res,
        403,
        "Forbidden",
        `This host answers loopback host names only, not '${url.hostname}'; LOCAL_ALLOWED_HOSTS lists others it may answer.`,
      );
    }
    if (url.pathname.startsWith("/local/")) return serveLocalRoute(req, res, url, { devSignIn: web?.devSignIn, ops });
    const durableBase = durable && durableApiBase(url.pathname);
    if (durable && durableBase) return serveDurableApi(req, res, url, durable, durableBase, log);
    if (applyCors(req, res, corsAllowedOrigins).preflight) {
      res.writeHead(204);
      res.end();
      return;
    }
    if (web && !url.pathname.startsWith(`${prefix}/`) && (await serveWeb(req, res, url.pathname, web))) return;
    const match = router.match(req.method ?? "GET", url.pathname);
    if (!("route" in match)) {
      if (match.status === 405)
        return problem(res, 405, "Method Not Allowed", `Use ${match.allow!.join(", ")} on ${url.pathname}.`, { allow: match.allow!.join(", ") });
      return problem(res, 404, "Not Found", `No route for ${url.pathname}.`);
    }
    const body = await readBody(req);
    if (body === undefined) return problem(res, 413, "Payload Too Large", "The request body is too large.");
    const { response, request } = await match.route.invoke(rpcRequest(req, url, match.params, body));
    const description = describeRequest?.(request);
    if (description) descriptions.set(res, description);
    writeResponse(res, response);
  }

  const server = createServer((req, res) => {
    const started = performance.now();
    if (logRequests) res.on("finish", () => log(requestLine(req, res, performance.now() - started, descriptions.get(res))));
    if (draining.has(server)) {
      res.setHeader("connection", "close");
      return problem(res, 503, "Service Unavailable", "The host is shutting down; retry shortly.", { "retry-after": "1" });
    }
    const url = requestUrl(req);
    if (!url) return problem(res, 400, "Bad Request", "The Host header or the request target does not form a valid http URL.");
    answer(req, res, url).catch((error: unknown) => {
      // A client that hung up mid-body is no fault of the host: one quiet line, no stack.
      if (!req.complete && (req.destroyed || (error as NodeJS.ErrnoException).code === "ECONNRESET")) {
        if (logRequests) log(`${req.method} ${url.pathname}: the client closed the connection before its request was complete`);
        return void res.destroy();
      }
      log(`unhandled error: ${(error as Error).stack ?? String(error)}`);
      if (!res.headersSent) problem(res, 500, "Internal Server Error", "The request could not be completed.");
      else res.destroy();
    });
  });
  return server;
}
