import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SignJWT } from "jose";
import { handlePostsChanges } from "../../../src/pipeline/posts-change-feed";
import { apiFixture, TEST_SECRET, type ApiFixture } from "../../support/api";

let api: ApiFixture;
beforeAll(async () => (api = await apiFixture()));
afterAll(() => api.stop());

describe("users (C1, Q1)", () => {
  it("creates the caller's profile: 201 with id, username, ETag and Location", async () => {
    const response = await api.request("POST", "/api/users", { as: "alice", body: { username: "Alice" } });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({ id: "alice", username: "Alice" });
    expect(response.headers.etag).toMatch(/^".+"$/);
    expect(response.headers.location).toBe("/api/users/alice");
    expect(response.headers["content-type"]).toBe("application/json");
  });

  it("refuses a second profile for the same user and a username taken in any case", async () => {
    await api.user("bob", "bob");
    const again = await api.request("POST", "/api/users", { as: "bob", body: { username: "bobby" } });
    expect(again.status).toBe(409);
    expect(again.headers["content-type"]).toBe("application/problem+json");
    expect(again.body).toMatchObject({ type: expect.any(String), title: "Conflict", status: 409, detail: expect.stringContaining("profile") });
    const taken = await api.request("POST", "/api/users", { as: "carol", body: { username: "BOB" } });
    expect(taken.status).toBe(409);
    expect(taken.body.detail).toContain("taken");
  });

  it("lets exactly one of two concurrent creates of one username win", async () => {
    const [first, second] = await Promise.all([
      api.request("POST", "/api/users", { as: "racer1", body: { username: "photo-finish" } }),
      api.request("POST", "/api/users", { as: "racer2", body: { username: "Photo-Finish" } }),
    ]);
    expect([first.status, second.status].sort()).toEqual([201, 409]);
    const loser = first.status === 409 ? "racer1" : "racer2";
    expect((await api.request("GET", `/api/users/${loser}`)).status).toBe(404);
  });

  it("reads a profile with an ETag, answers If-None-Match with 304, and 404 for a missing user", async () => {
    await api.user("dave");
    const response = await api.request("GET", "/api/users/dave");
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ id: "dave", username: "dave" });
    const cached = await api.request("GET", "/api/users/dave", { headers: { "if-none-match": response.headers.etag } });
    expect(cached.status).toBe(304);
    expect((await api.request("GET", "/api/users/nobody")).status).toBe(404);
    expect((await api.request("GET", "/api/users/bad%20id")).status).toBe(400);
  });

  it("renames only for the user themself, frees the old name and honours If-Match", async () => {
    await api.user("erin", "erin");
    expect((await api.request("PUT", "/api/users/erin", { as: "mallory", body: { username: "hacked" } })).status).toBe(403);

    const before = await api.request("GET", "/api/users/erin");
    const stale = await api.request("PUT", "/api/users/erin", { as: "erin", body: { username: "erin2" }, headers: { "if-match": '"stale"' } });
    expect(stale.status).toBe(412);

    const renamed = await api.request("PUT", "/api/users/erin", { as: "erin", body: { username: "erin2" }, headers: { "if-match": before.headers.etag } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toEqual({ id: "erin", username: "erin2" });
    expect(renamed.headers.etag).not.toBe(before.headers.etag);
    expect((await api.request("GET", "/api/users/erin")).body.username).toBe("erin2");

    // The old name is free again; the new one is taken.
    expect((await api.request("POST", "/api/users", { as: "frank", body: { username: "ERIN" } })).status).toBe(201);
    expect((await api.request("POST", "/api/users", { as: "grace", body: { username: "erin2" } })).status).toBe(409);
    expect((await api.request("PUT", "/api/users/erin", { as: "erin", body: { username: "erin" } })).status).toBe(409);
  });

  it("allows changing only the case of one's own username", async () => {
    await api.user("heidi", "heidi");
    const response = await api.request("PUT", "/api/users/heidi", { as: "heidi", body: { username: "Heidi" } });
    expect(response.status).toBe(200);
    expect(response.body.username).toBe("Heidi");
    expect((await api.request("POST", "/api/users", { as: "ivan", body: { username: "HEIDI" } })).status).toBe(409);
  });

  it("returns 404 when renaming a profile that does not exist", async () => {
    expect((await api.request("PUT", "/api/users/ghost", { as: "ghost", body: { username: "ghost" } })).status).toBe(404);
  });

  it.each([
    [{ username: "ab" }, "username"],
    [{ username: "a".repeat(33) }, "username"],
    [{ username: "with space" }, "username"],
    [{ username: 42 }, "username"],
    [{}, "username"],
    [{ username: "okay", admin: true }, "admin"],
  ])("rejects %j with 400 naming %s", async (body, field) => {
    const response = await api.request("POST", "/api/users", { as: "validation", body });
    expect(response.status).toBe(400);
    expect(response.body.detail).toContain(field === "admin" ? "Unrecognized key" : field);
  });

  it("requires a valid bearer token to write", async () => {
    const none = await api.request("POST", "/api/users", { body: { username: "anon" } });
    expect(none.status).toBe(401);
    expect(none.headers["www-authenticate"]).toContain("Bearer");
    expect((await api.request("POST", "/api/users", { authorization: "Bearer not-a-jwt", body: { username: "anon" } })).status).toBe(401);
    expect((await api.request("POST", "/api/users", { authorization: "Basic dXNlcjpwYXNz", body: { username: "anon" } })).status).toBe(401);
  });
});

describe("leaving: export and erasure (routes)", () => {
  let admin: ApiFixture;
  beforeAll(async () => {
    admin = await apiFixture({ settings: { auth: { devSecret: TEST_SECRET, adminRoles: ["Blog.Admin"] } } });
    await admin.user("writer", "writer");
    await admin.user("other", "other");
  });
  afterAll(() => admin.stop());

  /** A dev token with app roles, as Entra ID issues one to a caller holding them. */
  const withRoles = async (userId: string, roles: string[]) =>
    `Bearer ${await new SignJWT({ roles }).setProtectedHeader({ alg: "HS256" }).setSubject(userId).setIssuedAt().setExpirationTime("1h").sign(new TextEncoder().encode(TEST_SECRET))}`;

  /** What the posts change feed would have done by now with the posts container's items (of one post, or all): copies and records of where users wrote. */
  async function feedPostsChanges(partitionKey?: string) {
    const { resources } = await admin.blog.posts.items.query("SELECT * FROM c", { partitionKey }).fetchAll();
    await handlePostsChanges(
      admin.blog,
      resources.map((item, index) => ({ ...item, _lsn: item._lsn ?? index + 1 })),
    );
  }

  /** Every page of a user's export, each checked to be a 200 download. */
  async function exportPages(userId: string, limit: number) {
    const pages = [];
    let token: string | null | undefined;
    do {
      const response = await admin.request("GET", `/api/users/${userId}/export?limit=${limit}${token ? `&continuationToken=${token}` : ""}`, { as: userId });
      expect(response.status).toBe(200);
      expect(response.headers["content-disposition"]).toBe(`attachment; filename="blog-export-${userId}.json"`);
      pages.push(response.body);
      token = response.body.continuationToken;
    } while (token);
    return pages;
  }

  it("pages the owner's export as a download, profile first, then posts, then what they wrote", async () => {
    const posts: string[] = [];
    for (let i = 0; i < 3; i++)
      posts.push((await admin.request("POST", "/api/posts", { as: "writer", body: { title: `t${i}`, content: `c${i}` } })).body.postId);
    const othersPost = (await admin.request("POST", "/api/posts", { as: "other", body: { title: "theirs", content: "x" } })).body.postId;
    await admin.request("POST", `/api/posts/${othersPost}/comments`, { as: "writer", body: { content: "said" } });
    await admin.request("POST", `/api/posts/${othersPost}/likes`, { as: "writer" });
    await feedPostsChanges();

    const pages = await exportPages("writer", 2);
    expect(pages[0].profile).toMatchObject({ id: "writer", username: "writer" });
    expect(pages.slice(1).every((page) => page.profile === undefined)).toBe(true);
    expect(pages.flatMap((page) => page.posts.map((post: { postId: string }) => post.postId)).sort()).toEqual([...posts].sort());
    expect(pages.every((page) => page.posts.length <= 2 && page.writing.length <= 2)).toBe(true);
    expect(pages.flatMap((page) => page.writing)).toEqual([
      { postId: othersPost, comments: [expect.objectContaining({ content: "said" })], likedDate: expect.any(String) },
    ]);

    expect((await admin.request("GET", "/api/users/writer/export", { as: "other" })).status).toBe(403);
    expect((await admin.request("GET", "/api/users/writer/export", { authorization: await withRoles("other", ["Blog.Admin"]) })).status).toBe(403);
    expect((await admin.request("GET", "/api/users/writer/export?continuationToken=garbage", { as: "writer" })).status).toBe(400);
  });

  it("bounds every export page by comments too: one post's 230 comments come 100 to a page, each once, in order", async () => {
    for (const user of ["host", "talker"]) await admin.request("POST", "/api/users", { as: user, body: { username: user } });
    const post = (await admin.request("POST", "/api/posts", { as: "host", body: { title: "busy", content: "x" } })).body.postId;
    for (let i = 0; i < 230; i++) {
      expect((await admin.request("POST", `/api/posts/${post}/comments`, { as: "talker", body: { content: `c${i}` } })).status).toBe(201);
    }
    await admin.request("POST", `/api/posts/${post}/likes`, { as: "talker" });
    await feedPostsChanges(post);

    const pages = await exportPages("talker", 100);
    const parts = pages.flatMap((page) => page.writing as { postId: string; comments: { content: string }[]; likedDate: string | null }[]);
    expect(pages.every((page) => page.writing.reduce((n: number, part: { comments: unknown[] }) => n + part.comments.length, 0) <= 100)).toBe(true);
    expect(parts.map((part) => part.comments.length)).toEqual([100, 100, 30]);
    expect(parts.every((part) => part.postId === post)).toBe(true);
    expect(parts.flatMap((part) => part.comments.map((comment) => comment.content))).toEqual(Array.from({ length: 230 }, (_, i) => `c${i}`));
    expect(parts.map((part) => part.likedDate !== null)).toEqual([true, false, false]);
  });

  it("lets an admin role erase someone else's account, and nobody else", async () => {
    expect((await admin.request("DELETE", "/api/users/other", { as: "writer" })).status).toBe(403);
    expect((await admin.request("DELETE", "/api/users/other", { authorization: await withRoles("writer", ["Blog.Reader"]) })).status).toBe(403);
    const erased = await admin.request("DELETE", "/api/users/other", { authorization: await withRoles("writer", ["Blog.Admin"]) });
    expect(erased.status).toBe(202);
    expect(erased.body).toMatchObject({ userId: "other", status: "running", progress: { posts: 0, comments: 0, likes: 0, documents: 0 } });
    expect((await admin.request("GET", "/api/users/other/erasure", { authorization: await withRoles("writer", ["Blog.Admin"]) })).status).toBe(200);
    expect((await admin.request("GET", "/api/users/other")).status).toBe(404);
    expect((await admin.request("DELETE", "/api/users/nobody", { as: "nobody" })).status).toBe(404);
    // The writer's account is untouched.
    expect((await admin.request("GET", "/api/users/writer")).status).toBe(200);
  });
});
