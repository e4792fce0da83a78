import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiFixture, type ApiFixture } from "../support/api";

/**
 * HTTP as the standards say it, for what a hostile or merely unusual client sends: conditional
 * writes (RFC 9110 13.1), charsets, the text rules, Idempotency-Key reuse, HEAD and query
 * parameters. Each of these defends a defect a black-box run found.
 */
let api: ApiFixture;
let postId: string;
beforeAll(async () => {
  api = await apiFixture();
  await api.user("writer", "writer");
  postId = (await api.request("POST", "/api/posts", { as: "writer", body: { title: "t", content: "c" } })).body.postId;
});
afterAll(() => api.stop());

describe("a conditional write", () => {
  it("with If-None-Match: * on an existing post is 412 and writes nothing", async () => {
    const response = await api.request("PUT", `/api/posts/${postId}`, {
      as: "writer",
      body: { title: "changed", content: "changed" },
      headers: { "if-none-match": "*" },
    });
    expect(response.status).toBe(412);
    expect((await api.request("GET", `/api/posts/${postId}`)).body.title).toBe("t");
  });

  it("with If-None-Match naming the current ETag of a profile is 412 and renames nothing", async () => {
    const { etag } = (await api.request("GET", "/api/users/writer")).headers;
    const response = await api.request("PUT", "/api/users/writer", { as: "writer", body: { username: "writer2" }, headers: { "if-none-match": etag } });
    expect(response.status).toBe(412);
    expect((await api.request("GET", "/api/users/writer")).body.username).toBe("writer");
  });

  it("with If-None-Match naming another ETag writes and answers 200 with the body", async () => {
    const response = await api.request("PUT", `/api/posts/${postId}`, {
      as: "writer",
      body: { title: "t", content: "c2" },
      headers: { "if-none-match": '"not-the-current-one"' },
    });
    expect(response.status).toBe(200);
    expect(response.body.content).toBe("c2");
  });
});

describe("a body in another encoding than UTF-8", () => {
  it("declared with another charset is 415, and nothing is stored", async () => {
    const bytes = Buffer.concat([Buffer.from('{"title":"caf'), Buffer.from([0xe9]), Buffer.from('","content":"x"}')]);
    const response = await api.request("POST", "/api/posts", {
      as: "writer",
      rawBytes: bytes,
      headers: { "content-type": "application/json; charset=iso-8859-1" },
    });
    expect(response.status).toBe(415);
    expect(response.body.detail).toMatch(/UTF-8/);
  });

  it("with bytes that are not UTF-8 is a 400 naming the encoding", async () => {
    const bytes = Buffer.concat([Buffer.from('{"title":"caf'), Buffer.from([0xe9]), Buffer.from('","content":"x"}')]);
    for (const type of ["application/json", "application/json; charset=utf-8", 'application/json; charset="UTF-8"']) {
      const response = await api.request("POST", "/api/posts", { as: "writer", rawBytes: bytes, headers: { "content-type": type } });
      expect(response.status, type).toBe(400);
      expect(response.body.errors[0]).toMatchObject({ path: "body" });
      expect(response.body.detail).toMatch(/UTF-8/);
    }
  });

  it("in UTF-8, declared or not, is read as it is", async () => {
    const response = await api.request("POST", "/api/posts", {
      as: "writer",
      rawBytes: Buffer.from('{"title":"café","content":"x"}'),
      headers: { "content-type": "application/json; charset=UTF-8" },
    });
    expect(response.status).toBe(201);
    expect(response.body.title).toBe("café");
  });
});

describe("the text rules", () => {
  it.each([
    ["NEL (C1)", "a\u0085b", "U+0085"],
    ["CSI (C1)", "a\u009bb", "U+009B"],
    ["a tag character", "a\u{E0041}b", "U+E0041"],
    ["a C0 control", "a\u0007b", "U+0007"],
    ["DEL", "a\u007fb", "U+007F"],
  ])("refuse %s in titles, content and comments, naming the character and where", async (_what, text, code) => {
    for (const [path, body, field] of [
      ["/api/posts", { title: text, content: "x" }, "title"],
      ["/api/posts", { title: "x", content: text }, "content"],
      [`/api/posts/${postId}/comments`, { content: text }, "content"],
    ] as const) {
      const response = await api.request("POST", path, { as: "writer", body });
      expect(response.status, `${path} ${field}`).toBe(400);
      const error = response.body.errors.find((e: { path: string }) => e.path === field);
      expect(error.message).toContain(code);
      expect(error.message).toMatch(/position 2/);
    }
  });

  it("keep newlines and tabs in content, but not in titles", async () => {
    expect((await api.request("POST", "/api/posts", { as: "writer", body: { title: "x", content: "a\n\tb\r\nc" } })).status).toBe(201);
    expect((await api.request("POST", "/api/posts", { as: "writer", body: { title: "a\nb", content: "x" } })).status).toBe(400);
  });
});

describe("an Idempotency-Key reused", () => {
  it("with another body for a post is 422, and the first post stays as it was", async () => {
    const headers = { "idempotency-key": "post-key-1" };
    const first = await api.request("POST", "/api/posts", { as: "writer", body: { title: "first", content: "x" }, headers });
    expect(first.status).toBe(201);
    expect((await api.request("POST", "/api/posts", { as: "writer", body: { title: "first", content: "x" }, headers })).headers["idempotent-replayed"]).toBe(
      "true",
    );
    const other = await api.request("POST", "/api/posts", { as: "writer", body: { title: "second", content: "x" }, headers });
    expect(other.status).toBe(422);
    expect(other.body.detail).toMatch(/Idempotency-Key/);
    expect((await api.request("GET", `/api/posts/${first.body.postId}`)).body.title).toBe("first");
  });

  it("replays the first post even after the author edited it", async () => {
    const headers = { "idempotency-key": "post-key-2" };
    const first = await api.request("POST", "/api/posts", { as: "writer", body: { title: "draft", content: "x" }, headers });
    await api.request("PUT", `/api/posts/${first.body.postId}`, { as: "writer", body: { title: "edited", content: "x" } });
    const again = await api.request("POST", "/api/posts", { as: "writer", body: { title: "draft", content: "x" }, headers });
    expect(again.status).toBe(201);
    expect(again.headers["idempotent-replayed"]).toBe("true");
  });

  it("with another body for a comment is 422, and no second comment is made", async () => {
    const headers = { "idempotency-key": "comment-key-1" };
    expect((await api.request("POST", `/api/posts/${postId}/comments`, { as: "writer", body: { content: "one" }, headers })).status).toBe(201);
    const other = await api.request("POST", `/api/posts/${postId}/comments`, { as: "writer", body: { content: "two" }, headers });
    expect(other.status).toBe(422);
    const comments = (await api.request("GET", `/api/posts/${postId}/comments`)).body.items.map((c: { content: string }) => c.content);
    expect(comments).toEqual(["one"]);
    expect((await api.request("GET", `/api/posts/${postId}`)).body.commentCount).toBe(1);
  });
});

describe("HEAD and query parameters", () => {
  it("HEAD answers wherever GET does, with GET's status and headers and no body", async () => {
    for (const path of [
      `/api/posts/${postId}`,
      "/api/users/writer",
      "/api/users/writer/posts",
      `/api/posts/${postId}/comments`,
      `/api/posts/${postId}/likes`,
      "/api/feed",
      "/api/openapi.json",
    ]) {
      const get = await api.request("GET", path);
      const head = await api.request("HEAD", path);
      expect(head.status, path).toBe(200);
      expect(head.headers.etag, path).toBe(get.headers.etag);
      expect(head.body, path).toBeUndefined();
    }
    expect((await api.request("HEAD", "/api/posts/missing")).status).toBe(404);
  });

  it("an empty limit takes the default", async () => {
    expect((await api.request("GET", "/api/feed?limit=")).status).toBe(200);
    expect((await api.request("GET", `/api/posts/${postId}/comments?limit=`)).status).toBe(200);
  });

  it("a repeated query parameter is a 400 naming it", async () => {
    for (const path of ["/api/feed?limit=1&limit=2", `/api/posts/${postId}/comments?limit=5&limit=5`]) {
      const response = await api.request("GET", path);
      expect(response.status, path).toBe(400);
      expect(response.body.errors[0]).toMatchObject({ path: "limit" });
    }
  });
});
