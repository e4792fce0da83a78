import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Container } from "@azure/cosmos";
import { localSystem, within, type Client } from "../support/system";

let app: Client;
const postIds: string[] = [];
beforeAll(async () => {
  app = await localSystem();
  await app.call("POST", "/users", { as: "writer", body: { username: "old-name" } });
  await app.call("POST", "/users", { as: "friend", body: { username: "friend" } });
  // 300 items of one user across 100 posts: each post, a comment on it and a like of it.
  for (let i = 0; i < 100; i++) {
    const id = (await app.call("POST", "/posts", { as: "writer", body: { title: `t${i}`, content: "c" } })).body.id;
    postIds.push(id);
  }
  await Promise.all(
    postIds.flatMap((id) => [
      app.call("POST", `/posts/${id}/comments`, { as: "writer", body: { content: "mine" } }),
      app.call("POST", `/posts/${id}/likes`, { as: "writer" }),
    ]),
  );
}, 60_000);
afterAll(() => app.stop());

const countWithName = async (container: Container, name: string) =>
  (await container.items.query({ query: "SELECT VALUE COUNT(1) FROM c WHERE c.userUsername = @name", parameters: [{ name: "@name", value: name }] }).fetchAll())
    .resources[0] as number;

describe("username change propagation", () => {
  it("leaves no item anywhere with the old name within 10 s, including items written during the rename", async () => {
    const { posts, users, feed } = app.system.store;
    expect(await countWithName(posts, "old-name")).toBe(300);
    await within(10_000, async () => (await countWithName(feed, "old-name")) === 100 && (await countWithName(users, "old-name")) === 100);

    // Writes racing the rename: some read the old name before it changes and land after.
    const racing = postIds.slice(0, 30).map((id, i) => app.call("POST", `/posts/${id}/comments`, { as: "writer", body: { content: `racing ${i}` } }));
    const rename = app.call("PUT", "/users/writer", { as: "writer", body: { username: "new-name" } });
    const later = postIds.slice(30, 40).map((id) => app.call("POST", `/posts/${id}/comments`, { as: "writer", body: { content: "after" } }));
    expect((await rename).status).toBe(200);
    expect((await Promise.all([...racing, ...later])).every((r) => r.status === 201)).toBe(true);

    await within(
      40_000,
      async () => {
        const stale = (await countWithName(posts, "old-name")) + (await countWithName(users, "old-name")) + (await countWithName(feed, "old-name"));
        return stale === 0;
      },
      100,
    );
    expect(await countWithName(posts, "new-name")).toBe(340);
    const comments = (await app.call("GET", `/posts/${postIds[0]}/comments`)).body.items;
    expect(comments.every((c: { userUsername: string }) => c.userUsername === "new-name")).toBe(true);
  }, 90_000);

  it("repairs a write that lands with the old name after the propagation finished", async () => {
    const { posts } = app.system.store;
    await app.system.durable.waitForIdle();
    // What a comment request that read the profile before the rename and wrote after every sweep leaves behind.
    const late = {
      id: "late-comment",
      type: "comment",
      postId: postIds[50],
      userId: "writer",
      userUsername: "old-name",
      content: "late",
      creationDate: new Date().toISOString(),
    };
    await posts.items.create(late);
    await within(10_000, async () => (await posts.item("late-comment", postIds[50]).read()).resource?.userUsername === "new-name");
  }, 30_000);
});
