import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { handlePostsChanges } from "../../src/pipeline/posts-change-feed";
import { recordContributions } from "../../src/store/contributions";
import { eraseLeftoversPage, eraseOwnPostsPage, eraseWritingOnPost, eraseWritingPage, requestErasure } from "../../src/store/erasure";
import { apiFixture, type ApiFixture } from "../support/api";
import { manualPump } from "../support/pump";

/**
 * The erasure's steps (src/store/erasure.ts) one by one, on a server that accepts 10 operations
 * per script call, with the posts change feed pumped by hand so a late batch can be placed
 * after the sweep that missed it.
 */
let api: ApiFixture;
let pump: ReturnType<typeof manualPump>;
beforeAll(async () => {
  api = await apiFixture({ cosmos: { scriptOperationLimit: 10 } });
  pump = manualPump(api.blog.posts, (documents) => handlePostsChanges(api.blog, documents));
  for (const id of ["leaver", "host", "late"]) await api.user(id, id);
}, 60_000);
afterAll(() => api.stop());

const liveOf = async (postId: string, userId: string) =>
  (
    await api.blog.posts.items
      .query<number>(
        { query: "SELECT VALUE COUNT(1) FROM c WHERE c.userId = @u AND NOT IS_DEFINED(c.deleted)", parameters: [{ name: "@u", value: userId }] },
        { partitionKey: postId },
      )
      .fetchAll()
  ).resources[0];

describe("an account's erasure, step by step", () => {
  it("asks once: a repeat finds the record, and the record replaced the profile", async () => {
    await api.user("twice", "twice");
    const first = await requestErasure(api.blog, "twice", "self");
    const again = await requestErasure(api.blog, "twice", "admin");
    expect([first.created, again.created]).toEqual([true, false]);
    expect(again.erasure.requestedBy).toBe("self");
    expect((await api.blog.users.item("twice", "twice").read()).resource).toMatchObject({ type: "erasure" });
    expect((await api.request("GET", "/api/users/twice")).status).toBe(404);
  });

  it("removes many comments on one post in pages the service accepts, with the counts exact", async () => {
    const postId = (await api.request("POST", "/api/posts", { as: "host", body: { title: "t", content: "c" } })).body.postId as string;
    for (let i = 0; i < 25; i++) await api.request("POST", `/api/posts/${postId}/comments`, { as: "leaver", body: { content: `c${i}` } });
    await api.request("POST", `/api/posts/${postId}/comments`, { as: "host", body: { content: "kept" } });
    await api.request("POST", `/api/posts/${postId}/likes`, { as: "leaver" });
    expect(await eraseWritingOnPost(api.blog, "leaver", postId)).toEqual({ comments: 25, likes: 1 });
    expect(await liveOf(postId, "leaver")).toBe(0);
    expect((await api.request("GET", `/api/posts/${postId}`)).body).toMatchObject({ commentCount: 1, likeCount: 0 });
  });

  it("finds a late write the sweep missed: the posts change feed erases what it wrote for an erased account", async () => {
    await pump.drain();
    const own = (await api.request("POST", "/api/posts", { as: "late", body: { title: "mine", content: "c" } })).body.postId as string;
    const elsewhere = (await api.request("POST", "/api/posts", { as: "host", body: { title: "theirs", content: "c" } })).body.postId as string;
    await api.request("POST", `/api/posts/${elsewhere}/comments`, { as: "late", body: { content: "hello" } });
    // The erasure runs before the change feed carried these writes: its sweep finds nothing.
    await requestErasure(api.blog, "late", "self");
    expect(await eraseOwnPostsPage(api.blog, "late", 10)).toMatchObject({ posts: 0 });
    expect(await eraseWritingPage(api.blog, "late", 10)).toMatchObject({ comments: 0, likes: 0 });
    await eraseLeftoversPage(api.blog, "late", 10);
    // Then the batch comes: the consumer writes the copy and the record, reads the account, and erases them again.
    await pump.drain();
    expect((await api.request("GET", `/api/posts/${own}`)).status).toBe(404);
    expect(await liveOf(elsewhere, "late")).toBe(0);
    expect((await api.request("GET", `/api/posts/${elsewhere}`)).body.commentCount).toBe(0);
    await pump.drain(); // the deletion the consumer made, carried in turn
    const { resources } = await api.blog.users.items.query("SELECT c.id, c.type FROM c", { partitionKey: "late" }).fetchAll();
    expect(resources).toEqual([{ id: "late", type: "erasure" }]);
    // What the consumer erased is counted as the steps' work is: the post and the comment, once each.
    expect((await api.blog.users.item("late", "late").read()).resource.progress).toMatchObject({ posts: 1, comments: 1 });
  });

  it("finds it too when the delivery that wrote the record was cut off before its check, and comes again", async () => {
    await api.user("redo", "redo");
    const postId = (await api.request("POST", "/api/posts", { as: "host", body: { title: "t", content: "c" } })).body.postId as string;
    const comment = (await api.request("POST", `/api/posts/${postId}/comments`, { as: "redo", body: { content: "hi" } })).body;
    await requestErasure(api.blog, "redo", "self");
    for (const page of [eraseOwnPostsPage, eraseWritingPage, eraseLeftoversPage]) await page(api.blog, "redo", 10);
    // The first delivery wrote the record after the sweep, then its host died before it read the account.
    await recordContributions(api.blog, [{ userId: "redo", postId, creationDate: comment.creationDate }]);
    await handlePostsChanges(api.blog, [{ ...comment, _lsn: 1 }]); // the same batch, again
    expect(await liveOf(postId, "redo")).toBe(0);
    const { resources } = await api.blog.users.items.query("SELECT c.id FROM c", { partitionKey: "redo" }).fetchAll();
    expect(resources).toEqual([{ id: "redo" }]);
  });
});
