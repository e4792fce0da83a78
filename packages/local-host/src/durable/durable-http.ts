import { DefaultAzureCredential, type TokenCredential } from "@azure/identity";
import type { TriggeredFunction } from "../worker/function-app";

/** The extension's built-in activity behind `callHttp`: its name in the history, as the extension writes it. */
export const DURABLE_HTTP_ACTIVITY = "BuiltIn::HttpActivity";

/** A durable HTTP request, as the package's CallHttp action carries it. */
export interface DurableHttpRequest {
  method: string;
  uri: string;
  content?: string;
  headers?: Record<string, string>;
  /** A managed identity token for `resource`, added as a bearer token (`ManagedIdentityTokenSource`). */
  tokenSource?: { kind?: string; resource: string };
}

let credential: TokenCredential | undefined;

/**
 * One request of `callHttp`, answered as the extension answers it: status, headers and the body
 * as text. A 202 with Location is polled by the package itself (replay schema V3), so this makes
 * exactly one request. A token source gets its token from DefaultAzureCredential (the managed
 * identity in Azure, the developer's sign-in locally).
 */
export async function durableHttp(request: DurableHttpRequest): Promise<{ statusCode: number; headers: Record<string, string>; content: string }> {
  const headers = new Headers(request.headers);
  if (request.tokenSource?.resource) {
    credential ??= new DefaultAzureCredential();
    const token = await credential.getToken(`${request.tokenSource.resource.replace(/\/$/, "")}/.default`);
    if (!token) throw new Error(`No token for ${request.tokenSource.resource}.`);
    headers.set("authorization", `Bearer ${token.token}`);
  }
  const response = await fetch(request.uri, { method: request.method, headers, body: request.content ?? undefined, redirect: "manual" });
  return { statusCode: response.status, headers: Object.fromEntries(response.headers), content: await response.text() };
}

/** The extension's wait between polls when a 202 names no Retry-After (defaultHttpAsyncRequestSleepTimeMillseconds). */
const DEFAULT_POLL_MS = 30_000;

/**
 * After a 202 with Location to a request that allows the asynchronous pattern: the GET of that
 * location to make next, and how long to wait first, as the extension polls. Else undefined.
 */
export function nextPoll(requestJson: string, resultJson: string): { request: DurableHttpRequest; delayMs: number } | undefined {
  const request = JSON.parse(requestJson) as DurableHttpRequest & { asynchronousPatternEnabled?: boolean };
  const result = JSON.parse(resultJson) as { statusCode: number; headers: Record<string, string> };
  const header = (name: string) => Object.entries(result.headers ?? {}).find(([key]) => key.toLowerCase() === name)?.[1];
  const location = header("location");
  if (result.statusCode !== 202 || !location || request.asynchronousPatternEnabled === false) return undefined;
  const retryAfter = Number(header("retry-after"));
  return {
    request: { ...request, method: "GET", uri: new URL(location, request.uri).href, content: undefined },
    delayMs: Number.isFinite(retryAfter) && retryAfter >= 0 ? retryAfter * 1000 : DEFAULT_POLL_MS,
  };
}

/** The extension's own activity behind callHttp, answering JSON as a registered activity does. */
export const builtInHttp: TriggeredFunction = async (input) => JSON.stringify(await durableHttp(input as DurableHttpRequest));
