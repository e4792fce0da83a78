import type { ServerResponse } from "node:http";

/**
 * An RFC 9457 problem answered by the host itself (before or beside the app's handlers): `type`
 * (about:blank: the status says what happened, RFC 9457 4.2.1), `title`, `status` and `detail`,
 * as application/problem+json.
 */
export function problem(res: ServerResponse, status: number, title: string, detail: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/problem+json", ...headers });
  res.end(JSON.stringify({ type: "about:blank", title, status, detail }));
}
