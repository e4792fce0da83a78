import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiFixture, type ApiFixture } from "../../support/api";

let api: ApiFixture;
beforeAll(async () => {
  api = await apiFixture();
  await api.user("author", "Author");
  await api.user("reader", "Reader");
});
afterAll(() => api.stop());

const newPost = async (title = "Hello", content = "World") => {
  const response = await api.request("POST", "/api/posts", { as: "author", body: { title, content } });
  expect(response.status).toBe(201);
  return response;
};

describe("posts (C2, Q2, delete)", () => {
  it("creates a post with the author's username and zero counts", async () => {
    const response = await newPost("First", "Body text");
    expect(response.body).toMatchObject({
      type: "post",
      userId: "author",
      userUsername: "Author",
      title: "First",
      content: "Body text",
      commentCount: 0,
      likeCount: 0,
    });
    expect(response.body.id).toBe(response.body.postId);
    expect(new Date(response.body.creationDate).toISOString()).toBe(response.body.creationDate);
    expect(response.body).not.toHaveProperty("_rid");
    expect(response.headers.location).toBe(`/api/posts/${response.body.postId}`);
  });

  it("requires a profile to post, with a problem type of its own a client can send the person on with", async () => {
    const response = await api.request("POST", "/api/posts", { as: "no-profile", body: { title: "t", content: "c" } });
    expect(response.status).toBe(403);
    expect(response.body.type).toBe("tag:blog-cosmos-functions,2026:profile-required");
  });

  it("reads a post with ETag; 404 when missing", async () => {
    const { body } = await newPost();
    const read = await api.request("GET", `/api/posts/${body.postId}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(body);
    expect(read.headers.etag).toMatch(/^".+"$/);
    expect((await api.request("GET", "/api/posts/does-not-exist")).status).toBe(404);
  });

  it("edits only for the author, keeps counts, honours If-Match", async () => {
    const { body } = await newPost();
    await api.request("POST", `/api/posts/${body.postId}/likes`, { as: "reader" });
    expect((await api.request("PUT", `/api/posts/${body.postId}`, { as: "reader", body: { title: "x", content: "y" } })).status).toBe(403);
    const stale = await api.request("PUT", `/api/posts/${body.postId}`, {
      as: "author",
      body: { title: "x", content: "y" },
      headers: { "if-match": '"stale"' },
    });
    expect(stale.status).toBe(412);
    const current = await api.request("GET", `/api/posts/${body.postId}`);
    const edited = await api.request("PUT", `/api/posts/${body.postId}`, {
      as: "author",
      body: { title: "Edited", content: "New" },
      headers: { "if-match": current.headers.etag },
    });
    expect(edited.status).toBe(200);
    expect(edited.body).toMatchObject({ title: "Edited", content: "New", likeCount: 1, commentCount: 0, updatedDate: expect.any(String) });
    expect((await api.request("PUT", "/api/posts/missing", { as: "author", body: { title: "x", content: "y" } })).status).toBe(404);
  });

  it("soft-deletes a post with its comments and likes: only the author, then 404 everywhere", async () => {
    const { body } = await newPost();
    const id = body.postId;
    await api.request("POST", `/api/posts/${id}/comments`, { as: "reader", body: { content: "nice" } });
    await api.request("POST", `/api/posts/${id}/likes`, { as: "reader" });
    expect((await api.request("DELETE", `/api/posts/${id}`, { as: "reader" })).status).toBe(403);
    expect((await api.request("DELETE", `/api/posts/${id}`, { as: "author" })).status).toBe(204);
    expect((await api.request("GET", `/api/posts/${id}`)).status).toBe(404);
    expect((await api.request("GET", `/api/posts/${id}/comments`)).status).toBe(404);
    expect((await api.request("GET", `/api/posts/${id}/likes`)).status).toBe(404);
    expect((await api.request("POST", `/api/posts/${id}/comments`, { as: "reader", body: { content: "late" } })).status).toBe(404);
    expect((await api.request("POST", `/api/posts/${id}/likes`, { as: "reader" })).status).toBe(404);
    expect((await api.request("PUT", `/api/posts/${id}`, { as: "author", body: { title: "x", content: "y" } })).status).toBe(404);
    // Soft delete: the items are still stored, flagged, with a TTL, until Cosmos DB expires them.
    const { resources } = await api.blog.posts.items.query("SELECT c.type, c.deleted, c.ttl FROM c", { partitionKey: id }).fetchAll();
    expect(resources).toHaveLength(3);
    expect(resources.every((r) => r.deleted === true && r.ttl === api.settings.softDeleteTtlSeconds)).toBe(true);
  });

  it("enforces title and content limits and rejects bodies over 64 KiB with 413", async () => {
    expect((await api.request("POST", "/api/posts", { as: "author", body: { title: "t".repeat(200), content: "c" } })).status).toBe(201);
    expect((await api.request("POST", "/api/posts", { as: "author", body: { title: "t".repeat(201), content: "c" } })).status).toBe(400);
    expect((await api.request("POST", "/api/posts", { as: "author", body: { title: "t", content: "c".repeat(20_000) } })).status).toBe(201);
    expect((await api.request("POST", "/api/posts", { as: "author", body: { title: "t", content: "c".repeat(20_001) } })).status).toBe(400);
    expect((await api.request("POST", "/api/posts", { as: "author", body: { title: "   ", content: "c" } })).status).toBe(400);
    const huge = await api.request("POST", "/api/posts", { as: "author", rawBody: JSON.stringify({ title: "t", content: "x".repeat(70_000) }) });
    expect(huge.status).toBe(413);
    expect(huge.headers["content-type"]).toBe("application/problem+json");
  });

  it("stores quotes, SQL-looking text and unicode verbatim", async () => {
    const title = `It's "quoted" '; DROP TABLE posts; --`;
    const content = "emoji 😀, accents é, CJK 漢字, RTL עברית\nsecond line\ttab";
    const { body } = await newPost(title, content);
    const read = await api.request("GET", `/api/posts/${body.postId}`);
    expect(read.body.title).toBe(title);
    expect(read.body.content).toBe(content);
  });
});
