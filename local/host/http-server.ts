import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { randomUUID } from "node:crypto";
import { HttpRequest, InvocationContext, type HttpResponseInit } from "@azure/functions";
import type { Route } from "../../src/api/route-definition";
import { serveLocalRoute } from "./local-routes";
import type { DurableHost } from "./durable/host";
import { durableApiBase, serveDurableApi } from "./durable/http-api";
import { problem } from "./problem";
import { readBody } from "./request-body";
import { isAllowedHost } from "embedded-cosmos";
import { requestUrl } from "./request-target";
import { Router } from "./router";
import type { CosmosUsage } from "../../src/store/metering";
import { cosmosUsageOf } from "../../src/api/http";
import { traceId } from "../../src/telemetry";
import { serveWeb, type WebOptions } from "./web";

function writeResponse(res: ServerResponse, response: HttpResponseInit): void {
  const headers = Object.fromEntries(Object.entries((response.headers ?? {}) as Record<string, string>));
  // CORS headers set earlier on `res` stay: writeHead merges them with these.
  let body: string | Buffer | undefined;
  if (response.jsonBody !== undefined) {
    body = JSON.stringify(response.jsonBody);
    headers["content-type"] ??= "application/json";
  } else if (typeof response.body === "string" || Buffer.isBuffer(response.body)) {
    body = response.body;
  }
  res.writeHead(response.status ?? 200, headers);
  res.end(body);
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
}

/** A request's line in npm start's output: status, time, and what it cost in Cosmos DB. */
function requestLine(req: IncomingMessage, res: ServerResponse, ms: number, usage: CosmosUsage | undefined): string {
  const line = `${req.method} ${req.url} ${res.statusCode} ${ms.toFixed(0)}ms`;
  if (!usage) return line;
  const requests = usage.requests.length;
  return `${line} · ${requests} Cosmos DB request${requests === 1 ? "" : "s"} · ${usage.requestCharge.toFixed(2)} RU`;
}

const traceSuffix = () => {
  const id = traceId();
  return id ? ` (trace ${id})` : "";
};

/** Serves the route table over HTTP with the same HttpRequest/InvocationContext the Functions host builds. */
export function createHttpServer(routes: readonly Route[], options: HttpServerOptions): Server {
  const router = new Router(routes);
  const { log, corsAllowedOrigins = [], web, allowedHosts = [], logRequests = true, durable, ops } = options;
  /** What each API request cost in Cosmos DB, for its log line. */
  const costs = new WeakMap<ServerResponse, CosmosUsage>();

  async function answer(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    if (!isAllowedHost(url.hostname, allowedHosts)) {
      return problem(
        res,
        403,
        "Forbidden",
        `This host answers loopback host names only, not '${url.hostname}'; LOCAL_ALLOWED_HOSTS lists others it may answer.`,
      );
    }
    if (url.pathname.startsWith("/local/")) return serveLocalRoute(req, res, url, { devToken: web?.devToken, ops });
    const durableBase = durable && durableApiBase(url.pathname);
    if (durable && durableBase) return serveDurableApi(req, res, url, durable, durableBase, log);
    if (applyCors(req, res, corsAllowedOrigins).preflight) {
      res.writeHead(204);
      res.end();
      return;
    }
    if (web && !url.pathname.startsWith("/api/") && (await serveWeb(req, res, url.pathname, web))) return;
    const match = router.match(req.method ?? "GET", url.pathname);
    if (!("route" in match)) {
      if (match.status === 405)
        return problem(res, 405, "Method Not Allowed", `Use ${match.allow!.join(", ")} on ${url.pathname}.`, { allow: match.allow!.join(", ") });
      return problem(res, 404, "Not Found", `No route for ${url.pathname}.`);
    }
    const body = await readBody(req);
    if (body === undefined) return problem(res, 413, "Payload Too Large", "The request body is too large.");
    const headers = Object.fromEntries(Object.entries(req.headers).flatMap(([k, v]) => (v === undefined ? [] : [[k, Array.isArray(v) ? v.join(", ") : v]])));
    const request = new HttpRequest({
      method: req.method,
      url: url.toString(),
      headers,
      params: match.params,
      body: body.length > 0 ? { bytes: body } : undefined,
    });
    const context = new InvocationContext({
      functionName: match.route.name,
      invocationId: randomUUID(),
      // A handler logs inside its request's span: the line carries the trace id, as in Application Insights.
      logHandler: (level, ...args) => log(`[${match.route.name}] ${level}: ${args.map(String).join(" ")}${traceSuffix()}`),
    });
    const result = await match.route.handler(request, context);
    // The route's own wrapper measured its Cosmos DB calls (src/api/http.ts): the log line takes that measure.
    const usage = cosmosUsageOf(request);
    if (usage) costs.set(res, usage);
    writeResponse(res, result);
  }

  const server = createServer((req, res) => {
    const started = performance.now();
    if (logRequests) res.on("finish", () => log(requestLine(req, res, performance.now() - started, costs.get(res))));
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
