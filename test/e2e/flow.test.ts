import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { localSystem, within, type Client } from "../support/system";

let app: Client;
beforeAll(async () => {
  // As npm start runs it: the embedded server on a thread of its own.
  app = await localSystem({ cosmosThread: true });
  await app.call("POST", "/users", { as: "ann", body: { username: "Ann" } });
  await app.call("POST", "/users", { as: "ben", body: { username: "Ben" } });
});
afterAll(() => app.stop());

describe("the whole system over HTTP", () => {
  it("serves C1-C4 and Q1-Q6 with the right usernames and counts", async () => {
    expect((await app.call("GET", "/users/ann")).body).toEqual({ id: "ann", username: "Ann" });
    const post = (await app.call("POST", "/posts", { as: "ann", body: { title: "Cosmos", content: "Partitioning is fun" } })).body;
    expect((await app.call("POST", `/posts/${post.id}/comments`, { as: "ben", body: { content: "Agreed" } })).status).toBe(201);
    expect((await app.call("POST", `/posts/${post.id}/likes`, { as: "ben" })).status).toBe(201);
    expect((await app.call("POST", `/posts/${post.id}/likes`, { as: "ann" })).status).toBe(201);

    const q2 = (await app.call("GET", `/posts/${post.id}`)).body;
    expect(q2).toMatchObject({ userUsername: "Ann", commentCount: 1, likeCount: 2 });
    expect((await app.call("GET", `/posts/${post.id}/comments`)).body.items).toEqual([expect.objectContaining({ userUsername: "Ben", content: "Agreed" })]);
    expect((await app.call("GET", `/posts/${post.id}/likes`)).body.items.map((l: { userUsername: string }) => l.userUsername).sort()).toEqual(["Ann", "Ben"]);

    // Q3 and Q6 follow through the change feed, counts included.
    await within(10_000, async () => {
      const q3 = (await app.call("GET", "/users/ann/posts")).body.items;
      const q6 = (await app.call("GET", "/feed")).body.items;
      return q3[0]?.likeCount === 2 && q6[0]?.commentCount === 1;
    });
  });

  it("shows a new post in the feed and in the author's list within 2 s (polled with a generous deadline)", async () => {
    const post = (await app.call("POST", "/posts", { as: "ben", body: { title: "Fresh", content: "x".repeat(300) } })).body;
    await within(10_000, async () => {
      const inFeed = (await app.call("GET", "/feed?limit=5")).body.items.some((p: { id: string }) => p.id === post.id);
      const inList = (await app.call("GET", "/users/ben/posts")).body.items.some((p: { id: string }) => p.id === post.id);
      return inFeed && inList;
    });
    const copy = (await app.call("GET", "/feed?limit=1")).body.items[0];
    expect(copy).toMatchObject({ id: post.id, userUsername: "Ben", title: "Fresh" });
    expect(copy.content).toHaveLength(200);
  });

  it("removes a deleted post from the feed and the author's list", async () => {
    const post = (await app.call("POST", "/posts", { as: "ann", body: { title: "Regret", content: "oops" } })).body;
    await within(10_000, async () => (await app.call("GET", "/feed")).body.items.some((p: { id: string }) => p.id === post.id));
    expect((await app.call("DELETE", `/posts/${post.id}`, { as: "ann" })).status).toBe(204);
    await within(10_000, async () => {
      const inFeed = (await app.call("GET", "/feed?limit=100")).body.items.some((p: { id: string }) => p.id === post.id);
      const inList = (await app.call("GET", "/users/ann/posts?limit=100")).body.items.some((p: { id: string }) => p.id === post.id);
      return !inFeed && !inList;
    });
    expect((await app.call("GET", `/posts/${post.id}`)).status).toBe(404);
  });

  it("checkpoints one lease per partition key range for each change feed consumer, as the Functions trigger does", async () => {
    const ranges = await app.system.store.posts.getFeedRanges();
    expect(ranges.length).toBe(4);
    await within(10_000, async () => {
      const { resources } = await app.system.store.leases.items.query<{ id: string }>("SELECT c.id FROM c").fetchAll();
      const posts = resources.filter((l) => l.id.startsWith("posts-"));
      return posts.length === ranges.length && resources.filter((l) => l.id.startsWith("users-")).length === ranges.length;
    });
  });

  it("answers CORS preflights for configured origins only, and every answer names the headers a page may read", async () => {
    const cors = await localSystem({ corsAllowedOrigins: ["https://blog.example"] });
    try {
      const preflight = await fetch(`${cors.system.url}/posts`, {
        method: "OPTIONS",
        headers: { origin: "https://blog.example", "access-control-request-method": "POST", "access-control-request-headers": "authorization, content-type" },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get("access-control-allow-origin")).toBe("https://blog.example");
      expect(preflight.headers.get("access-control-allow-methods")).toContain("POST");
      expect(preflight.headers.get("access-control-allow-headers")).toContain("authorization");
      const read = await fetch(`${cors.system.url}/feed`, { headers: { origin: "https://blog.example" } });
      expect(read.headers.get("access-control-allow-origin")).toBe("https://blog.example");
      expect(read.headers.get("access-control-expose-headers")?.toLowerCase()).toContain("etag");
      const other = await fetch(`${cors.system.url}/feed`, { headers: { origin: "https://evil.example" } });
      expect(other.status).toBe(200);
      expect(other.headers.get("access-control-allow-origin")).toBeNull();
      expect(
        (await fetch(`${cors.system.url}/posts`, { method: "OPTIONS", headers: { origin: "https://evil.example", "access-control-request-method": "POST" } }))
          .status,
      ).toBe(405);
    } finally {
      await cors.stop();
    }
  });

  it("answers unknown routes and wrong methods with problem+json, never 5xx", async () => {
    const missing = await app.call("GET", "/nothing");
    expect(missing.status).toBe(404);
    expect(missing.headers.get("content-type")).toBe("application/problem+json");
    expect(missing.body).toMatchObject({ type: "about:blank", title: "Not Found", status: 404 });
    const wrong = await app.call("PATCH", "/feed");
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get("allow")).toBe("GET, HEAD");
  });
});
