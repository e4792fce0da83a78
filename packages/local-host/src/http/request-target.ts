import type { IncomingMessage } from "node:http";
import { hostnameOf } from "embedded-cosmos";

/**
 * What a request addresses: its URL, checked before anything else reads it. A Host header that
 * is no authority, or a request target that is no URL, is the client's error (400), never an
 * exception in the host.
 */
/** The request's URL, or undefined when its Host or target cannot form one. */
export function requestUrl(req: IncomingMessage): URL | undefined {
  const host = req.headers.host ?? "localhost";
  if (hostnameOf(host) === undefined) return undefined;
  const target = req.url ?? "/";
  try {
    // Absolute form (`GET http://host/path`) names its own authority; origin form is relative to Host.
    const url = target.startsWith("/") ? new URL(target, `http://${host}`) : new URL(target);
    return url.protocol === "http:" ? url : undefined;
  } catch {
    return undefined;
  }
}
