import type { IncomingMessage, ServerResponse } from "node:http";
import { InvocationContext } from "@azure/functions";
import * as df from "durable-functions";
import { problem } from "../problem";
import { readBody } from "../request-body";
import { isLoopbackHost } from "../request-target";
import { FINISHED, type DurableHost, type InstanceStatus } from "./host";

/** Where the local host serves the Durable Functions HTTP API, as the Functions host does. */
export const DURABLE_API_PATH = "/runtime/webhooks/durabletask/";

/**
 * The durable client binding data the extension hands a function: the documented webhook URLs
 * and the `rpcBaseUrl` the package's DurableClient calls. Here all point at the local host.
 */
function clientData(base: string) {
  const id = "INSTANCEID";
  return {
    taskHubName: "LocalHub",
    creationUrls: {
      createNewInstancePostUri: `${base}orchestrators/{functionName}[/{instanceId}]`,
      createAndWaitOnNewInstancePostUri: `${base}orchestrators/{functionName}[/{instanceId}]?timeout={timeoutInSeconds}&pollingInterval={intervalInSeconds}`,
    },
    managementUrls: {
      id,
      statusQueryGetUri: `${base}instances/${id}`,
      sendEventPostUri: `${base}instances/${id}/raiseEvent/{eventName}`,
      terminatePostUri: `${base}instances/${id}/terminate?reason={text}`,
      rewindPostUri: `${base}instances/${id}/rewind?reason={text}`,
      purgeHistoryDeleteUri: `${base}instances/${id}`,
      suspendPostUri: `${base}instances/${id}/suspend?reason={text}`,
      resumePostUri: `${base}instances/${id}/resume?reason={text}`,
    },
    baseUrl: base.replace(/\/$/, ""),
    requiredQueryStringParameters: "",
    rpcBaseUrl: base,
    httpBaseUrl: base,
  };
}

/** The package's own DurableClient, as `df.getClient(context)` makes it, talking to this host's API at `base`. */
export function durableClient(base: string): ReturnType<typeof df.getClient> {
  const input = df.input.durableClient();
  const context = new InvocationContext({ functionName: "localDurableClient", options: { extraInputs: [input] } });
  context.extraInputs.set(input, clientData(base));
  return df.getClient(context);
}

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
};


/** A status as the extension's HTTP API writes it (input and output never undefined: the package's client requires both). */
const wire = (status: InstanceStatus) => ({
  ...status,
  createdTime: status.createdTime.toISOString(),
  lastUpdatedTime: status.lastUpdatedTime.toISOString(),
  input: status.input ?? null,
  output: status.output ?? null,
});

/**
 * The Durable Functions HTTP API over the local durable host: start, status (with history),
 * query, raise event, terminate, purge; entity signal and read. Loopback callers only, never
 * CORS, as the Functions host keeps it behind its keys.
 */
export async function serveDurableApi(req: IncomingMessage, res: ServerResponse, url: URL, durable: DurableHost): Promise<void> {
  if (!isLoopbackHost(url.hostname)) return problem(res, 403, "Forbidden", "The Durable Functions API answers loopback host names only.");
  const [kind, a, b, c] = url.pathname.slice(DURABLE_API_PATH.length).split("/").map(decodeURIComponent);
  const method = req.method ?? "GET";
  const bytes = await readBody(req);
  if (bytes === undefined) return problem(res, 413, "Payload Too Large", "The request body is too large.");
  let body: unknown;
  try {
    body = bytes.toString("utf8").trim() === "" ? undefined : JSON.parse(bytes.toString("utf8"));
  } catch {
    return problem(res, 400, "Bad Request", "The request body is not valid JSON.");
  }
  const base = `${url.origin}${DURABLE_API_PATH}`;
  if (kind === "orchestrators" && method === "POST" && a) {
    try {
      const id = await durable.startNew(a, { instanceId: b || undefined, input: body });
      return json(res, 202, { id, statusQueryGetUri: `${base}instances/${id}`, sendEventPostUri: `${base}instances/${id}/raiseEvent/{eventName}`, terminatePostUri: `${base}instances/${id}/terminate?reason={text}`, purgeHistoryDeleteUri: `${base}instances/${id}` });
    } catch (error) {
      return problem(res, /already exists/.test((error as Error).message) ? 409 : 400, "Not Started", (error as Error).message);
    }
  }
  if (kind === "instances" && !a && method === "GET") {
    const statuses = (url.searchParams.get("runtimeStatus")?.split(",") ?? []).filter(Boolean);
    const from = url.searchParams.get("createdTimeFrom");
    const to = url.searchParams.get("createdTimeTo");
    const all = (await durable.listInstances()).filter(
      (s) => (statuses.length === 0 || statuses.includes(s.runtimeStatus)) && (!from || s.createdTime >= new Date(from)) && (!to || s.createdTime <= new Date(to)),
    );
    return json(res, 200, all.map(wire));
  }
  if (kind === "instances" && a) {
    const status = await durable.getStatus(a, { showHistory: url.searchParams.get("showHistory") === "true" });
    if (!status) return json(res, 404, { message: `No instance with ID '${a}' found.` });
    if (method === "GET" && !b) return json(res, FINISHED.includes(status.runtimeStatus) ? 200 : 202, wire(status));
    if (method === "DELETE" && !b) return json(res, 200, { instancesDeleted: (await durable.purgeInstanceHistory(a)) ? 1 : 0 });
    const finished = FINISHED.includes(status.runtimeStatus);
    if (method === "POST" && b === "raiseEvent" && c) {
      if (finished) return json(res, 410, { message: `The instance is ${status.runtimeStatus}.` });
      await durable.raiseEvent(a, c, body);
      return json(res, 202, {});
    }
    if (method === "POST" && b === "terminate") {
      if (finished) return json(res, 410, { message: `The instance is ${status.runtimeStatus}.` });
      await durable.terminate(a, url.searchParams.get("reason") ?? "");
      return json(res, 202, {});
    }
    if (method === "POST" && (b === "suspend" || b === "resume")) {
      if (finished) return json(res, 410, { message: `The instance is ${status.runtimeStatus}.` });
      await (b === "suspend" ? durable.suspend(a) : durable.resumeInstance(a));
      return json(res, 202, {});
    }
  }
  if (kind === "entities" && a && b !== undefined) {
    if (method === "POST") {
      durable.entities.signal(a, b, url.searchParams.get("op") ?? "", body);
      return json(res, 202, {});
    }
    if (method === "GET") {
      const { entityExists, entityState } = durable.entities.readState(a, b);
      return entityExists ? json(res, 200, entityState ?? null) : json(res, 404, { message: `No entity @${a}@${b}.` });
    }
  }
  return problem(res, 404, "Not Found", `No Durable Functions API at ${url.pathname} for ${method}.`);
}
