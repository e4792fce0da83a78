import type { IncomingMessage, ServerResponse } from "node:http";
import { problem } from "./http/problem";
import { readBody } from "./http/request-body";
import { isLoopbackHost } from "embedded-cosmos";

/** Dev sign-in, as the app defines it: what is wrong with a user id (undefined when nothing), and a token for a good one. */
export interface DevSignIn {
  check(userId: string): string | undefined;
  sign(userId: string): Promise<string>;
}

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
  devSignIn?: DevSignIn;
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
  const signIn = routes.devSignIn;
  if (req.method !== "POST") return problem(res, 405, "Method Not Allowed", `Use POST on ${url.pathname}.`, { allow: "POST" });
  const userId = ((await readJson(req)) as { userId?: unknown } | undefined)?.userId;
  if (!signIn)
    return problem(
      res,
      404,
      "Not Found",
      "Dev sign-in is off: AUTH_DEV_SECRET is not set, or the store is a real account (LOCAL_DEV_SIGN_IN=true turns it on).",
    );
  if (typeof userId !== "string") return problem(res, 400, "Bad Request", "The body must be JSON with a string userId.");
  const wrong = signIn.check(userId);
  if (wrong !== undefined) return problem(res, 400, "Bad Request", wrong);
  res.writeHead(200, { "content-type": "application/json", "cache-control": "no-store" });
  res.end(JSON.stringify({ token: await signIn.sign(userId) }));
}

/** GET /local/ops: the operations figures, as the metrics stand now. */
async function serveOps(req: IncomingMessage, res: ServerResponse, ops: LocalRoutes["ops"]): Promise<void> {
  if (req.method !== "GET") return problem(res, 405, "Method Not Allowed", "Use GET on /local/ops.", { allow: "GET" });
  if (!ops) return problem(res, 404, "Not Found", "This host has no operations figures.");
  res.writeHead(200, { "content-type": "application/json", "cache-control": "no-store" });
  res.end(JSON.stringify(await ops()));
}
