import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PostItem } from "../../src/model/items";
import { handlePostsChanges } from "../../src/pipeline/posts-change-feed";
import type { PostChange } from "../../src/store/copies";
import { apiFixture, type ApiFixture } from "../support/api";

let api: ApiFixture;
beforeAll(async () => {
  api = await apiFixture();
  await api.user("poet", "Poet");
});
afterAll(() => api.stop());

/** The post as the posts change feed would deliver it. */
async function change(postId: string): Promise<PostChange> {
  const { result: resources } = await api.blog.posts.items
    .getChangeFeedIterator<PostChange>({ changeFeedStartFrom: (await import("@azure/cosmos")).ChangeFeedStartFrom.Beginning(postId) })
    .readNext();
  return resources.find((item) => item.type === "post") as PostChange;
}

/** The posts change feed handler, given one version of one post. */
const syncCopies = (change: PostChange) => handlePostsChanges(api.blog, [change]);

async function publish(title: string, content = "c"): Promise<PostItem> {
  const post = (await api.request("POST", "/api/posts", { as: "poet", body: { title, content } })).body as PostItem;
  await syncCopies(await change(post.postId));
  return post;
}

describe("Q3 and Q6 over the short-form copies", () => {
  it("lists a user's posts newest first in short form, paged", async () => {
    const titles = ["one", "two", "three", "four", "five"];
    for (const title of titles) await publish(title, "x".repeat(500));
    const first = await api.request("GET", "/api/users/poet/posts?limit=2");
    expect(first.status).toBe(200);
    expect(first.body.items.map((p: PostItem) => p.title)).toEqual(["five", "four"]);
    expect(first.body.items[0].content).toHaveLength(200);
    expect(first.body.items[0]).not.toHaveProperty("sourceLsn");
    const rest = await api.request("GET", `/api/users/poet/posts?limit=10&continuationToken=${encodeURIComponent(first.body.continuationToken)}`);
    expect(rest.body.items.map((p: PostItem) => p.title)).toEqual(["three", "two", "one"]);
    expect(rest.body.continuationToken).toBeNull();
  });

  it("serves the feed newest first with a limit of 1..100 (default 20)", async () => {
    const feed = await api.request("GET", "/api/feed?limit=3");
    expect(feed.status).toBe(200);
    expect(feed.body.items.map((p: PostItem) => p.title)).toEqual(["five", "four", "three"]);
    expect((await api.request("GET", "/api/feed")).body.items.length).toBe(5);
    expect((await api.request("GET", "/api/feed?limit=0")).status).toBe(400);
    expect((await api.request("GET", "/api/feed?limit=101")).status).toBe(400);
  });

  it("never lets an older version overwrite a newer copy", async () => {
    const post = await publish("original");
    const older = await change(post.postId);
    await api.request("PUT", `/api/posts/${post.postId}`, { as: "poet", body: { title: "edited", content: "c" } });
    await syncCopies(await change(post.postId));
    await syncCopies(older); // a late redelivery of the first version
    const { body } = await api.request("GET", "/api/feed?limit=1");
    expect(body.items[0].title).toBe("edited");
  });

  it("removes the copies of a deleted post", async () => {
    const post = await publish("short-lived");
    await api.request("DELETE", `/api/posts/${post.postId}`, { as: "poet" });
    await syncCopies(await change(post.postId));
    const titles = (await api.request("GET", "/api/users/poet/posts?limit=100")).body.items.map((p: PostItem) => p.title);
    expect(titles).not.toContain("short-lived");
    expect((await api.request("GET", "/api/feed?limit=100")).body.items.map((p: PostItem) => p.title)).not.toContain("short-lived");
  });
});
