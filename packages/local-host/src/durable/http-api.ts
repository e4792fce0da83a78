import type { IncomingMessage, ServerResponse } from "node:http";
import { InvocationContext, type LogHandler } from "@azure/functions";
import * as df from "durable-functions";
import { problem } from "../http/problem";
import { readBody } from "../http/request-body";
import { isLoopbackHost } from "embedded-cosmos";
import { isTransient } from "../change-feed/cosmos-failures";
import { DurableRequestError, FINISHED, type DurableHost, type InstanceFilter, type InstanceStatus } from "./host";

/** Where the Functions host serves the documented Durable Functions HTTP API (the webhook URLs). */
export const DURABLE_API_PATH = "/runtime/webhooks/durabletask/";
/** Where the extension serves the API its client binding's `rpcBaseUrl` names (the same calls). */
const DURABLE_RPC_PATH = "/durabletask/";
const TASK_HUB = "LocalHub";
/** What every webhook URL carries on Azure (there with the system key `code` as well). */
const REQUIRED_QUERY = `taskHub=${TASK_HUB}&connection=Storage`;

/** The webhook URLs of one instance, as the extension writes them into a check-status response. */
function managementUrls(webhooks: string, id: string) {
  const at = (path: string, query = "") => `${webhooks}instances/${id}${path}?${REQUIRED_QUERY}${query}`;
  return {
    id,
    statusQueryGetUri: at(""),
    sendEventPostUri: at("/raiseEvent/{eventName}"),
    terminatePostUri: at("/terminate", "&reason={text}"),
    rewindPostUri: at("/rewind", "&reason={text}"),
    purgeHistoryDeleteUri: at(""),
    restartPostUri: at("/restart"),
    suspendPostUri: at("/suspend", "&reason={text}"),
    resumePostUri: at("/resume", "&reason={text}"),
  };
}

/**
 * The durable client binding data the extension hands a function: the documented webhook URLs
 * and the `rpcBaseUrl` the package's DurableClient prefers. Here all point at the local host at
 * `origin`; `rpc: false` leaves `rpcBaseUrl` out, so the client takes the webhook URLs.
 */
export function clientBindingData(origin: string, { rpc = true } = {}) {
  const webhooks = `${origin}${DURABLE_API_PATH}`;
  return {
    taskHubName: TASK_HUB,
    creationUrls: {
      createNewInstancePostUri: `${webhooks}orchestrators/{functionName}[/{instanceId}]?${REQUIRED_QUERY}`,
      createAndWaitOnNewInstancePostUri: `${webhooks}orchestrators/{functionName}[/{instanceId}]?timeout={timeoutInSeconds}&pollingInterval={intervalInSeconds}&${REQUIRED_QUERY}`,
    },
    managementUrls: managementUrls(webhooks, "INSTANCEID"),
    baseUrl: webhooks.replace(/\/$/, ""),
    requiredQueryStringParameters: REQUIRED_QUERY,
    ...(rpc ? { rpcBaseUrl: `${origin}${DURABLE_RPC_PATH}`, httpBaseUrl: webhooks } : {}),
  };
}

/**
 * An invocation of `functionName` with a durable client input bound, as the Functions host
 * makes one: `df.getClient(context)` then gives the package's client, talking to `origin`.
 */
export function durableInvocation(functionName: string, origin: string, logHandler?: LogHandler, options?: { rpc?: boolean }): InvocationContext {
  const input = df.input.durableClient();
  const context = new InvocationContext({ functionName, logHandler, options: { extraInputs: [input] } });
  context.extraInputs.set(input, clientBindingData(origin, options));
  return context;
}

/**
 * What Core Tools tells the worker its host name is. Without it the package's `df.getClient`
 * rewrites every webhook URL to port 7071, the Core Tools default, whatever port this host has.
 */
export function announceHostName(port: number): void {
  process.env.WEBSITE_HOSTNAME ??= `localhost:${port}`;
}

/** The package's own DurableClient, as `df.getClient(context)` gives it to a function, for the host at `origin`. */
export function durableClient(origin: string, options?: { rpc?: boolean }): ReturnType<typeof df.getClient> {
  return df.getClient(durableInvocation("localDurableClient", origin, undefined, options));
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
};

/** A status as the extension's HTTP API writes it (input and output never undefined: the package's client requires both). */
const wire = (status: InstanceStatus, showInput = true) => ({
  ...status,
  createdTime: status.createdTime.toISOString(),
  lastUpdatedTime: status.lastUpdatedTime.toISOString(),
  input: showInput ? (status.input ?? null) : null,
  output: status.output ?? null,
});

/** The instance filter of a query or purge: `runtimeStatus` (comma-separated), `createdTimeFrom`, `createdTimeTo`. */
function filterOf(query: URLSearchParams): InstanceFilter {
  const time = (name: string) => {
    const value = query.get(name);
    if (value === null) return undefined;
    const date = new Date(value);
    if (Number.isNaN(date.getTime())) throw new DurableRequestError(400, `${name} '${value}' is no date.`);
    return date;
  };
  const statuses = (query.get("runtimeStatus")?.split(",") ?? []).filter(Boolean);
  return { runtimeStatus: statuses.length > 0 ? statuses : undefined, createdTimeFrom: time("createdTimeFrom"), createdTimeTo: time("createdTimeTo") };
}

interface Call {
  method: string;
  /** The path below the API's base, decoded: e.g. ["instances", id, "raiseEvent", name]. */
  parts: string[];
  query: URLSearchParams;
  headers: IncomingMessage["headers"];
  body: unknown;
  /** Where this API is served, for the links it answers with. */
  webhooks: string;
}

/** One page of a query: `top` per page, the rest behind `x-ms-continuation-token` (the client follows it). */
function page<T>(items: T[], call: Call): { items: T[]; headers: Record<string, string> } {
  const token = call.headers["x-ms-continuation-token"];
  const offset = typeof token === "string" ? Number(Buffer.from(token, "base64url").toString()) : 0;
  if (!Number.isSafeInteger(offset) || offset < 0) throw new DurableRequestError(400, "The continuation token is not one this API gave.");
  const top = Number(call.query.get("top") ?? 100);
  if (!Number.isSafeInteger(top) || top < 1) throw new DurableRequestError(400, "top must be a positive integer.");
  const end = offset + top;
  return { items: items.slice(offset, end), headers: end < items.length ? { "x-ms-continuation-token": Buffer.from(String(end)).toString("base64url") } : {} };
}

/** The instance's status once it has finished, polled every `pollMs` for `timeoutMs` at most; undefined if it has not. */
async function finishedWithin(durable: DurableHost, id: string, timeoutMs: number, pollMs: number): Promise<InstanceStatus | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = await durable.getStatus(id);
    if (status && FINISHED.includes(status.runtimeStatus)) return status;
    if (Date.now() + pollMs > deadline) return undefined;
    await new Promise((resolve) => setTimeout(resolve, Math.max(10, pollMs)));
  }
}

async function orchestrators(call: Call, res: ServerResponse, durable: DurableHost): Promise<boolean> {
  const [, name, instanceId] = call.parts;
  if (call.method !== "POST" || !name) return false;
  const traceparent = call.headers.traceparent;
  const id = await durable.startNew(name, {
    instanceId: instanceId || undefined,
    input: call.body,
    traceParent: typeof traceparent === "string" ? traceparent : undefined,
  });
  // With `timeout` (seconds), as createAndWaitOnNewInstancePostUri asks: the output once it finishes within it.
  const timeout = Number(call.query.get("timeout"));
  if (timeout > 0) {
    const status = await finishedWithin(durable, id, timeout * 1000, Number(call.query.get("pollingInterval") || 1) * 1000);
    if (status) {
      json(res, 200, status.output ?? null);
      return true;
    }
  }
  const links = managementUrls(call.webhooks, id);
  json(res, 202, links, { location: links.statusQueryGetUri });
  return true;
}

async function instances(call: Call, res: ServerResponse, durable: DurableHost): Promise<boolean> {
  const [, id, action, eventName] = call.parts;
  if (!id) {
    if (call.method === "GET") {
      const { items, headers } = page(await durable.queryInstances(filterOf(call.query)), call);
      json(
        res,
        200,
        items.map((s) => wire(s, call.query.get("showInput") !== "false")),
        headers,
      );
      return true;
    }
    if (call.method !== "DELETE") return false;
    const deleted = await durable.purgeInstances(filterOf(call.query));
    json(res, deleted > 0 ? 200 : 404, { instancesDeleted: deleted });
    return true;
  }
  const status = await durable.getStatus(id, { showHistory: call.query.get("showHistory") === "true" });
  if (!status) throw new DurableRequestError(404, `No instance with ID '${id}' found.`);
  if (!action && call.method === "GET") json(res, FINISHED.includes(status.runtimeStatus) ? 200 : 202, wire(status, call.query.get("showInput") !== "false"));
  else if (!action && call.method === "DELETE") json(res, 200, { instancesDeleted: (await durable.purgeInstanceHistory(id)) ? 1 : 0 });
  else if (call.method !== "POST") return false;
  else if (action === "rewind") await durable.rewind(id).then(() => json(res, 202, {}));
  else if (action === "restart") json(res, 202, managementUrls(call.webhooks, await durable.restart(id)));
  else if (FINISHED.includes(status.runtimeStatus)) json(res, 410, { message: `The instance is ${status.runtimeStatus}.` });
  else if (action === "raiseEvent" && eventName) await durable.raiseEvent(id, eventName, call.body).then(() => json(res, 202, {}));
  else if (action === "terminate") await durable.terminate(id, call.query.get("reason") ?? "").then(() => json(res, 202, {}));
  else if (action === "suspend") await durable.suspend(id).then(() => json(res, 202, {}));
  else if (action === "resume") await durable.resumeInstance(id).then(() => json(res, 202, {}));
  else return false;
  return true;
}

async function entities(call: Call, res: ServerResponse, durable: DurableHost): Promise<boolean> {
  const [, name, key] = call.parts;
  if (!name) return false;
  if (key === undefined && call.method === "GET") {
    const { items, headers } = page(await durable.listEntities(name), call);
    const fetchState = call.query.get("fetchState") === "true";
    json(
      res,
      200,
      items.map(({ entityId, lastOperationTime, state }) => ({ entityId, lastOperationTime, ...(fetchState ? { state } : {}) })),
      headers,
    );
    return true;
  }
  if (key === undefined) return false;
  if (!durable.isEntityRegistered(name)) throw new DurableRequestError(404, `No entity function named '${name}' is registered.`);
  if (call.method === "POST") {
    await durable.signalEntity(name, key, call.query.get("op") ?? "", call.body);
    json(res, 202, {});
    return true;
  }
  if (call.method !== "GET") return false;
  const { entityExists, entityState } = await durable.readEntityState(name, key);
  if (entityExists) json(res, 200, entityState ?? null);
  else json(res, 404, { message: `No entity @${name}@${key}.` });
  return true;
}

/** A Map, so a path segment never finds Object's members (`constructor`, `toString`, `__proto__`). */
type Resource = (call: Call, res: ServerResponse, durable: DurableHost) => boolean | Promise<boolean>;
const RESOURCES = new Map<string, Resource>([
  ["orchestrators", orchestrators],
  ["instances", instances],
  ["entities", entities],
]);

/**
 * Why a request that a web page made is refused, if it is one. The API is for the app's own
 * durable clients and the developer's tools, none of which is a page: a page on another site can
 * still send a "simple" POST (text/plain, no-cors) or load a URL as an image, so any request a
 * browser marks as coming from another origin or site is refused, as `/local/*` refuses it.
 */
function browserRefusal(req: IncomingMessage, url: URL): string | undefined {
  const origin = req.headers.origin;
  if (origin !== undefined && origin !== url.origin) return `The Durable Functions API answers no web page, and ${origin} is another origin.`;
  const site = req.headers["sec-fetch-site"];
  if (site !== undefined && site !== "same-origin" && site !== "none")
    return `The Durable Functions API answers no request from another site (Sec-Fetch-Site: ${site}).`;
  return undefined;
}

/**
 * The Durable Functions HTTP API over the local durable host, at both of the extension's
 * bases (the webhook URLs and `rpcBaseUrl`): start, status (with history), query with filters
 * and paging, raise event, terminate, suspend, resume, rewind, restart, purge one or by filter;
 * entity signal, read and query. Loopback callers only, never CORS, as the Functions host keeps
 * it behind its keys.
 */
export async function serveDurableApi(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  durable: DurableHost,
  base: string,
  log: (line: string) => void = () => {},
): Promise<void> {
  if (!isLoopbackHost(url.hostname)) return problem(res, 403, "Forbidden", "The Durable Functions API answers loopback host names only.");
  const refusal = browserRefusal(req, url);
  if (refusal) return problem(res, 403, "Forbidden", refusal);
  const method = req.method ?? "GET";
  const bytes = await readBody(req);
  if (bytes === undefined) return problem(res, 413, "Payload Too Large", "The request body is too large.");
  const call: Call = {
    method,
    parts: url.pathname.slice(base.length).split("/").map(decodeURIComponent),
    query: url.searchParams,
    headers: req.headers,
    body: undefined,
    webhooks: `${url.origin}${DURABLE_API_PATH}`,
  };
  try {
    call.body = bytes.toString("utf8").trim() === "" ? undefined : JSON.parse(bytes.toString("utf8"));
  } catch {
    return problem(res, 400, "Bad Request", "The request body is not valid JSON.");
  }
  const resource = RESOURCES.get(call.parts[0]!);
  try {
    if (resource && (await resource(call, res, durable))) return;
  } catch (error) {
    // As text, as the extension answers: the package's client makes its error from the body as it is.
    if (error instanceof DurableRequestError) return void res.writeHead(error.status, { "content-type": "text/plain; charset=utf-8" }).end(error.message);
    // The task hub's account busy or away longer than the request's retries: the client may send it again.
    if (isTransient(error))
      return problem(res, 503, "Service Unavailable", "The task hub's store did not answer in time; send the request again.", { "retry-after": "1" });
    // The host's own failure (a file it could not write): logged here, and no path or stack to the caller.
    log(`durable API ${method} ${url.pathname}: ${(error as Error).stack ?? String(error)}`);
    return problem(res, 500, "Internal Server Error", "The durable host could not complete the request; its log says why.");
  }
  return problem(res, 404, "Not Found", `No Durable Functions API at ${url.pathname} for ${method}.`);
}

/** The base of the Durable Functions API a path is under, if any. */
export const durableApiBase = (pathname: string) => [DURABLE_API_PATH, DURABLE_RPC_PATH].find((base) => pathname.startsWith(base));
