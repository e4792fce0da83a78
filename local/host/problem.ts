import type { ServerResponse } from "node:http";

/** An RFC 9457 problem answered by the local host itself (before or beside the API's handlers). */
export function problem(res: ServerResponse, status: number, title: string, detail: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/problem+json", ...headers });
  res.end(JSON.stringify({ type: `https://httpstatuses.io/${status}`, title, status, detail }));
}
