import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChangeFeedStartFrom } from "@azure/cosmos";
import { handlePostsChanges } from "../../src/pipeline/posts-change-feed";
import { apiFixture, type ApiFixture } from "../support/api";

/**
 * Guarantee: deleted means gone. A deleted post, its comments and likes are never served again
 * by any route (search included), and never come back into Q3 (the author's list) or Q6 (the feed).
 */
let api: ApiFixture;
beforeAll(async () => {
  // A small script budget: deleting a post with dozens of items takes several bounded calls.
  api = await apiFixture({ cosmos: { scriptOperationLimit: 10 } });
  await api.user("author", "author");
  await api.user("reader", "reader");
});
afterAll(() => api.stop());

async function postWithComments(comments: number, likers: string[] = []): Promise<string> {
  const postId = (await api.request("POST", "/api/posts", { as: "author", body: { title: "doomed", content: "c" } })).body.postId as string;
  for (let i = 0; i < comments; i++) await api.request("POST", `/api/posts/${postId}/comments`, { as: "reader", body: { content: `c${i}` } });
  for (const liker of likers) await api.request("POST", `/api/posts/${postId}/likes`, { as: liker });
  return postId;
}

/** What a DELETE cut off after its first bounded stored procedure call leaves behind. */
async function deleteStoppedPartway(postId: string): Promise<void> {
  const { resource } = await api.blog.posts.scripts.storedProcedure("deletePost").execute<{ continuation: string | null }>(postId, [postId, 3600, null]);
  expect(resource!.continuation).not.toBeNull();
}

/** Every change of one post's partition, latest versions, as the posts change feed delivers them. */
async function changesOf(postId: string): Promise<unknown[]> {
  const iterator = api.blog.posts.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning(postId), maxItemCount: 1000 });
  return (await iterator.readNext()).result;
}

async function liveItems(postId: string): Promise<number> {
  const { resources } = await api.blog.posts.items.query("SELECT VALUE COUNT(1) FROM c WHERE NOT IS_DEFINED(c.deleted)", { partitionKey: postId }).fetchAll();
  return resources[0] as number;
}

describe("deleted means gone", () => {
  it("a deletion that stopped partway serves none of the post's comments or likes", async () => {
    const postId = await postWithComments(33, ["reader", "author"]);
    await deleteStoppedPartway(postId);
    expect((await api.request("GET", `/api/posts/${postId}`)).status).toBe(404);
    const comments = await api.request("GET", `/api/posts/${postId}/comments?limit=100`);
    const likes = await api.request("GET", `/api/posts/${postId}/likes?limit=100`);
    expect(comments.status).toBe(404);
    expect(likes.status).toBe(404);
    // Nor does search find it, the post being marked first; it finds a live post with the same words.
    const live = (await api.request("POST", "/api/posts", { as: "author", body: { title: "doomed", content: "c" } })).body.postId as string;
    const found = await api.request("GET", "/api/search?q=doomed&limit=100");
    expect(found.status).toBe(200);
    const ids = found.body.items.map((item: { postId: string }) => item.postId);
    expect(ids).toContain(live);
    expect(ids).not.toContain(postId);
  });

  it("a repeated DELETE by the author answers 204 and finishes the work", async () => {
    const postId = await postWithComments(33);
    await deleteStoppedPartway(postId);
    expect(await liveItems(postId)).toBeGreaterThan(0);
    expect((await api.request("DELETE", `/api/posts/${postId}`, { as: "author" })).status).toBe(204);
    expect(await liveItems(postId)).toBe(0);
    // Still idempotent once everything is done; still not yours if you are not the author.
    expect((await api.request("DELETE", `/api/posts/${postId}`, { as: "author" })).status).toBe(204);
    expect((await api.request("DELETE", `/api/posts/${postId}`, { as: "reader" })).status).toBe(404);
    const { resources } = await api.blog.posts.items.query("SELECT c.deleted, c.ttl FROM c", { partitionKey: postId }).fetchAll();
    expect(resources.every((r) => r.deleted === true && r.ttl === api.settings.softDeleteTtlSeconds)).toBe(true);
  });

  it("the posts change feed drives a deletion that stopped partway to completion", async () => {
    const postId = await postWithComments(33);
    await deleteStoppedPartway(postId);
    await handlePostsChanges(api.blog, await changesOf(postId));
    expect(await liveItems(postId)).toBe(0);
  });

  it("unlike soft-deletes the like like everything else, and a like again counts once", async () => {
    const postId = await postWithComments(0, ["reader"]);
    expect((await api.request("DELETE", `/api/posts/${postId}/likes`, { as: "reader" })).status).toBe(204);
    const { resource: like } = await api.blog.posts.item("like:reader", postId).read<{ deleted?: boolean; ttl?: number }>();
    expect(like).toMatchObject({ deleted: true, ttl: api.settings.softDeleteTtlSeconds });
    expect((await api.request("GET", `/api/posts/${postId}/likes`)).body.items).toEqual([]);
    expect((await api.request("POST", `/api/posts/${postId}/likes`, { as: "reader" })).status).toBe(201);
    expect((await api.request("GET", `/api/posts/${postId}`)).body.likeCount).toBe(1);
    expect((await api.request("GET", `/api/posts/${postId}/likes`)).body.items).toHaveLength(1);
  });

  it("a late, older version of a deleted post never brings it back into Q3 or Q6", async () => {
    const postId = await postWithComments(0);
    const v1 = await changesOf(postId);
    await handlePostsChanges(api.blog, v1);
    const inCopies = async () => ({
      feed: (await api.request("GET", "/api/feed?limit=100")).body.items.some((p: { id: string }) => p.id === postId),
      list: (await api.request("GET", "/api/users/author/posts?limit=100")).body.items.some((p: { id: string }) => p.id === postId),
    });
    expect(await inCopies()).toEqual({ feed: true, list: true });
    expect((await api.request("DELETE", `/api/posts/${postId}`, { as: "author" })).status).toBe(204);
    await handlePostsChanges(api.blog, await changesOf(postId));
    expect(await inCopies()).toEqual({ feed: false, list: false });
    // The old owner of a lease that moved, or rebuild-copies beside the live consumer, replays v1.
    await handlePostsChanges(api.blog, v1);
    expect(await inCopies()).toEqual({ feed: false, list: false });
    expect((await api.request("GET", `/api/posts/${postId}`)).status).toBe(404);
  });
});
