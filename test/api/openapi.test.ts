import { readFileSync } from "node:fs";
import { join } from "node:path";
import Ajv2020 from "ajv/dist/2020";
import addFormats from "ajv-formats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { devToken, LOCAL_DEV_SECRET } from "../../local/dev-auth";
import { Router } from "local-host";
import { routes } from "../../src/api/routes";
import { openApiText } from "../../scripts/openapi";
import { localSystem, type Client } from "../support/system";

/**
 * The contract: the OpenAPI document served at /api/openapi.json describes exactly the route
 * table, and every response the API really gives (successes and problems) is one the document
 * allows, with a body its schema accepts.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Document = any;

const router = new Router(routes);
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);

interface Seen {
  method: string;
  path: string;
  status: number;
  contentType: string | null;
  body: unknown;
}

/** Checks one real response against the document; returns what is wrong, if anything. */
function violations(document: Document, seen: Seen): string[] {
  const match = router.match(seen.method, new URL(seen.path, "http://x").pathname);
  if (!("route" in match)) return [`${seen.method} ${seen.path}: no such route`];
  const operation = document.paths[`/api/${match.route.route}`]?.[seen.method.toLowerCase()];
  if (!operation) return [`${seen.method} /api/${match.route.route} is not in the document`];
  const listed = operation.responses[String(seen.status)];
  // Shared answers (every problem of a status) are `$ref`s to components/responses.
  const response = listed?.$ref ? document.components?.responses?.[String(listed.$ref).replace("#/components/responses/", "")] : listed;
  if (!response) return [`${match.route.name} answered ${seen.status}, which the document does not list`];
  if (!response.content) return seen.body === undefined ? [] : [`${match.route.name} ${seen.status} has a body the document does not describe`];
  const mediaType = seen.contentType?.split(";")[0] ?? "";
  const content = response.content[mediaType];
  if (!content) return [`${match.route.name} ${seen.status} answered ${mediaType}, the document says ${Object.keys(response.content)}`];
  const validate = ajv.compile({ ...content.schema, components: document.components });
  return validate(seen.body) ? [] : [`${match.route.name} ${seen.status}: ${ajv.errorsText(validate.errors)}`];
}

let app: Client;
let document: Document;
const seen: Seen[] = [];

/** A real request over HTTP, recorded for the contract check. */
async function send(method: string, path: string, options: { as?: string; body?: unknown; raw?: string; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { ...options.headers };
  if (options.as) headers.authorization = `Bearer ${await token(options.as)}`;
  if (options.body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(`${app.system.url}${path}`, {
    method,
    headers,
    body: options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body)),
  });
  const text = await response.text();
  const record = {
    method,
    path: `/api${path}`,
    status: response.status,
    contentType: response.headers.get("content-type"),
    body: text ? JSON.parse(text) : undefined,
  };
  seen.push(record);
  return { ...record, etag: response.headers.get("etag") };
}

const token = (userId: string) => devToken(userId, LOCAL_DEV_SECRET);

beforeAll(async () => {
  app = await localSystem({ feedCacheMs: 0 });
  document = (await send("GET", "/openapi.json")).body;
});
afterAll(() => app.stop());

describe("the OpenAPI document", () => {
  it("is OpenAPI 3.1 with the bearer scheme, and lists exactly the route table's operations", () => {
    expect(document.openapi).toBe("3.1.0");
    expect(document.components.securitySchemes.bearerAuth).toMatchObject({ type: "http", scheme: "bearer", bearerFormat: "JWT" });
    const documented = Object.entries(document.paths).flatMap(([path, operations]) =>
      Object.entries(operations as Record<string, { operationId: string }>).map(([method, op]) => `${method.toUpperCase()} ${path} ${op.operationId}`),
    );
    const table = routes.map((route) => `${route.method} /api/${route.route} ${route.name}`);
    expect(documented.sort()).toEqual(table.sort());
    for (const route of routes) {
      const operation = document.paths[`/api/${route.route}`][route.method.toLowerCase()];
      expect(Boolean(operation.security), route.name).toBe(route.doc.auth);
      for (const name of route.doc.headers ?? [])
        expect(
          operation.parameters.some((p: { in: string; name: string }) => p.in === "header" && p.name === name),
          `${route.name} ${name}`,
        ).toBe(true);
    }
  });

  it("describes each shared header and problem answer once, and every reference resolves", () => {
    const text = JSON.stringify(document);
    const refs = new Set([...text.matchAll(/"\$ref":"#\/components\/(\w+)\/([^"]+)"/g)].map((m) => `${m[1]}/${m[2]}`));
    for (const ref of refs) {
      const [kind, name] = ref.split("/");
      expect(document.components[kind]?.[name], ref).toBeDefined();
    }
    expect([...refs]).toEqual(expect.arrayContaining(["headers/ETag", "headers/Retry-After", "responses/Problem404", "schemas/Problem"]));
    expect(text.split('"Cosmos DB requests the call made').length - 1).toBe(1); // the Server-Timing description, once
  });

  it("is what docs/openapi.json holds (npm run build writes it)", () => {
    expect(readFileSync(join(__dirname, "../../docs/openapi.json"), "utf8")).toBe(openApiText());
  });

  it("allows every response the API really gives, success and problem alike", async () => {
    await send("POST", "/users", { body: { username: "alice" } }); // 401
    await send("POST", "/users", { as: "alice", body: { username: "a" } }); // 400
    await send("POST", "/users", { as: "alice", raw: "username=alice", headers: { "content-type": "text/plain" } }); // 415
    await send("POST", "/users", { as: "alice", body: { username: "alice" } });
    await send("POST", "/users", { as: "bob", body: { username: "ALICE" } }); // 409
    await send("POST", "/users", { as: "bob", body: { username: "bob" } });
    const alice = await send("GET", "/users/alice");
    await send("GET", "/users/alice", { headers: { "if-none-match": alice.etag! } }); // 304
    await send("GET", "/users/nobody"); // 404
    await send("PUT", "/users/alice", { as: "bob", body: { username: "bobby" } }); // 403
    await send("PUT", "/users/alice", { as: "alice", body: { username: "alice2" }, headers: { "if-match": '"stale"' } }); // 412
    await send("PUT", "/users/alice", { as: "alice", body: { username: "alice2" } });
    await send("POST", "/posts", { as: "carol", body: { title: "t", content: "c" } }); // 403: no profile
    await send("POST", "/posts", { as: "alice", body: { title: "t", content: "x".repeat(70_000) } }); // 413
    const post = (await send("POST", "/posts", { as: "alice", body: { title: "Hello", content: "First post" }, headers: { "idempotency-key": "k1" } })).body;
    await send("POST", "/posts", { as: "alice", body: { title: "Hello", content: "First post" }, headers: { "idempotency-key": "k1" } }); // replayed
    await send("PUT", `/posts/${post.postId}`, { as: "alice", body: { title: "Hello again", content: "Edited" } });
    await send("GET", `/posts/${post.postId}`);
    for (const who of ["alice", "bob"]) await send("POST", `/posts/${post.postId}/comments`, { as: who, body: { content: `hi from ${who}` } });
    await send("GET", `/posts/${post.postId}/comments?limit=1`);
    await send("GET", `/posts/${post.postId}/comments?limit=0`); // 400
    await send("POST", `/posts/${post.postId}/likes`, { as: "bob" });
    await send("POST", `/posts/${post.postId}/likes`, { as: "bob" }); // 200
    await send("GET", `/posts/${post.postId}/likes`);
    await send("DELETE", `/posts/${post.postId}/likes`, { as: "bob" });
    await send("DELETE", `/posts/${post.postId}/likes`, { as: "bob" }); // 404
    await send("GET", "/users/alice/posts");
    await send("GET", "/feed?limit=10");
    await send("GET", "/feed?limit=101"); // 400
    await send("DELETE", `/posts/${post.postId}`, { as: "bob" }); // 403
    await send("DELETE", `/posts/${post.postId}`, { as: "alice" });
    await send("GET", `/posts/${post.postId}`); // 404
    await send("GET", "/users/bob/export?limit=1");
    await send("GET", "/users/bob/export", { as: "bob" });
    await send("GET", "/users/bob/export", { as: "alice" }); // 403
    await send("GET", "/users/bob/erasure", { as: "bob" }); // 404
    await send("DELETE", "/users/bob", { as: "bob" }); // 202
    await send("GET", "/users/bob/erasure", { as: "bob" });
    await send("POST", "/posts", { as: "bob", body: { title: "t", content: "c" } }); // 403: erased

    const statuses = new Set(seen.map((s) => s.status));
    for (const status of [200, 201, 202, 204, 304, 400, 401, 403, 404, 409, 412, 413, 415])
      expect(statuses.has(status), `status ${status} exercised`).toBe(true);
    expect(seen.flatMap((s) => violations(document, s))).toEqual([]);
  });

  it("allows the 429 and 503 problems of a store in trouble", async () => {
    const troubled = await localSystem({
      feedCacheMs: 0,
      faults: {
        rules: [
          { effect: "429", ms: 1, rate: 1, operations: ["query"], containers: ["feed"] },
          { effect: "503", rate: 1, operations: ["read"], containers: ["posts"] },
        ],
      },
    });
    try {
      const answers: Seen[] = [];
      for (const path of ["/feed", "/posts/p1"]) {
        const response = await fetch(`${troubled.system.url}${path}`);
        answers.push({
          method: "GET",
          path: `/api${path}`,
          status: response.status,
          contentType: response.headers.get("content-type"),
          body: await response.json(),
        });
      }
      expect(answers.map((a) => a.status)).toEqual([429, 503]);
      expect(answers.flatMap((a) => violations(document, a))).toEqual([]);
    } finally {
      await troubled.stop();
    }
  });

  it("catches a response that breaks the contract", () => {
    const wrong = { method: "GET", path: "/api/users/alice", status: 200, contentType: "application/json", body: { id: "alice", username: "alice", extra: 1 } };
    expect(violations(document, wrong).join()).toMatch(/additional properties/);
    expect(violations(document, { ...wrong, status: 418 }).join()).toMatch(/does not list/);
  });
});
