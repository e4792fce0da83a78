import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { handlePostsChanges } from "../../src/pipeline/posts-change-feed";
import { measureCosmos } from "../../src/store/metering";
import { ChangeFeedStartFrom } from "@azure/cosmos";
import { apiFixture, type ApiFixture } from "../support/api";

/**
 * Reads that can be served from cache: Q6 through each instance's micro-cache (one Cosmos DB
 * request per TTL however many readers, single flight), and Cache-Control plus strong ETags on
 * GET /feed and GET /posts/{id} for CDNs and browsers.
 */
let api: ApiFixture;
let postId: string;
const feedRequests = (requests: { path: string; isQueryPlan: boolean }[]) => requests.filter((r) => r.path.includes("/colls/feed/") && !r.isQueryPlan).length;

async function publish(title: string): Promise<string> {
  const id = (await api.request("POST", "/api/posts", { as: "author", body: { title, content: "c" } })).body.postId as string;
  const iterator = api.blog.posts.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning(id) });
  await handlePostsChanges(api.blog, (await iterator.readNext()).result);
  return id;
}

/** The store's clock: the micro-cache's TTL passes when the test moves it, not by sleeping. */
let now = 0;
beforeAll(async () => {
  api = await apiFixture({ settings: { feedCacheMs: 2000 }, now: () => now });
  await api.user("author", "author");
  postId = await publish("first");
});
afterAll(() => api.stop());

describe("the feed micro-cache", () => {
  it("answers 50 concurrent readers with one Cosmos DB request (single flight), and reads again after its TTL", async () => {
    now += 2100; // whatever an earlier read cached has expired
    const { result, usage } = await measureCosmos(() =>
      Promise.all(Array.from({ length: 50 }, (_, i) => api.request("GET", `/api/feed?limit=${1 + (i % 20)}`))),
    );
    expect(result.every((r) => r.status === 200)).toBe(true);
    expect(feedRequests(usage.requests)).toBe(1);
    expect(result[0].body.items.map((p: { postId: string }) => p.postId)).toEqual([postId]);

    const again = await api.measured("GET", "/api/feed");
    expect(feedRequests(again.usage.requests)).toBe(0);
    const second = await publish("second");
    expect((await api.request("GET", "/api/feed")).body.items).toHaveLength(1); // still the cached feed
    now += 1900;
    expect(feedRequests((await api.measured("GET", "/api/feed")).usage.requests)).toBe(0); // within its TTL still
    now += 200;
    const fresh = await api.measured("GET", "/api/feed");
    expect(feedRequests(fresh.usage.requests)).toBe(1);
    expect(fresh.response.body.items.map((p: { postId: string }) => p.postId)).toEqual([second, postId]);
  });
  it("builds what a turn of the cache serves once per limit, not once per reader: a malformed feed item is logged once a turn", async () => {
    now += 2100;
    // Written behind the API's back, newer than any post, so every page of the feed holds it.
    await api.blog.feed.items.create({ id: "malformed", type: "post", postId: "malformed", creationDate: "2999-01-01T00:00:00.000Z" });
    const logged: string[] = [];
    api.onLog((line) => line.includes("'malformed'") && logged.push(line));
    try {
      const answers = await Promise.all(Array.from({ length: 10 }, () => api.request("GET", "/api/feed")));
      expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
      expect(new Set(answers.map((a) => a.headers.etag)).size).toBe(1);
      expect(answers[0].body.items.map((p: { postId: string }) => p.postId)).not.toContain("malformed");
      expect(logged).toHaveLength(1);
      await api.request("GET", "/api/feed?limit=1");
      expect(logged).toHaveLength(2); // another limit, another answer
      now += 2100;
      await api.request("GET", "/api/feed");
      expect(logged).toHaveLength(3); // the next turn
    } finally {
      await api.blog.feed.item("malformed", "post").delete();
      now += 2100;
    }
  });
});

describe("cache headers", () => {
  it("GET /feed: Cache-Control with max-age and stale-while-revalidate, a strong ETag that a conditional GET answers with 304", async () => {
    const feed = await api.request("GET", "/api/feed");
    expect(feed.headers["cache-control"]).toMatch(/^public, max-age=\d+, stale-while-revalidate=\d+$/);
    expect(feed.headers.etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    const notModified = await api.request("GET", "/api/feed", { headers: { "if-none-match": feed.headers.etag } });
    expect(notModified.status).toBe(304);
    // Another view of the feed (another limit) is another representation, with another tag.
    expect((await api.request("GET", "/api/feed?limit=1")).headers.etag).not.toBe(feed.headers.etag);
  });

  it("the paged lists (Q3, Q4, Q5): a strong ETag that a conditional GET answers with 304, and another once the list changes", async () => {
    for (const path of ["/api/users/author/posts", `/api/posts/${postId}/comments`, `/api/posts/${postId}/likes`]) {
      const list = await api.request("GET", path);
      expect(list.headers.etag, path).toMatch(/^"[A-Za-z0-9_-]+"$/);
      expect((await api.request("GET", path, { headers: { "if-none-match": list.headers.etag } })).status, path).toBe(304);
    }
    const comments = `/api/posts/${postId}/comments`;
    const before = (await api.request("GET", comments)).headers.etag;
    await api.request("POST", comments, { as: "author", body: { content: "new" } });
    const after = await api.request("GET", comments, { headers: { "if-none-match": before } });
    expect(after.status).toBe(200);
    expect(after.headers.etag).not.toBe(before);
  });

  it("GET /posts/{id}: Cache-Control and the post's ETag, which changes when the post does", async () => {
    const post = await api.request("GET", `/api/posts/${postId}`);
    expect(post.headers["cache-control"]).toMatch(/^public, max-age=\d+, stale-while-revalidate=\d+$/);
    expect((await api.request("GET", `/api/posts/${postId}`, { headers: { "if-none-match": post.headers.etag } })).status).toBe(304);
    await api.request("POST", `/api/posts/${postId}/likes`, { as: "author" });
    const liked = await api.request("GET", `/api/posts/${postId}`, { headers: { "if-none-match": post.headers.etag } });
    expect(liked.status).toBe(200);
    expect(liked.headers.etag).not.toBe(post.headers.etag);
  });
});
