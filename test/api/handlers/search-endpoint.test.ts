import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { handlePostsChanges } from "../../../src/pipeline/posts-change-feed";
import { eraseOwnPostsPage, requestErasure } from "../../../src/store/erasure";
import { readPost } from "../../../src/store/posts";
import { apiFixture, type ApiFixture } from "../../support/api";

let api: ApiFixture;
const ids: Record<string, string> = {};
const write = async (as: string, name: string, title: string, content: string) =>
  (ids[name] = (await api.request("POST", "/api/posts", { as, body: { title, content } })).body.postId as string);

beforeAll(async () => {
  api = await apiFixture();
  await api.user("ann", "ann");
  await api.user("bob", "bob");
  await write("ann", "titled", "Partition keys, explained", "How to choose one for a container.");
  await write("ann", "twice", "Notes", "A word on partitions. A hot partition throttles its writes.");
  await write("bob", "once", "Modeling", `${"Some long introduction about modeling documents and their relations. ".repeat(3)}Then a partition key, at last.`);
  await write("bob", "unrelated", "Cats", "The cat sat on the mat.");
  await write("ann", "deleted", "Partitioning gone", "A partition post that was deleted.");
  await api.request("DELETE", `/api/posts/${ids.deleted}`, { as: "ann" });
});
afterAll(() => api.stop());

const search = (query: string) => api.request("GET", `/api/search?${query}`);

describe("GET /api/search", () => {
  it("answers no results, not an error, before the first post (the SDK refuses an empty container's statistics)", async () => {
    const empty = await apiFixture();
    try {
      expect(await empty.request("GET", "/api/search?q=anything")).toMatchObject({ status: 200, body: { items: [], continuationToken: null } });
    } finally {
      await empty.stop();
    }
  });

  it("answers the live posts that hold a word, the title weighted above the content, each in short form with a snippet", async () => {
    const { status, body } = await search("q=partitioning");
    expect(status).toBe(200);
    const found = body.items.map((item: { postId: string }) => item.postId);
    expect(found[0]).toBe(ids.titled);
    expect(found.slice(1).sort()).toEqual([ids.once, ids.twice].sort());
    expect(found).not.toContain(ids.deleted);
    expect(body.continuationToken).toBeNull();
    const once = body.items.find((item: { postId: string }) => item.postId === ids.once);
    expect(once.content.length).toBeLessThanOrEqual(200);
    // The snippet starts a little before the first word found, and marks each word found.
    expect(once.snippet.text.startsWith("…")).toBe(true);
    expect(once.snippet.marks.map(([start, end]: [number, number]) => once.snippet.text.slice(start, end))).toEqual(["partition"]);
    const twice = body.items.find((item: { postId: string }) => item.postId === ids.twice);
    expect(twice.snippet.marks.map(([start, end]: [number, number]) => twice.snippet.text.slice(start, end))).toEqual(["partitions", "partition"]);
  });

  it("pages with a continuation token bound to the words it was given for", async () => {
    const first = await search("q=partition&limit=2");
    expect(first.body.items).toHaveLength(2);
    const second = await search(`q=PARTITION&limit=2&continuationToken=${first.body.continuationToken}`);
    expect(second.status).toBe(200);
    expect(second.body.items).toHaveLength(1);
    expect(second.body.continuationToken).toBeNull();
    const all = [...first.body.items, ...second.body.items].map((item: { postId: string }) => item.postId);
    expect(new Set(all).size).toBe(3);
    const other = await search(`q=cat&continuationToken=${first.body.continuationToken}`);
    expect(other.status).toBe(400);
  });

  it("finds nothing, not an error, for words no post holds", async () => {
    expect((await search("q=zebra")).body).toEqual({ items: [], continuationToken: null });
  });

  it("refuses what it cannot search, saying why", async () => {
    for (const [query, reason] of [
      ["", "q"],
      ["q=", "visible text"],
      [`q=${"one two three four five six seven eight nine"}`, "at most 8 words"],
      [`q=${"x".repeat(51)}`, "at most 50 characters"],
      [`q=${"word ".repeat(41)}`, "at most 200 characters"],
      ["q=ok&limit=0", "limit"],
      ["q=ok&continuationToken=nonsense", "continuationToken"],
    ]) {
      const { status, body } = await search(query);
      expect(status, query).toBe(400);
      expect(JSON.stringify(body), query).toContain(reason);
    }
  });

  it("never answers an erased account's posts once its erasure has removed them", async () => {
    await api.user("eve", "eve");
    const postId = (await api.request("POST", "/api/posts", { as: "eve", body: { title: "Partition secrets", content: "partition" } })).body.postId;
    expect((await search("q=secrets")).body.items.map((item: { postId: string }) => item.postId)).toEqual([postId]);
    // The pipeline copies the post into its author's list, which the erasure goes through.
    await handlePostsChanges(api.blog, [(await readPost(api.blog, postId))!]);
    await requestErasure(api.blog, "eve", "self");
    await eraseOwnPostsPage(api.blog, "eve", 20);
    expect((await search("q=secrets")).body.items).toEqual([]);
  });
});
