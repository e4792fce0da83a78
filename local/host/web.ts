import { readFile } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { extname, join, normalize, sep } from "node:path";
import { LIMITS } from "../../src/model/limits";
import { problem } from "./problem";

export interface WebOptions {
  /** The built front end (dist/web). */
  dir: string;
  /** What the front end reads from `config.json`: where the API is and how people sign in. */
  config: { apiBase: string; auth: { mode: "dev" } };
  /** Signs a dev token for a user id; the "sign in as" box calls it. Absent: dev sign-in is off. */
  devToken?: (userId: string) => Promise<string>;
}

const TYPES: Record<string, string> = { ".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8", ".map": "application/json", ".json": "application/json" };

function send(res: ServerResponse, status: number, type: string, body: string | Buffer, cache = "no-cache"): void {
  res.writeHead(status, { "content-type": type, "cache-control": cache, "x-content-type-options": "nosniff" });
  res.end(body);
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  let text = "";
  for await (const chunk of req) {
    text += chunk;
    if (text.length > 4096) return undefined;
  }
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The file a URL path names, relative to dist/web; undefined for a malformed escape (then the path is nobody's: 404). */
function filePath(pathname: string): string | undefined {
  try {
    return normalize(decodeURIComponent(pathname === "/" ? "/index.html" : pathname)).replace(/^[/\\]+/, "");
  } catch {
    return undefined;
  }
}

/**
 * The web front end on the local host, as Static Web Apps serves it in Azure: the files of
 * dist/web at `/`, `config.json`, and (local only) `POST /local/dev-token`. Returns false
 * for paths it does not serve.
 */
export async function serveWeb(req: IncomingMessage, res: ServerResponse, pathname: string, web: WebOptions): Promise<boolean> {
  if (pathname === "/local/dev-token" && req.method === "POST") {
    const userId = ((await readJson(req)) as { userId?: unknown } | undefined)?.userId;
    if (!web.devToken) return problem(res, 404, "Not Found", "Dev sign-in is off: AUTH_DEV_SECRET is not set."), true;
    if (typeof userId !== "string" || !LIMITS.idPattern.test(userId)) {
      return problem(res, 400, "Bad Request", "userId must be 1-128 of A-Z, a-z, 0-9, '_', '.', '@', '|', '-'."), true;
    }
    return send(res, 200, "application/json", JSON.stringify({ token: await web.devToken(userId) })), true;
  }
  if (req.method !== "GET" && req.method !== "HEAD") return false;
  if (pathname === "/config.json") return send(res, 200, "application/json", JSON.stringify(web.config)), true;
  const relative = filePath(pathname);
  if (relative === undefined || relative.split(sep).includes("..") || !TYPES[extname(relative)]) return false;
  try {
    const body = await readFile(join(web.dir, relative));
    // index.html always fresh; the hashed chunks may be kept.
    send(res, 200, TYPES[extname(relative)], body, relative.startsWith("chunks") ? "public, max-age=31536000, immutable" : "no-cache");
  } catch {
    if (relative !== "index.html") return false;
    send(res, 404, "text/plain; charset=utf-8", "The web front end is not built: run `npm run build` (npm start builds it).");
  }
  return true;
}
