import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SignJWT } from "jose";
import { problemDetails } from "../../src/api/responses";
import { apiFixture, TEST_SECRET, type ApiFixture } from "../support/api";

let api: ApiFixture;
let postId: string;
beforeAll(async () => {
  api = await apiFixture();
  await api.user("owner", "owner");
  postId = (await api.request("POST", "/api/posts", { as: "owner", body: { title: "t", content: "c" } })).body.postId;
});
afterAll(() => api.stop());

const HOSTILE = [
  "'; DROP TABLE users; --",
  `" OR "1"="1`,
  "Robert'); SELECT * FROM c WHERE ('1'='1",
  "\u0000\u0001\u0007\u001b[31m",
  "line\u2028separator\u2029",
  "😀".repeat(40),
  "\ud800", // lone surrogate
  "../../etc/passwd",
  "<script>alert(1)</script>",
  "a".repeat(100_000),
];

const WRONG_TYPES = [null, 0, 1.5, true, [], ["x"], { nested: "object" }];

/** Bodies that are wrong for each write route: malformed, wrong types, oversized, hostile, unknown fields. */
function badBodies(fields: string[]): string[] {
  const bodies = ["", "{", "not json", "[]", "null", "42", '"string"', '{"__proto__": {"admin": true}}', JSON.stringify({ unexpected: 1 })];
  for (const field of fields) {
    for (const value of WRONG_TYPES) bodies.push(JSON.stringify({ ...valid(fields), [field]: value }));
    bodies.push(JSON.stringify({ ...valid(fields), [field]: "x".repeat(20_001) }));
    bodies.push(JSON.stringify({ ...valid(fields), [field]: "\u0000control" }));
    bodies.push(JSON.stringify({ ...valid(fields), [field]: "" }));
  }
  bodies.push(JSON.stringify({ ...valid(fields), extra: "field" }));
  if (fields.includes("username")) for (const hostile of HOSTILE) bodies.push(JSON.stringify({ username: hostile }));
  bodies.push(JSON.stringify({ ...valid(fields), padding: "x".repeat(70_000) }));
  return bodies.filter((b) => !(fields.length === 0 && (b === "" || b === JSON.stringify({}))));
}

function valid(fields: string[]): Record<string, string> {
  return Object.fromEntries(fields.map((f) => [f, f === "username" ? "validname" : "ok"]));
}

const writeRoutes: { method: string; path: () => string; fields: string[]; as: string }[] = [
  { method: "POST", path: () => "/api/users", fields: ["username"], as: "newcomer" },
  { method: "PUT", path: () => "/api/users/owner", fields: ["username"], as: "owner" },
  { method: "POST", path: () => "/api/posts", fields: ["title", "content"], as: "owner" },
  { method: "PUT", path: () => `/api/posts/${postId}`, fields: ["title", "content"], as: "owner" },
  { method: "POST", path: () => `/api/posts/${postId}/comments`, fields: ["content"], as: "owner" },
  { method: "POST", path: () => `/api/posts/${postId}/likes`, fields: [], as: "owner" },
];

async function snapshot(): Promise<string> {
  const all = async (container: typeof api.blog.users) => (await container.items.query("SELECT c.id, c._etag FROM c").fetchAll()).resources;
  return JSON.stringify([await all(api.blog.users), await all(api.blog.posts), await all(api.blog.feed)]);
}

const badTokens = async (): Promise<string[]> => [
  "",
  "Bearer",
  "Bearer ",
  "Token abc",
  "Bearer a.b.c",
  "Bearer '; DROP TABLE users; --",
  // alg "none"
  `Bearer ${Buffer.from('{"alg":"none"}').toString("base64url")}.${Buffer.from('{"sub":"owner","exp":9999999999}').toString("base64url")}.`,
  // expired
  `Bearer ${await new SignJWT({})
    .setProtectedHeader({ alg: "HS256" })
    .setSubject("owner")
    .setExpirationTime(Math.floor(Date.now() / 1000) - 600)
    .sign(new TextEncoder().encode(TEST_SECRET))}`,
  // wrong secret
  `Bearer ${await new SignJWT({}).setProtectedHeader({ alg: "HS256" }).setSubject("owner").setExpirationTime("1h").sign(new TextEncoder().encode("another-secret-of-at-least-32-characters"))}`,
  // no exp
  `Bearer ${await new SignJWT({}).setProtectedHeader({ alg: "HS256" }).setSubject("owner").sign(new TextEncoder().encode(TEST_SECRET))}`,
  // hostile subject
  `Bearer ${await new SignJWT({}).setProtectedHeader({ alg: "HS256" }).setSubject("owner'; --").setExpirationTime("1h").sign(new TextEncoder().encode(TEST_SECRET))}`,
];

describe("fuzzing every write route", () => {
  it.each(writeRoutes)("$method $path: bad bodies get 4xx, never 5xx, and write nothing", async (route) => {
    const before = await snapshot();
    for (const body of badBodies(route.fields)) {
      const response = await api.request(route.method, route.path(), { as: route.as, rawBody: body });
      expect(response.status, `body ${body.slice(0, 80)}`).toBeGreaterThanOrEqual(400);
      expect(response.status, `body ${body.slice(0, 80)}`).toBeLessThan(500);
      expect(response.headers["content-type"]).toBe("application/problem+json");
      // Every problem is of a documented type: about:blank, or one of the API's own.
      expect(problemDetails.safeParse(response.body).error).toBeUndefined();
    }
    expect(await snapshot()).toBe(before);
  });

  it.each([
    ...writeRoutes,
    { method: "DELETE", path: () => `/api/posts/${postId}`, fields: [], as: "owner" },
    { method: "DELETE", path: () => `/api/posts/${postId}/likes`, fields: [], as: "owner" },
  ])("$method $path: bad tokens get 401 and write nothing", async (route) => {
    const before = await snapshot();
    for (const authorization of await badTokens()) {
      const response = await api.request(route.method, route.path(), { authorization, body: valid(route.fields) });
      expect(response.status, authorization.slice(0, 60)).toBe(401);
    }
    expect(await snapshot()).toBe(before);
  });

  it("hostile ids in paths get 400 or 404, never 5xx", async () => {
    for (const hostile of HOSTILE.slice(0, 9)) {
      let encoded: string;
      try {
        encoded = encodeURIComponent(hostile);
      } catch {
        encoded = "%ED%A0%80"; // a lone surrogate cannot be encoded: send its invalid UTF-8 bytes
      }
      for (const [method, path] of [
        ["GET", `/api/users/${encoded}`],
        ["GET", `/api/users/${encoded}/posts`],
        ["GET", `/api/posts/${encoded}`],
        ["PUT", `/api/posts/${encoded}`],
        ["DELETE", `/api/posts/${encoded}`],
        ["POST", `/api/posts/${encoded}/comments`],
        ["GET", `/api/posts/${encoded}/likes`],
      ]) {
        const response = await api.request(method, path, { as: "owner", body: { title: "t", content: "c" } });
        expect([400, 404], `${method} ${path}`).toContain(response.status);
      }
    }
  });
});
