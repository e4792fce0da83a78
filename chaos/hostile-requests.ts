import { connect } from "node:net";
import { CosmosClient, type Container } from "@azure/cosmos";
import { SignJWT } from "jose";
import { authorizationHeaders } from "embedded-cosmos";
import { LOCAL_DEV_SECRET } from "../local/dev-auth";
import { ACCOUNT_ERASED } from "../src/model/errors";
import { DURABLE_API_PATH } from "local-host";

/** Where the hostile requests go: the host's API and the embedded Cosmos DB server. */
export interface Target {
  /** The API's base, `http://localhost:<port>/api`. */
  api: string;
  cosmosEndpoint: string;
  cosmosKey: string;
  /** The hosts' dev-token secret (the built-in local one when absent). */
  devSecret?: string;
}

/** One hostile request: the status it got, and the statuses that mean it was refused as it should be. */
interface Outcome {
  what: string;
  status: number | undefined;
  expected: number[];
}

/** The status line of one raw HTTP/1.1 exchange; undefined when the host did not answer (restarting). */
function raw(url: string, request: string, abortAfterWrite = false): Promise<number | undefined> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname, () => socket.write(request, () => abortAfterWrite && socket.destroy()));
    let answer = "";
    socket.setTimeout(10_000, () => socket.destroy());
    socket.on("data", (chunk) => (answer += chunk.toString()));
    socket.on("close", () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1]) || undefined));
    socket.on("error", () => resolve(undefined));
  });
}

/** The status and, for a problem, its type; undefined when the host did not answer (restarting). */
async function answer(url: string, init: RequestInit = {}): Promise<{ status: number; type?: string } | undefined> {
  try {
    const response = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
    const body = await response.text();
    if (!response.headers.get("content-type")?.startsWith("application/problem+json")) return { status: response.status };
    return { status: response.status, type: (JSON.parse(body) as { type?: string }).type };
  } catch {
    return undefined;
  }
}

const status = async (url: string, init: RequestInit = {}) => (await answer(url, init))?.status;

/** The SDK's status of a refused call; undefined when the server did not answer (restarting). */
const refusal = (error: unknown) => {
  const code = (error as { code?: unknown }).code;
  return typeof code === "number" ? code : undefined;
};

/**
 * A container of its own on the embedded server, for hostile scripts and queries: the app's
 * containers are left alone. Made once per target; a restart keeps it (the data directory does).
 */
const hostileContainers = new Map<string, Promise<Container>>();
function hostileContainer({ cosmosEndpoint, cosmosKey }: Target): Promise<Container> {
  let container = hostileContainers.get(cosmosEndpoint);
  if (!container) {
    const client = new CosmosClient({ endpoint: cosmosEndpoint, key: cosmosKey, connectionPolicy: { enableEndpointDiscovery: false } });
    container = (async () => {
      const { database } = await client.databases.createIfNotExists({ id: "hostile" });
      const made = (await database.containers.createIfNotExists({ id: "hostile", partitionKey: { paths: ["/pk"] } })).container;
      await made.items.upsert({ id: "wide", pk: "wide", arr: Array.from({ length: 100 }, (_, i) => i) });
      return made;
    })();
    container.catch(() => hostileContainers.delete(cosmosEndpoint));
    hostileContainers.set(cosmosEndpoint, container);
  }
  return container;
}

/** The stored procedure that reached the server's process: a host error caught in the script, then its constructor's constructor. */
const ESCAPE = `function escape() {
  var reached = "contained";
  function probe(value) {
    try { var g = value.constructor.constructor("return this")(); if (typeof g.process === "object") reached = "escaped"; } catch (e) {}
  }
  probe(this);
  JSON.stringify = function () { return "{not json"; };
  try { __.readDocument(__.getSelfLink() + "/docs/x", {}, function () {}); } catch (e) { probe(e); }
  Promise.reject(new Error("unhandled"));
  getContext().getResponse().setBody(reached);
}`;

const token = (target: Target, userId: string, claims: { iat: number; exp: number }) =>
  new SignJWT({ ...claims })
    .setProtectedHeader({ alg: "HS256" })
    .setSubject(userId)
    .sign(new TextEncoder().encode(target.devSecret ?? LOCAL_DEV_SECRET));
const now = () => Math.floor(Date.now() / 1000);
/** The host's Durable Functions HTTP API, beside its `/api`. */
const durableApi = (api: string) => `${api.replace(/\/api$/, "")}${DURABLE_API_PATH}`;

/**
 * What the hostile-input black-box runs sent, each with the answer that refuses it: a page
 * rebinding its name to the Cosmos DB port or driving the Durable Functions API, names of
 * Object's members, a pacing that would spin, a DELETE with a stale If-Match, invisible text, a
 * token from the future, a stored procedure reaching for the server's process, a query that
 * would hold the server, a client that hangs up mid-body.
 */
const REQUESTS: ((target: Target, rng: () => number) => Promise<Outcome>)[] = [
  async ({ cosmosEndpoint, cosmosKey }) => {
    const port = new URL(cosmosEndpoint).port;
    const head = Object.entries(authorizationHeaders(cosmosKey, "GET", "/dbs"))
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join("");
    const answer = await raw(cosmosEndpoint, `GET /dbs HTTP/1.1\r\nHost: evil.example:${port}\r\n${head}Connection: close\r\n\r\n`);
    return { what: "the Cosmos DB port with a rebound Host", status: answer, expected: [403] };
  },
  async ({ api }) => ({
    what: "a page of another origin starting an orchestration",
    status: await status(`${durableApi(api)}orchestrators/releaseOrphanedUsernames`, {
      method: "POST",
      headers: { origin: "https://evil.example", "content-type": "text/plain" },
      body: JSON.stringify({ userId: "alice" }),
    }),
    expected: [403],
  }),
  async ({ api }, rng) => ({
    what: "an Object member as a durable API path",
    status: await status(`${durableApi(api)}${rng() < 0.5 ? "constructor" : "orchestrators/toString"}`, {
      method: rng() < 0.5 ? "GET" : "POST",
    }),
    expected: [404, 405],
  }),
  async ({ api }) => ({
    what: "an orchestration input with a 1 ms backoff",
    status: await status(`${durableApi(api)}orchestrators/refreshFeedCopy`, {
      method: "POST",
      body: JSON.stringify({ postId: "p", sourceLsn: 1, dueAt: new Date().toISOString(), policy: { failureBackoffMs: 1, activityAttempts: 1 } }),
    }),
    // Accepted, then failed once by its input schema (no loop); never run as asked.
    expected: [202],
  }),
  async (target, rng) => {
    const { api } = target;
    const feed = await fetch(`${api}/feed`, { signal: AbortSignal.timeout(10_000) })
      .then((response) => response.json() as Promise<{ items?: { postId: string; userId: string }[] }>)
      .catch(() => ({ items: [] }));
    const post = feed.items?.[Math.floor(rng() * (feed.items?.length ?? 0))];
    if (!post) return { what: "a DELETE with a stale If-Match", status: undefined, expected: [412] };
    const authorization = `Bearer ${await token(target, post.userId, { iat: now(), exp: now() + 600 })}`;
    const refusal = await answer(`${api}/posts/${post.postId}`, { method: "DELETE", headers: { authorization, "if-match": '"stale"' } });
    // The workload erases accounts: an erased author's token is refused before any condition is looked at.
    const expected = refusal?.type === ACCOUNT_ERASED ? [403] : [412, 404];
    return { what: `a DELETE of ${post.postId} with a stale If-Match`, status: refusal?.status, expected };
  },
  async (target) => ({
    what: "a post of invisible characters",
    status: await status(`${target.api}/posts`, {
      method: "POST",
      headers: { authorization: `Bearer ${await token(target, "saboteur", { iat: now(), exp: now() + 600 })}`, "content-type": "application/json" },
      body: JSON.stringify({ title: "\u3164\u2800", content: "\u034f" }),
    }),
    expected: [400],
  }),
  async (target) => ({
    what: "a token issued an hour from now",
    status: await status(`${target.api}/posts`, {
      method: "POST",
      headers: { authorization: `Bearer ${await token(target, "saboteur", { iat: now() + 3600, exp: now() + 7200 })}`, "content-type": "application/json" },
      body: JSON.stringify({ title: "t", content: "c" }),
    }),
    expected: [401],
  }),
  async (target) => {
    try {
      const container = await hostileContainer(target);
      const id = `escape-${Date.now()}-${Math.floor(Math.random() * 1e6)}`;
      await container.scripts.storedProcedures.create({ id, body: ESCAPE });
      const { resource } = await container.scripts.storedProcedure(id).execute("p");
      await container.scripts.storedProcedure(id).delete();
      // Contained is what a refusal looks like here: the script ran and reached nothing of the server.
      return { what: "a stored procedure reaching for the server's process", status: resource === "contained" ? 200 : 500, expected: [200] };
    } catch (error) {
      return { what: "a stored procedure reaching for the server's process", status: refusal(error), expected: [400, 408] };
    }
  },
  async (target) => {
    const what = "a query whose JOINs make a million rows of one item";
    try {
      const query = "SELECT VALUE COUNT(1) FROM c JOIN a IN c.arr JOIN b IN c.arr JOIN d IN c.arr";
      await (await hostileContainer(target)).items.query(query, { partitionKey: "wide" }).fetchAll();
      return { what, status: 200, expected: [408] };
    } catch (error) {
      return { what, status: refusal(error), expected: [408] };
    }
  },
  async ({ api }) => {
    const { host } = new URL(api);
    await raw(api, `POST /api/posts HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"title":`, true);
    return { what: "a body cut off by the client", status: undefined, expected: [] };
  },
];

/**
 * Sends one hostile request chosen at random; returns a violation when the host answered it
 * otherwise than by refusing it (no answer, or 503 while draining, is no verdict).
 */
export async function sendHostileRequest(target: Target, rng: () => number): Promise<string | undefined> {
  const outcome = await REQUESTS[Math.floor(rng() * REQUESTS.length)](target, rng);
  if (outcome.status === undefined || outcome.status === 503 || outcome.expected.includes(outcome.status)) return undefined;
  return `hostile request (${outcome.what}) answered ${outcome.status}, expected ${outcome.expected.join(" or ")}`;
}
