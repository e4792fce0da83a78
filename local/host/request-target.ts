import type { IncomingMessage } from "node:http";

/**
 * What a request addresses: its URL, checked before anything else reads it. A Host header that
 * is no authority, or a request target that is no URL, is the client's error (400), never an
 * exception in the host.
 */
const AUTHORITY = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)(?::(\d{1,5}))?$/;

/** The request's URL, or undefined when its Host or target cannot form one. */
export function requestUrl(req: IncomingMessage): URL | undefined {
  const host = req.headers.host ?? "localhost";
  const authority = AUTHORITY.exec(host);
  if (!authority || (authority[2] !== undefined && Number(authority[2]) > 65535)) return undefined;
  const target = req.url ?? "/";
  try {
    // Absolute form (`GET http://host/path`) names its own authority; origin form is relative to Host.
    const url = target.startsWith("/") ? new URL(target, `http://${host}`) : new URL(target);
    return url.protocol === "http:" ? url : undefined;
  } catch {
    return undefined;
  }
}

/** Names only this machine can mean: a page on another site reaches them only through DNS rebinding, which these refuse. */
export function isLoopbackHost(hostname: string): boolean {
  const name = hostname.toLowerCase();
  return name === "localhost" || name.endsWith(".localhost") || name === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name);
}

/** Loopback names always; others only when listed in LOCAL_ALLOWED_HOSTS (`*`: any). */
export function isAllowedHost(hostname: string, allowed: readonly string[]): boolean {
  return isLoopbackHost(hostname) || allowed.includes("*") || allowed.some((name) => name.toLowerCase() === hostname.toLowerCase());
}
