import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCosmos, type RunningCosmos } from "embedded-cosmos";
import { clientFor } from "../support/cosmos";
import { provision } from "../../src/store/provision";
import type { Container } from "@azure/cosmos";

/** The product's stored procedures on a server that stops accepting after 10 operations. */
let cosmos: RunningCosmos;
let posts: Container;
beforeAll(async () => {
  cosmos = await startCosmos({ scriptOperationLimit: 10 });
  const client = clientFor(cosmos);
  await provision(client, "blog");
  posts = client.database("blog").container("posts");
});
afterAll(() => cosmos.stop());

async function seedPartition(postId: string, items: number) {
  await posts.items.create({
    id: postId,
    type: "post",
    postId,
    userId: "u1",
    userUsername: "old",
    title: "t",
    content: "c",
    commentCount: 0,
    likeCount: 0,
    creationDate: "2026-01-01T00:00:00.000Z",
  });
  for (let i = 0; i < items; i++) {
    await posts.items.create({
      id: `c${i}`,
      type: "comment",
      postId,
      userId: i % 5 === 0 ? "someone-else" : "u1",
      userUsername: "old",
      content: "x",
      creationDate: `2026-01-01T00:00:${String(i).padStart(2, "0")}.000Z`,
    });
  }
}

describe("bounded stored procedures resume from their continuation", () => {
  it("updateUsernames rewrites a large partition over several calls, touching only that user's items", async () => {
    await seedPartition("big", 40);
    let continuation: string | null = null;
    let calls = 0;
    let updated = 0;
    do {
      const { resource } = await posts.scripts
        .storedProcedure("updateUsernames")
        .execute<{ updated: number; continuation: string | null }>("big", ["u1", "new", continuation]);
      continuation = resource!.continuation;
      updated += resource!.updated;
      calls++;
    } while (continuation !== null && calls < 50);
    expect(calls).toBeGreaterThan(2);
    expect(updated).toBe(33); // the post and 32 of the 40 comments belong to u1
    const { resources } = await posts.items.query("SELECT c.userId, c.userUsername FROM c", { partitionKey: "big" }).fetchAll();
    expect(resources.filter((r) => r.userId === "u1").every((r) => r.userUsername === "new")).toBe(true);
    expect(resources.filter((r) => r.userId !== "u1").every((r) => r.userUsername === "old")).toBe(true);
  });

  it("treats a userId as data, never as SQL", async () => {
    await seedPartition("inject", 3);
    const { resource } = await posts.scripts.storedProcedure("updateUsernames").execute<{ updated: number }>("inject", ["x' OR 1=1 --", "hacked", null]);
    expect(resource!.updated).toBe(0);
  });

  it("deletePost marks the post first, then everything else over several calls", async () => {
    await seedPartition("doomed", 25);
    const first = await posts.scripts.storedProcedure("deletePost").execute<{ status: string; continuation: string | null }>("doomed", ["doomed", 60, null]);
    expect(first.resource!.status).toBe("deleted");
    expect(first.resource!.continuation).not.toBeNull();
    expect((await posts.item("doomed", "doomed").read()).resource).toMatchObject({ deleted: true, ttl: 60 });
    let continuation = first.resource!.continuation;
    let calls = 1;
    while (continuation !== null && calls < 50) {
      const next = await posts.scripts.storedProcedure("deletePost").execute<{ continuation: string | null }>("doomed", ["doomed", 60, continuation]);
      continuation = next.resource!.continuation;
      calls++;
    }
    const { resources } = await posts.items.query("SELECT VALUE COUNT(1) FROM c WHERE NOT IS_DEFINED(c.deleted)", { partitionKey: "doomed" }).fetchAll();
    expect(resources).toEqual([0]);
    expect(calls).toBeGreaterThan(2);
  });

  it("changeLikes treats user ids as data, and a call that does not fit is rolled back whole", async () => {
    await seedPartition("liked", 0);
    const like = (userId: string) => ({ userId, like: true, userUsername: userId, creationDate: "2026-01-01T00:00:00.000Z" });
    const tricky = ["x' OR 1=1 --", 'y") OR true', "like:z"];
    const { resource } = await posts.scripts
      .storedProcedure("changeLikes")
      .execute<{ status: string; results: { status: string }[] }>("liked", ["liked", tricky.map(like), 60]);
    expect(resource!.results.map((r) => r.status)).toEqual(["created", "created", "created"]);
    const ids = async () => (await posts.items.query("SELECT VALUE c.id FROM c WHERE c.type = 'like'", { partitionKey: "liked" }).fetchAll()).resources.sort();
    expect(await ids()).toEqual(tricky.map((u) => `like:${u}`).sort());

    // A query, 9 writes and the count are more than the 10 calls this server accepts.
    const tooMany = Array.from({ length: 9 }, (_, i) => like(`fan${i}`));
    await expect(posts.scripts.storedProcedure("changeLikes").execute("liked", ["liked", tooMany, 60])).rejects.toMatchObject({
      code: 400,
      message: expect.stringContaining("changeLikes was not accepted"),
    });
    expect(await ids()).toHaveLength(3);
    expect((await posts.item("liked", "liked").read()).resource.likeCount).toBe(3);
  });

  it("eraseWriter removes one writer's comments and like page by page, moving the counts with them, and treats the id as data", async () => {
    await seedPartition("erased", 12); // c1-c4, c6-c9, c11: u1's 9 comments; c0, c5, c10 someone else's
    await posts.items.create({ id: "like:u1", type: "like", postId: "erased", userId: "u1", userUsername: "old", creationDate: "2026-01-01T00:00:00.000Z" });
    const post = (await posts.item("erased", "erased").read()).resource;
    await posts.item("erased", "erased").replace({ ...post, commentCount: 12, likeCount: 1 });
    const erase = (userId: string, pageSize: number) =>
      posts.scripts
        .storedProcedure("eraseWriter")
        .execute<{ comments: number; likes: number; continuation: string | null }>("erased", ["erased", userId, 60, pageSize]);

    expect((await erase("x' OR 1=1 --", 50)).resource).toEqual({ status: "erased", comments: 0, likes: 0, continuation: null });
    // A query, 20 writes and the count do not fit in 10 operations: rolled back whole, nothing marked.
    await expect(erase("u1", 20)).rejects.toMatchObject({ code: 400, message: expect.stringContaining("eraseWriter was not accepted") });
    expect((await posts.item("erased", "erased").read()).resource).toMatchObject({ commentCount: 12, likeCount: 1 });
    let totals = { comments: 0, likes: 0 };
    let calls = 0;
    for (let continuation: string | null = ""; continuation !== null; calls++) {
      const { resource } = await erase("u1", 4);
      totals = { comments: totals.comments + resource!.comments, likes: totals.likes + resource!.likes };
      continuation = resource!.continuation;
      // At every step the counts equal the live items.
      const live = (await posts.items.query("SELECT c.type FROM c WHERE NOT IS_DEFINED(c.deleted)", { partitionKey: "erased" }).fetchAll()).resources;
      const { commentCount, likeCount } = (await posts.item("erased", "erased").read()).resource;
      expect([commentCount, likeCount]).toEqual([live.filter((r) => r.type === "comment").length, live.filter((r) => r.type === "like").length]);
    }
    expect(totals).toEqual({ comments: 9, likes: 1 });
    expect(calls).toBeGreaterThan(2);
    const { resources } = await posts.items.query("SELECT * FROM c WHERE c.type != 'post'", { partitionKey: "erased" }).fetchAll();
    for (const item of resources.filter((r) => r.userId === "u1")) {
      expect(item).toMatchObject({ deleted: true, ttl: 60 });
      expect(item.content).toBeUndefined();
      expect(item.userUsername).toBeUndefined();
    }
    expect(resources.filter((r) => r.userId === "someone-else").every((r) => !r.deleted && r.content === "x")).toBe(true);
  });

  it("eraseWriter also scrubs what the writer removed before (an unliked like): ids and dates stay, no name, no trace, no count moved", async () => {
    await seedPartition("unliked", 0);
    const removed = {
      type: "like",
      postId: "unliked",
      userId: "u1",
      userUsername: "old",
      traceparent: "00-aa-bb-01",
      creationDate: "2026-01-01T00:00:00.000Z",
    };
    await posts.items.create({ ...removed, id: "like:u1", deleted: true, deletedDate: "2026-01-02T00:00:00.000Z", ttl: 600 });
    await posts.items.create({ ...removed, id: "like:u2", userId: "u2", userUsername: "other", deleted: true, ttl: 600 });
    const post = (await posts.item("unliked", "unliked").read()).resource;
    await posts.item("unliked", "unliked").replace({ ...post, likeCount: 0 });
    const { resource } = await posts.scripts.storedProcedure("eraseWriter").execute("unliked", ["unliked", "u1", 60, 4]);
    expect(resource).toEqual({ status: "erased", comments: 0, likes: 0, continuation: null });
    const { resource: like } = await posts.item("like:u1", "unliked").read();
    expect(
      Object.keys(like)
        .filter((key) => !key.startsWith("_"))
        .sort(),
    ).toEqual(["creationDate", "deleted", "deletedDate", "id", "postId", "ttl", "type", "userId"]);
    expect(like).toMatchObject({ deletedDate: "2026-01-02T00:00:00.000Z", ttl: 600 });
    expect((await posts.item("like:u2", "unliked").read()).resource).toMatchObject({ userUsername: "other", traceparent: "00-aa-bb-01" });
    expect((await posts.item("unliked", "unliked").read()).resource.likeCount).toBe(0);
  });

  it("truncateFeed keeps the feed at 100 through the trigger", async () => {
    const feed = clientFor(cosmos).database("blog").container("feed");
    for (let i = 0; i < 104; i++) {
      await feed.items.create(
        { id: `f${i}`, type: "post", creationDate: `2026-01-01T00:${String(Math.floor(i / 60)).padStart(2, "0")}:${String(i % 60).padStart(2, "0")}.000Z` },
        { postTriggerInclude: ["truncateFeed"] },
      );
    }
    const { resources } = await feed.items.query("SELECT VALUE c.id FROM c", { partitionKey: "post" }).fetchAll();
    expect(resources).toHaveLength(100);
    expect(resources).not.toContain("f0");
    expect(resources).toContain("f103");
  });
});
