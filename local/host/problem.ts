import type { ServerResponse } from "node:http";
import { problemAnswer } from "../../src/api/problems";

/** An RFC 9457 problem answered by the local host itself (before or beside the API's handlers), in the API's shape. */
export function problem(res: ServerResponse, status: number, title: string, detail: string, headers: Record<string, string> = {}): void {
  const answer = problemAnswer(status, title, detail, { headers });
  res.writeHead(answer.status, answer.headers);
  res.end(JSON.stringify(answer.jsonBody));
}
