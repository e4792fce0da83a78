import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { handlePostsChanges } from "../../src/pipeline/posts-change-feed";
import { rebuildCopies } from "../../src/pipeline/rebuild";
import { contributedPosts } from "../../src/store/contributions";
import { apiFixture, type ApiFixture } from "../support/api";
import { manualPump } from "../support/pump";

/**
 * Where a user wrote (src/store/contributions.ts): the posts change feed records each post a
 * user commented on or liked in that user's own partition of `users`, so export and erasure
 * need no query over every partition of `posts`.
 */
let api: ApiFixture;
let pump: ReturnType<typeof manualPump>;
const posts: string[] = [];

beforeAll(async () => {
  api = await apiFixture();
  pump = manualPump(api.blog.posts, (documents) => handlePostsChanges(api.blog, documents));
  await api.user("author", "author");
  await api.user("fan", "fan");
  for (let i = 0; i < 3; i++) posts.push((await api.request("POST", "/api/posts", { as: "author", body: { title: `p${i}`, content: "c" } })).body.postId);
  await pump.drain();
}, 60_000);
afterAll(() => api.stop());

describe("where a user wrote", () => {
  it("lists, in the writer's own partition, each post they commented on or liked, once", async () => {
    for (let i = 0; i < 2; i++)
      expect((await api.request("POST", `/api/posts/${posts[0]}/comments`, { as: "fan", body: { content: `what the fan wrote ${i}` } })).status).toBe(201);
    expect((await api.request("POST", `/api/posts/${posts[0]}/likes`, { as: "fan" })).status).toBe(201);
    expect((await api.request("POST", `/api/posts/${posts[1]}/likes`, { as: "fan" })).status).toBe(201);
    await pump.drain();
    expect((await contributedPosts(api.blog, "fan")).sort()).toEqual([posts[0], posts[1]].sort());
    expect(await contributedPosts(api.blog, "author")).toEqual([]);
    const { resource } = await api.blog.users.item(`contribution:${posts[0]}`, "fan").read();
    expect(resource).toMatchObject({ type: "contribution", userId: "fan", postId: posts[0] });
    // Where, never what: the text is nowhere in the record (a word no random id can hold).
    expect(JSON.stringify(resource)).not.toContain("what the fan wrote");
  });

  it("keeps a post listed after an unlike (a post with nothing of theirs left costs one empty query)", async () => {
    expect((await api.request("DELETE", `/api/posts/${posts[1]}/likes`, { as: "fan" })).status).toBe(204);
    await pump.drain();
    expect(await contributedPosts(api.blog, "fan")).toContain(posts[1]);
  });

  it("is rebuilt by replaying the posts change feed (what npm run rebuild-copies does)", async () => {
    for (const postId of await contributedPosts(api.blog, "fan")) await api.blog.users.item(`contribution:${postId}`, "fan").delete();
    expect(await contributedPosts(api.blog, "fan")).toEqual([]);
    await rebuildCopies(api.blog, { fresh: false });
    expect((await contributedPosts(api.blog, "fan")).sort()).toEqual([posts[0], posts[1]].sort());
  });
});
