import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SignJWT } from "jose";
import { apiFixture, TEST_SECRET, type ApiFixture } from "../support/api";

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

/** `text` as a title, as content and as a comment: each must be a 400; the message naming each field. */
async function refusals(text: string): Promise<string[]> {
  const messages: string[] = [];
  for (const [path, body, field] of [
    ["/api/posts", { title: text, content: "x" }, "title"],
    ["/api/posts", { title: "x", content: text }, "content"],
    [`/api/posts/${postId}/comments`, { content: text }, "content"],
  ] as const) {
    const response = await api.request("POST", path, { as: "writer", body });
    expect(response.status, `${path} ${field}`).toBe(400);
    messages.push(response.body.errors.find((e: { path: string }) => e.path === field).message);
  }
  return messages;
}

describe("the text rules", () => {
  it.each([
    ["NEL (C1)", "a\u0085b", "U+0085"],
    ["CSI (C1)", "a\u009bb", "U+009B"],
    ["a tag character", "a\u{E0041}b", "U+E0041"],
    ["a C0 control", "a\u0007b", "U+0007"],
    ["DEL", "a\u007fb", "U+007F"],
  ])("refuse %s in titles, content and comments, naming the character and where", async (_what, text, code) => {
    for (const message of await refusals(text)) {
      expect(message).toContain(code);
      expect(message).toMatch(/position 2/);
    }
  });

  it.each([
    ["U+3164 HANGUL FILLER", "\u3164\u3164"],
    ["U+FFA0 HALFWIDTH HANGUL FILLER", "\uffa0"],
    ["U+1160 HANGUL JUNGSEONG FILLER", "\u1160 \u1160"],
    ["U+2800 BRAILLE PATTERN BLANK", "\u2800\u2800"],
    ["U+034F COMBINING GRAPHEME JOINER", "\u034f"],
    ["a combining mark alone", "\u0301"],
  ])("refuse text made only of %s, which draws nothing, as not visible", async (_what, text) => {
    expect(await refusals(text)).toEqual(["must contain visible text", "must contain visible text", "must contain visible text"]);
  });

  it("take text in any script, emoji and symbols, with a filler or joiner among visible characters", async () => {
    for (const title of ["한글", "٣", "😀", "→", "a\u034fb", "\u3164한"]) {
      expect((await api.request("POST", "/api/posts", { as: "writer", body: { title, content: "x" } })).status, title).toBe(201);
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

describe("a rename's ETag", () => {
  it("is the stored profile's: a GET right after shows it, and a PUT with If-Match naming it succeeds", async () => {
    await api.user("renamer", "renamer-1");
    const renamed = await api.request("PUT", "/api/users/renamer", { as: "renamer", body: { username: "renamer-2" } });
    expect(renamed.status).toBe(200);
    expect((await api.request("GET", "/api/users/renamer")).headers.etag).toBe(renamed.headers.etag);
    const again = await api.request("PUT", "/api/users/renamer", {
      as: "renamer",
      body: { username: "renamer-3" },
      headers: { "if-match": renamed.headers.etag },
    });
    expect(again.status).toBe(200);
    expect((await api.request("GET", "/api/users/renamer")).headers.etag).toBe(again.headers.etag);
  });
});

describe("preconditions on every method (RFC 9110 13.1)", () => {
  const newPost = async () => (await api.request("POST", "/api/posts", { as: "writer", body: { title: "to delete", content: "c" } })).body.postId as string;

  it("a DELETE with an If-Match naming another version, or If-None-Match: *, is 412 and deletes nothing", async () => {
    const id = await newPost();
    for (const headers of [{ "if-match": '"nope"' }, { "if-none-match": "*" }]) {
      expect((await api.request("DELETE", `/api/posts/${id}`, { as: "writer", headers })).status, JSON.stringify(headers)).toBe(412);
      expect((await api.request("GET", `/api/posts/${id}`)).status).toBe(200);
    }
    const { etag } = (await api.request("GET", `/api/posts/${id}`)).headers;
    expect((await api.request("DELETE", `/api/posts/${id}`, { as: "writer", headers: { "if-match": etag } })).status).toBe(204);
    expect((await api.request("GET", `/api/posts/${id}`)).status).toBe(404);
    // Gone: no current version for an If-Match to name.
    expect((await api.request("DELETE", `/api/posts/${id}`, { as: "writer", headers: { "if-match": "*" } })).status).toBe(412);
  });

  it("a GET whose If-Match names no current ETag is 412; one that names it is 200", async () => {
    const { etag } = (await api.request("GET", `/api/posts/${postId}`)).headers;
    expect((await api.request("GET", `/api/posts/${postId}`, { headers: { "if-match": '"nope"' } })).status).toBe(412);
    expect((await api.request("GET", `/api/posts/${postId}`, { headers: { "if-match": etag } })).status).toBe(200);
    expect((await api.request("GET", `/api/posts/${postId}/comments`, { headers: { "if-match": '"nope"' } })).status).toBe(412);
  });

  it("a like's If-None-Match: * fails once liked and an unlike's If-Match fails on another version, changing nothing", async () => {
    const id = await newPost();
    expect((await api.request("POST", `/api/posts/${id}/likes`, { as: "writer", headers: { "if-none-match": "*" } })).status).toBe(201);
    expect((await api.request("POST", `/api/posts/${id}/likes`, { as: "writer", headers: { "if-none-match": "*" } })).status).toBe(412);
    expect((await api.request("DELETE", `/api/posts/${id}/likes`, { as: "writer", headers: { "if-match": '"nope"' } })).status).toBe(412);
    expect((await api.request("GET", `/api/posts/${id}`)).body.likeCount).toBe(1);
    expect((await api.request("DELETE", `/api/posts/${id}/likes`, { as: "writer", headers: { "if-match": "*" } })).status).toBe(204);
  });

  it("a comment, post or profile to be created has no version: If-Match on it is 412 and creates nothing", async () => {
    const id = await newPost();
    const comment = await api.request("POST", `/api/posts/${id}/comments`, { as: "writer", body: { content: "hi" }, headers: { "if-match": "*" } });
    expect(comment.status).toBe(412);
    expect((await api.request("GET", `/api/posts/${id}`)).body.commentCount).toBe(0);
    expect((await api.request("POST", "/api/posts", { as: "writer", body: { title: "x", content: "y" }, headers: { "if-match": "*" } })).status).toBe(412);
    expect((await api.request("POST", "/api/users", { as: "nobody-yet", body: { username: "nobody-yet" }, headers: { "if-match": "*" } })).status).toBe(412);
    expect((await api.request("GET", "/api/users/nobody-yet")).status).toBe(404);
  });
});

describe("a 401 and the bearer token rules", () => {
  const secret = new TextEncoder().encode(TEST_SECRET);
  const sign = (claims: { iat?: number; exp: number }) => new SignJWT({ ...claims }).setProtectedHeader({ alg: "HS256" }).setSubject("writer").sign(secret);
  const now = () => Math.floor(Date.now() / 1000);

  it("with no Authorization header challenges with no error code (RFC 6750 3.1); a bad token with invalid_token", async () => {
    const none = await api.request("POST", "/api/posts", { body: { title: "t", content: "c" } });
    expect(none.status).toBe(401);
    expect(none.headers["www-authenticate"]).toBe("Bearer");
    const bad = await api.request("POST", "/api/posts", { authorization: "Bearer not-a-jwt", body: { title: "t", content: "c" } });
    expect(bad.status).toBe(401);
    expect(bad.headers["www-authenticate"]).toBe('Bearer error="invalid_token"');
  });

  it("refuse a dev token issued in the future, or living longer than a day, as Entra tokens are refused", async () => {
    for (const claims of [
      { iat: now() + 3600, exp: now() + 7200 },
      { iat: now(), exp: 1e300 },
      { iat: now() - 2 * 86_400, exp: now() + 600 },
      { exp: now() + 600 },
    ]) {
      const response = await api.request("POST", "/api/posts", { authorization: `Bearer ${await sign(claims)}`, body: { title: "t", content: "c" } });
      expect(response.status, JSON.stringify(claims)).toBe(401);
    }
  });

  it("allow five minutes of clock skew either way", async () => {
    for (const claims of [
      { iat: now() + 120, exp: now() + 3600 },
      { iat: now() - 3600, exp: now() - 120 },
    ]) {
      const response = await api.request("POST", "/api/posts", { authorization: `Bearer ${await sign(claims)}`, body: { title: "t", content: "c" } });
      expect(response.status, JSON.stringify(claims)).toBe(201);
    }
  });
});
