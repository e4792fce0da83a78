import type { IncomingMessage, ServerResponse } from "node:http";
import { LIMITS } from "../../src/model/limits";
import { problem } from "./problem";
import { readBody } from "./request-body";
import { isLoopbackHost } from "embedded-cosmos";

/** Signs a dev token for a user id; absent when dev sign-in is off. */
export type DevTokenSigner = (userId: string) => Promise<string>;

/** The request's JSON body, at most 4 KiB; undefined when longer or not JSON. */
async function readJson(req: IncomingMessage): Promise<unknown> {
  const body = await readBody(req, 4096);
  try {
    return body === undefined ? undefined : JSON.parse(body.toString("utf8"));
  } catch {
    return undefined;
  }
}

/** What `/local/*` serves: dev sign-in (when on) and the operations page's figures. */
export interface LocalRoutes {
  devToken?: DevTokenSigner;
  ops?: () => Promise<unknown>;
}

/**
 * `/local/*`: conveniences of `npm start` that must never reach another site. No CORS, a
 * loopback Host only (whatever LOCAL_ALLOWED_HOSTS says), and a browser's request only from a
 * page of this very origin; so neither a page elsewhere nor DNS rebinding can mint a token or
 * read the operations figures.
 */
export async function serveLocalRoute(req: IncomingMessage, res: ServerResponse, url: URL, routes: LocalRoutes): Promise<void> {
  if (!isLoopbackHost(url.hostname)) return problem(res, 403, "Forbidden", `${url.pathname} answers loopback host names only (localhost, 127.0.0.1, [::1]).`);
  const origin = req.headers.origin;
  if (origin !== undefined && origin !== url.origin)
    return problem(res, 403, "Forbidden", `${url.pathname} answers pages of ${url.origin} only, not of ${origin}.`);
  if (url.pathname === "/local/ops") return serveOps(req, res, routes.ops);
  if (url.pathname !== "/local/dev-token") return problem(res, 404, "Not Found", `No route for ${url.pathname}.`);
  const signer = routes.devToken;
  if (req.method !== "POST") return problem(res, 405, "Method Not Allowed", `Use POST on ${url.pathname}.`, { allow: "POST" });
  const userId = ((await readJson(req)) as { userId?: unknown } | undefined)?.userId;
  if (!signer)
    return problem(
      res,
      404,
      "Not Found",
      "Dev sign-in is off: AUTH_DEV_SECRET is not set, or the store is a real account (LOCAL_DEV_SIGN_IN=true turns it on).",
    );
  if (typeof userId !== "string" || !LIMITS.idPattern.test(userId)) {
    return problem(res, 400, "Bad Request", "userId must be 1-128 of A-Z, a-z, 0-9, '_', '.', '@', '|', '-'.");
  }
  res.writeHead(200, { "content-type": "application/json", "cache-control": "no-store" });
  res.end(JSON.stringify({ token: await signer(userId) }));
}

/** GET /local/ops: the operations figures, as the metrics stand now. */
async function serveOps(req: IncomingMessage, res: ServerResponse, ops: LocalRoutes["ops"]): Promise<void> {
  if (req.method !== "GET") return problem(res, 405, "Method Not Allowed", "Use GET on /local/ops.", { allow: "GET" });
  if (!ops) return problem(res, 404, "Not Found", "This host has no operations figures.");
  res.writeHead(200, { "content-type": "application/json", "cache-control": "no-store" });
  res.end(JSON.stringify(await ops()));
}
