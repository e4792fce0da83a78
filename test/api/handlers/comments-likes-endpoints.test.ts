import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiFixture, type ApiFixture } from "../../support/api";

let api: ApiFixture;
let postId: string;
beforeAll(async () => {
  api = await apiFixture();
  await api.user("writer", "Writer");
  await api.user("fan", "Fan");
  postId = (await api.request("POST", "/api/posts", { as: "writer", body: { title: "T", content: "C" } })).body.postId;
});
afterAll(() => api.stop());

async function collect(path: string, limit: number): Promise<{ items: { id: string }[]; pages: number }> {
  const items: { id: string }[] = [];
  let token: string | null = null;
  let pages = 0;
  do {
    const query: string = `?limit=${limit}${token ? `&continuationToken=${encodeURIComponent(token)}` : ""}`;
    const response = await api.request("GET", `${path}${query}`);
    expect(response.status).toBe(200);
    expect(response.body.items.length).toBeLessThanOrEqual(limit);
    items.push(...response.body.items);
    token = response.body.continuationToken;
    pages++;
  } while (token);
  return { items, pages };
}

describe("comments (C3, Q4)", () => {
  it("adds a comment with the commenter's username and bumps commentCount", async () => {
    const response = await api.request("POST", `/api/posts/${postId}/comments`, { as: "fan", body: { content: "First!" } });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({ type: "comment", postId, userId: "fan", userUsername: "Fan", content: "First!" });
    expect((await api.request("GET", `/api/posts/${postId}`)).body.commentCount).toBe(1);
    const list = await api.request("GET", `/api/posts/${postId}/comments`);
    expect(list.body.items).toEqual([response.body]);
    expect(list.body.continuationToken).toBeNull();
  });

  it("404s on a missing post, 403 without a profile, 400 on bad content", async () => {
    expect((await api.request("POST", "/api/posts/nope/comments", { as: "fan", body: { content: "x" } })).status).toBe(404);
    expect((await api.request("POST", `/api/posts/${postId}/comments`, { as: "stranger", body: { content: "x" } })).status).toBe(403);
    expect((await api.request("POST", `/api/posts/${postId}/comments`, { as: "fan", body: { content: "x".repeat(2001) } })).status).toBe(400);
    expect((await api.request("POST", `/api/posts/${postId}/comments`, { as: "fan", body: { content: "" } })).status).toBe(400);
  });

  it("pages through comments oldest first, every item exactly once", async () => {
    const id = (await api.request("POST", "/api/posts", { as: "writer", body: { title: "paged", content: "c" } })).body.postId;
    const written: string[] = [];
    for (let i = 0; i < 23; i++) {
      written.push((await api.request("POST", `/api/posts/${id}/comments`, { as: "fan", body: { content: `c${i}` } })).body.id);
    }
    const { items, pages } = await collect(`/api/posts/${id}/comments`, 5);
    expect(pages).toBe(5);
    expect(items.map((c) => c.id)).toEqual(written);
  });

  it("rejects a malformed continuation token and one from another list with 400", async () => {
    expect((await api.request("GET", `/api/posts/${postId}/comments?continuationToken=garbage`)).status).toBe(400);
    const other = (await api.request("POST", "/api/posts", { as: "writer", body: { title: "other", content: "c" } })).body.postId;
    for (let i = 0; i < 3; i++) await api.request("POST", `/api/posts/${other}/comments`, { as: "fan", body: { content: `c${i}` } });
    const page = await api.request("GET", `/api/posts/${other}/comments?limit=1`);
    const token = page.body.continuationToken as string;
    expect(token).toBeTruthy();
    expect((await api.request("GET", `/api/posts/${postId}/comments?continuationToken=${encodeURIComponent(token)}`)).status).toBe(400);
    expect((await api.request("GET", `/api/posts/${postId}/likes?limit=0`)).status).toBe(400);
    expect((await api.request("GET", `/api/posts/${postId}/likes?limit=101`)).status).toBe(400);
    expect((await api.request("GET", `/api/posts/${postId}/likes?limit=abc`)).status).toBe(400);
  });
});

describe("likes (C4, unlike, Q5)", () => {
  it("likes once: 201, then 200 with the count unchanged; unlike 204 then 404", async () => {
    const id = (await api.request("POST", "/api/posts", { as: "writer", body: { title: "likeable", content: "c" } })).body.postId;
    const first = await api.request("POST", `/api/posts/${id}/likes`, { as: "fan" });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ type: "like", postId: id, userId: "fan", userUsername: "Fan" });
    const again = await api.request("POST", `/api/posts/${id}/likes`, { as: "fan" });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect((await api.request("GET", `/api/posts/${id}`)).body.likeCount).toBe(1);
    expect((await api.request("GET", `/api/posts/${id}/likes`)).body.items).toEqual([first.body]);

    expect((await api.request("DELETE", `/api/posts/${id}/likes`, { as: "fan" })).status).toBe(204);
    expect((await api.request("GET", `/api/posts/${id}`)).body.likeCount).toBe(0);
    expect((await api.request("DELETE", `/api/posts/${id}/likes`, { as: "fan" })).status).toBe(404);
    expect((await api.request("POST", `/api/posts/${id}/likes`, { as: "fan" })).status).toBe(201);
    expect((await api.request("GET", `/api/posts/${id}`)).body.likeCount).toBe(1);
  });

  it("404s on a missing post and rejects a body with fields", async () => {
    expect((await api.request("POST", "/api/posts/nope/likes", { as: "fan" })).status).toBe(404);
    expect((await api.request("DELETE", "/api/posts/nope/likes", { as: "fan" })).status).toBe(404);
    expect((await api.request("POST", `/api/posts/${postId}/likes`, { as: "fan", body: { count: 100 } })).status).toBe(400);
  });
});

describe("exact counters under concurrency", () => {
  it("200 concurrent comments and 200 concurrent likes by distinct users leave exact counts", async () => {
    const users = Array.from({ length: 200 }, (_, i) => `crowd${i}`);
    for (const user of users) await api.user(user);
    const id = (await api.request("POST", "/api/posts", { as: "writer", body: { title: "viral", content: "c" } })).body.postId;
    const responses = await Promise.all(
      users.flatMap((user) => [
        api.request("POST", `/api/posts/${id}/comments`, { as: user, body: { content: `from ${user}` } }),
        api.request("POST", `/api/posts/${id}/likes`, { as: user }),
      ]),
    );
    expect(responses.filter((r) => r.status === 201)).toHaveLength(400);
    const post = (await api.request("GET", `/api/posts/${id}`)).body;
    expect(post.commentCount).toBe(200);
    expect(post.likeCount).toBe(200);
    expect((await collect(`/api/posts/${id}/comments`, 100)).items).toHaveLength(200);
    expect((await collect(`/api/posts/${id}/likes`, 100)).items).toHaveLength(200);
  });
});
