import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { localSystem, within, type Client } from "../support/system";

let app: Client;
beforeAll(async () => {
  app = await localSystem();
  await app.call("POST", "/users", { as: "prolific", body: { username: "prolific" } });
});
afterAll(() => app.stop());

describe("the feed keeps the 100 newest posts", () => {
  it("holds exactly the 100 newest after 130 posts", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 130; i++) {
      ids.push((await app.call("POST", "/posts", { as: "prolific", body: { title: `post ${i}`, content: "c" } })).body.id);
    }
    const newest = ids.slice(30).reverse();
    await within(20_000, async () => {
      const feed = (await app.call("GET", "/feed?limit=100")).body.items.map((p: { id: string }) => p.id);
      return JSON.stringify(feed) === JSON.stringify(newest);
    });
    const { resources } = await app.system.store.feed.items.query("SELECT VALUE COUNT(1) FROM f", { partitionKey: "post" }).fetchAll();
    expect(resources).toEqual([100]);
    // The author's own list keeps all 130.
    const all = [];
    let token: string | null = null;
    do {
      const page: { body: { items: unknown[]; continuationToken: string | null } } = await app.call(
        "GET",
        `/users/prolific/posts?limit=100${token ? `&continuationToken=${encodeURIComponent(token)}` : ""}`,
      );
      all.push(...page.body.items);
      token = page.body.continuationToken;
    } while (token);
    expect(all).toHaveLength(130);
  });
});
