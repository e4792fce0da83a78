import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { handlePostsChanges } from "../../src/pipeline/posts-change-feed";
import { apiFixture, type ApiFixture } from "../support/api";
import { manualPump, writesTo } from "../support/pump";

/**
 * Guarantee: the feed is the 100 newest live posts (when at least 100 exist): never fewer, and
 * never an older post in place of a newer one. Posts outside that window are never written to it.
 */
let api: ApiFixture;
let pump: ReturnType<typeof manualPump>;
const created: string[] = []; // oldest first
const deleted = new Set<string>();

beforeAll(async () => {
  api = await apiFixture();
  pump = manualPump(api.blog.posts, (documents) => handlePostsChanges(api.blog, documents));
  await api.user("writer", "writer");
  await api.user("reader", "reader");
  for (let i = 0; i < 105; i++) {
    created.push((await api.request("POST", "/api/posts", { as: "writer", body: { title: `post ${i}`, content: "c" } })).body.postId);
  }
  await pump.drain();
}, 60_000);
afterAll(() => api.stop());

const newestLive = () =>
  created
    .filter((id) => !deleted.has(id))
    .reverse()
    .slice(0, 100);
const feedIds = async () => (await api.request("GET", "/api/feed?limit=100")).body.items.map((p: { id: string }) => p.id) as string[];

describe("the feed is the 100 newest live posts", () => {
  it("holds exactly the 100 newest after 105 posts", async () => {
    expect(await feedIds()).toEqual(newestLive());
  });

  it("stays full when posts in it are deleted: the next newest take their place", async () => {
    for (const id of [created[104], created[60], created[10]]) {
      expect((await api.request("DELETE", `/api/posts/${id}`, { as: "writer" })).status).toBe(204);
      deleted.add(id);
    }
    await pump.drain();
    expect(await feedIds()).toEqual(newestLive());
  });

  it("never admits an older post edited or commented on in place of a newer one", async () => {
    const oldest = created[0];
    await api.request("POST", `/api/posts/${oldest}/comments`, { as: "reader", body: { content: "bump" } });
    await api.request("PUT", `/api/posts/${oldest}`, { as: "writer", body: { title: "edited", content: "c" } });
    await pump.drain();
    expect(await feedIds()).toEqual(newestLive());
  });

  it("writes nothing to the feed for a change to a post outside the window", async () => {
    const old = created[1];
    expect(newestLive()).not.toContain(old);
    await api.request("POST", `/api/posts/${old}/likes`, { as: "reader" });
    const requests = await pump.drain();
    expect(writesTo(requests, "feed")).toEqual([]);
    // The author's list still follows every change.
    const list = (await api.request("GET", "/api/users/writer/posts?limit=100")).body.items;
    expect(list.length).toBe(100);
  });
});

describe("the feed with posts of one creationDate", () => {
  it("breaks ties by id everywhere the feed is chosen, cut or refilled", async () => {
    const tied = await apiFixture();
    const tiedPump = manualPump(tied.blog.posts, (documents) => handlePostsChanges(tied.blog, documents));
    try {
      await tied.user("twin", "twin");
      // Written behind the API (as a migration would): 130 posts with one creationDate.
      const creationDate = "2026-01-01T00:00:00.000Z";
      const ids = Array.from({ length: 130 }, (_, i) => `tie-${String((i * 7919) % 1009).padStart(4, "0")}`);
      for (const id of ids) {
        await tied.blog.posts.items.create({
          id,
          type: "post",
          postId: id,
          userId: "twin",
          userUsername: "twin",
          title: id,
          content: "c",
          commentCount: 0,
          likeCount: 0,
          creationDate,
        });
      }
      await tiedPump.drain();
      const order = [...ids].sort().reverse(); // newest first: the same date, then id descending
      const feed = async () => (await tied.request("GET", "/api/feed?limit=100")).body.items.map((p: { id: string }) => p.id) as string[];
      expect(await feed()).toEqual(order.slice(0, 100));
      for (const id of order.slice(0, 20)) expect((await tied.request("DELETE", `/api/posts/${id}`, { as: "twin" })).status).toBe(204);
      await tiedPump.drain();
      expect(await feed()).toEqual(order.slice(20, 120));
    } finally {
      await tied.stop();
    }
  }, 60_000);
});
