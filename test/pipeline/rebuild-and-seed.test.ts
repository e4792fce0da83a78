import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LOCAL_DEV_SECRET } from "../../local/dev-auth";
import { rebuildCopies } from "../../src/pipeline/rebuild";
import { random } from "../../local/random";
import { seed } from "../../scripts/seed";
import { localSystem, within, type Client } from "../support/system";

let app: Client;
beforeAll(async () => (app = await localSystem()));
afterAll(() => app.stop());

const countCopies = async () => {
  const { users, feed } = app.system.store;
  const inUsers = (await users.items.query("SELECT VALUE COUNT(1) FROM c WHERE c.type = 'post'").fetchAll()).resources[0] as number;
  const inFeed = (await feed.items.query("SELECT VALUE COUNT(1) FROM c", { partitionKey: "post" }).fetchAll()).resources[0] as number;
  return { inUsers, inFeed };
};

describe("npm run seed", () => {
  it("is deterministic for a seed", () => {
    const a = random(7);
    const b = random(7);
    expect([a(), a(), a()]).toEqual([b(), b(), b()]);
    expect(random(8)()).not.toBe(random(7)());
  });

  it("loads users, posts, comments and likes with the article's shape through the API", async () => {
    const result = await seed({ users: 3, baseUrl: app.system.url, seed: 1, secret: LOCAL_DEV_SECRET });
    expect(result.users).toBe(3);
    expect(result.posts).toBeGreaterThanOrEqual(15);
    expect(result.posts).toBeLessThanOrEqual(150);
    await within(20_000, async () => (await countCopies()).inUsers === result.posts);
    for (const userId of ["user0001", "user0002", "user0003"]) {
      const posts = (await app.call("GET", `/users/${userId}/posts?limit=100`)).body.items as { id: string; commentCount: number; likeCount: number }[];
      expect(posts.length).toBeGreaterThanOrEqual(5);
      expect(posts.length).toBeLessThanOrEqual(50);
      for (const post of posts.slice(0, 5)) {
        const full = (await app.call("GET", `/posts/${post.id}`)).body;
        const comments = (await app.call("GET", `/posts/${post.id}/comments?limit=100`)).body.items;
        const likes = (await app.call("GET", `/posts/${post.id}/likes?limit=100`)).body.items;
        expect(full.commentCount).toBe(comments.length);
        expect(full.likeCount).toBe(likes.length);
        expect(comments.length).toBeLessThanOrEqual(25);
        expect(likes.length).toBeLessThanOrEqual(3);
      }
    }
  }, 60_000);
});

describe("npm run rebuild-copies", () => {
  it("rebuilds the Q3 and Q6 copies from the posts change feed, idempotently", async () => {
    const before = await countCopies();
    expect(before.inFeed).toBe(Math.min(100, before.inUsers));
    const ticks: number[] = [];
    let total = 0;
    const result = await rebuildCopies(app.system.store, { fresh: true, progress: { total: (n) => (total = n), advance: (n) => ticks.push(n) } });
    expect(result.cleared).toBe(before.inUsers + before.inFeed);
    expect(result.posts).toBe(total);
    expect(ticks.reduce((a, b) => a + b, 0)).toBe(total);
    // Rebuilt copies match what the live pipeline had (the pumps may redo some concurrently: idempotent).
    await within(10_000, async () => JSON.stringify(await countCopies()) === JSON.stringify(before));
    await rebuildCopies(app.system.store, { fresh: false });
    expect(await countCopies()).toEqual(before);
    const feed = (await app.call("GET", "/feed?limit=100")).body.items as { creationDate: string }[];
    expect(feed.map((p) => p.creationDate)).toEqual([...feed.map((p) => p.creationDate)].sort().reverse());
  }, 60_000);
});
