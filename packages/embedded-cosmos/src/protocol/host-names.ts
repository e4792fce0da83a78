/**
 * Which host names a local server answers. A page on another site can reach a server on this
 * machine by rebinding its own name to 127.0.0.1 (DNS rebinding); it then sends its own name as
 * Host. Answering loopback names only defeats that, for the API host and the embedded Cosmos DB
 * server alike.
 */

/** Names only this machine can mean. */
export function isLoopbackHost(hostname: string): boolean {
  const name = hostname.toLowerCase();
  return name === "localhost" || name.endsWith(".localhost") || name === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name);
}

/** Loopback names always; others only when listed in LOCAL_ALLOWED_HOSTS (`*`: any). */
export function isAllowedHost(hostname: string, allowed: readonly string[]): boolean {
  return isLoopbackHost(hostname) || allowed.includes("*") || allowed.some((name) => name.toLowerCase() === hostname.toLowerCase());
}

/** The host name of a Host header (`name`, `name:port`, `[v6]:port`); undefined when it is no authority. */
export function hostnameOf(hostHeader: string): string | undefined {
  const authority = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)(?::(\d{1,5}))?$/.exec(hostHeader);
  if (!authority || (authority[2] !== undefined && Number(authority[2]) > 65535)) return undefined;
  return authority[1];
}

/** LOCAL_ALLOWED_HOSTS and the like: comma-separated values, or `*`. */
export const commaList = (value: string | undefined): string[] =>
  (value ?? "")
    .split(",")
    .map((item) => item.trim())
    .filter(Boolean);
