import { readFile } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { extname, join, normalize, sep } from "node:path";
import type { DevSignIn } from "./local-routes";

export interface WebOptions {
  /** The built front end (dist/web). */
  dir: string;
  /** What the front end reads from `config.json`: where the API is and how people sign in (dev tokens, or Entra ID to try it locally). */
  config: { apiBase: string; auth: { mode: "dev" } | { mode: "entra"; clientId: string; authority: string; scope: string; protocol?: "oidc" } };
  /** Signs a dev token for a user id; the "sign in as" box calls it. Absent: dev sign-in is off. */
  devSignIn?: DevSignIn;
  /** Where the bundle's source maps are (dist/web-sourcemaps); served only when given (`npm start -- --source-maps`). */
  sourceMapsDir?: string;
}

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".map": "application/json",
  ".json": "application/json",
};

/**
 * The front end may load and call only its own origin (the API is `/api` locally), and no
 * other site may frame it. Azure's Static Web Apps send the same policy, with the API's origin
 * in connect-src (web/write-config.mjs writes it into staticwebapp.config.json).
 */
export const WEB_SECURITY_HEADERS = {
  "content-security-policy":
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-src 'none'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'; object-src 'none'",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "strict-origin-when-cross-origin",
} as const;

/** The headers for `web`: with Entra ID sign-in, MSAL also talks to (and frames) the authority. */
function securityHeaders(web: WebOptions): Record<string, string> {
  if (web.config.auth.mode !== "entra") return WEB_SECURITY_HEADERS;
  const authority = new URL(web.config.auth.authority).origin;
  const policy = WEB_SECURITY_HEADERS["content-security-policy"]
    .replace("connect-src 'self'", `connect-src 'self' ${authority}`)
    .replace("frame-src 'none'", `frame-src ${authority}`);
  return { ...WEB_SECURITY_HEADERS, "content-security-policy": policy };
}

function send(res: ServerResponse, web: WebOptions, status: number, type: string, body: string | Buffer, cache = "no-cache"): void {
  res.writeHead(status, { ...securityHeaders(web), "content-type": type, "cache-control": cache });
  res.end(body);
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
 * dist/web at `/` and `config.json`. Returns false for paths it does not serve.
 */
export async function serveWeb(req: IncomingMessage, res: ServerResponse, pathname: string, web: WebOptions): Promise<boolean> {
  if (req.method !== "GET" && req.method !== "HEAD") return false;
  if (pathname === "/config.json") return (send(res, web, 200, "application/json", JSON.stringify(web.config)), true);
  const relative = filePath(pathname);
  if (relative === undefined || relative.split(sep).includes("..") || !Object.hasOwn(TYPES, extname(relative))) return false;
  const isMap = extname(relative) === ".map";
  if (isMap && !web.sourceMapsDir) return false;
  try {
    const body = await readFile(join(isMap ? web.sourceMapsDir! : web.dir, relative));
    // index.html always fresh; the hashed chunks may be kept.
    send(res, web, 200, TYPES[extname(relative)], body, relative.startsWith("chunks") ? "public, max-age=31536000, immutable" : "no-cache");
  } catch {
    if (relative !== "index.html") return false;
    send(res, web, 404, "text/plain; charset=utf-8", "The web front end is not built: run `npm run build` (npm start builds it).");
  }
  return true;
}
