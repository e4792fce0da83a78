import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HttpRequest, InvocationContext } from "@azure/functions";
import { routes } from "../../src/api/routes";
import { apiFixture, type ApiFixture } from "../support/api";

/**
 * Guarantee: nothing a client sends yields a 500, and every 400 names what was wrong
 * (`errors[]`). Also the HTTP details a client relies on: conditional GETs, media types,
 * idempotent retries, honest Server-Timing, and text that renders as what it says.
 */
let api: ApiFixture;
let postId: string;
beforeAll(async () => {
  api = await apiFixture();
  await api.user("writer", "writer");
  postId = (await api.request("POST", "/api/posts", { as: "writer", body: { title: "t", content: "c" } })).body.postId;
  for (let i = 0; i < 3; i++) await api.request("POST", `/api/posts/${postId}/comments`, { as: "writer", body: { content: `c${i}` } });
});
afterAll(() => api.stop());

const expectBadRequest = (response: { status: number; body: { errors?: unknown[] } }) => {
  expect(response.status).toBe(400);
  expect(response.body.errors?.length).toBeGreaterThan(0);
};

/** Calls a route's handler with path parameters as the Functions host would pass them (no URL normalisation). */
async function callWithParams(name: string, params: Record<string, string>) {
  const route = routes.find((r) => r.name === name)!;
  const request = new HttpRequest({ method: route.method, url: "http://localhost/api/x", params });
  const response = await route.handler(request, new InvocationContext({ functionName: name }), { store: api.blog });
  return { status: response.status, body: response.jsonBody };
}

describe("nothing a client sends yields a 500", () => {
  it.each([
    ["a control character", "\u0001abc"],
    ["a non-Latin-1 character", "caf\u00e9\u20ac"],
    ["a line break", "a\nb"],
  ])("a continuation token whose inner token holds %s is a 400", async (_what, inner) => {
    for (const list of [`posts/${postId}/comments`, "users/writer/posts", `posts/${postId}/likes`]) {
      const token = Buffer.from(JSON.stringify({ l: list, t: inner }), "utf8").toString("base64url");
      const path = list === "users/writer/posts" ? "/api/users/writer/posts" : `/api/${list}`;
      expectBadRequest(await api.request("GET", `${path}?continuationToken=${token}`));
    }
  });

  it("a token subject of '.' or '..' is refused with 401, and such a path id with 400", async () => {
    for (const sub of [".", ".."]) {
      expect((await api.request("POST", "/api/users", { as: sub, body: { username: `dots${sub.length}` } })).status).toBe(401);
      expectBadRequest(await callWithParams("getUser", { userId: sub }));
      expectBadRequest(await callWithParams("getPost", { postId: sub }));
    }
  });

  it("every 400 carries errors[]: invalid JSON, a body that is not an object, a garbled token", async () => {
    expectBadRequest(await api.request("POST", "/api/posts", { as: "writer", rawBody: "{not json" }));
    expectBadRequest(await api.request("POST", "/api/posts", { as: "writer", rawBody: "[1,2]" }));
    expectBadRequest(await api.request("GET", `/api/posts/${postId}/comments?continuationToken=garbage`));
  });

  it("a body that is not JSON gets 415", async () => {
    const response = await api.request("POST", "/api/posts", {
      as: "writer",
      rawBody: "title=t&content=c",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(response.status).toBe(415);
    expect(response.headers["content-type"]).toBe("application/problem+json");
    const text = await api.request("POST", `/api/posts/${postId}/comments`, {
      as: "writer",
      rawBody: '{"content":"x"}',
      headers: { "content-type": "text/plain" },
    });
    expect(text.status).toBe(415);
    const charset = await api.request("POST", `/api/posts/${postId}/comments`, {
      as: "writer",
      rawBody: '{"content":"x"}',
      headers: { "content-type": "application/json; charset=utf-8" },
    });
    expect(charset.status).toBe(201);
  });
});

describe("conditional GETs compare ETags as RFC 9110 says (weak comparison)", () => {
  it.each([["*"], ["W/{etag}"], ['"other", {etag}'], ['W/"other",W/{etag}']])("If-None-Match: %s gives 304", async (pattern) => {
    for (const path of ["/api/users/writer", `/api/posts/${postId}`]) {
      const { etag } = (await api.request("GET", path)).headers;
      const header = pattern.replace("{etag}", etag);
      const response = await api.request("GET", path, { headers: { "if-none-match": header } });
      expect(response.status, `${path} ${header}`).toBe(304);
      expect(response.headers.etag).toBe(etag);
    }
  });

  it("a non-matching If-None-Match still gives 200", async () => {
    expect((await api.request("GET", "/api/users/writer", { headers: { "if-none-match": '"nope", W/"other"' } })).status).toBe(200);
  });
});

describe("retries with Idempotency-Key create nothing twice", () => {
  it("POST /posts with the same key returns the first post", async () => {
    const headers = { "idempotency-key": "post-key-1" };
    const first = await api.request("POST", "/api/posts", { as: "writer", body: { title: "once", content: "c" }, headers });
    const again = await api.request("POST", "/api/posts", { as: "writer", body: { title: "once", content: "c" }, headers });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    const { resources } = await api.blog.posts.items.query("SELECT VALUE COUNT(1) FROM p WHERE p.type = 'post' AND p.title = 'once'").fetchAll();
    expect(resources).toEqual([1]);
    // Another caller's identical key is their own.
    await api.user("other", "other");
    const theirs = await api.request("POST", "/api/posts", { as: "other", body: { title: "once", content: "c" }, headers });
    expect(theirs.body.postId).not.toBe(first.body.postId);
  });

  it("POST /comments with the same key returns the first comment and counts once", async () => {
    const headers = { "idempotency-key": "comment-key-1" };
    const target = (await api.request("POST", "/api/posts", { as: "writer", body: { title: "commented", content: "c" } })).body.postId;
    const results = await Promise.all(
      [0, 1, 2].map(() => api.request("POST", `/api/posts/${target}/comments`, { as: "writer", body: { content: "once" }, headers })),
    );
    expect(results.map((r) => r.status)).toEqual([201, 201, 201]);
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    expect((await api.request("GET", `/api/posts/${target}`)).body.commentCount).toBe(1);
    expect((await api.request("GET", `/api/posts/${target}/comments`)).body.items).toHaveLength(1);
  });

  it("an Idempotency-Key that is empty or too long is a 400", async () => {
    expectBadRequest(
      await api.request("POST", "/api/posts", { as: "writer", body: { title: "t", content: "c" }, headers: { "idempotency-key": "x".repeat(300) } }),
    );
  });
});

describe("Server-Timing tells the truth", () => {
  it("reports Cosmos DB time no larger than the whole call, also under concurrency", async () => {
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) => api.request("GET", i % 2 ? `/api/posts/${postId}/comments` : "/api/users/writer/posts")),
    );
    for (const response of responses) {
      const timing = response.headers["server-timing"];
      const cosmos = Number(/cosmos;desc="[^"]*";dur=([\d.]+)/.exec(timing)![1]);
      const total = Number(/total;dur=([\d.]+)/.exec(timing)![1]);
      expect(cosmos).toBeLessThanOrEqual(total);
    }
  });
});

describe("text says what it shows", () => {
  it.each([
    ["only zero-width characters", "\u200b\u200b\u200b"],
    ["only format characters", "\u2060\ufeff"],
    ["a lone surrogate", "abc\ud800"],
    ["a bidi override", "safe\u202egnp.exe"],
    ["a bidi isolate", "x\u2066y\u2069"],
  ])("a title of %s is a 400", async (_what, title) => {
    expectBadRequest(await api.request("POST", "/api/posts", { as: "writer", body: { title, content: "c" } }));
  });

  it("rejects bidi controls and lone surrogates in content and comments too", async () => {
    expectBadRequest(await api.request("POST", "/api/posts", { as: "writer", body: { title: "t", content: "a\u202db" } }));
    expectBadRequest(await api.request("POST", `/api/posts/${postId}/comments`, { as: "writer", body: { content: "\udc00" } }));
  });

  it("keeps zero-width joiners inside text: emoji sequences pass", async () => {
    const title = "family \u{1f468}\u200d\u{1f469}\u200d\u{1f467} and flag \u{1f3f3}\ufe0f\u200d\u{1f308}";
    const response = await api.request("POST", "/api/posts", { as: "writer", body: { title, content: "skin tone \u{1f44d}\u{1f3fd}" } });
    expect(response.status).toBe(201);
    expect(response.body.title).toBe(title);
  });
});
