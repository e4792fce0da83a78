import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TriggerOperation, TriggerType } from "@azure/cosmos";
import { scriptBody } from "../../src/store/script-files";
import { localSystem, within, type Client } from "../support/system";

let app: Client;
beforeAll(async () => {
  app = await localSystem();
  await app.call("POST", "/users", { as: "poster", body: { username: "poster" } });
});
afterAll(() => app.stop());

describe("a failing pipeline handler", () => {
  it("is retried with backoff and loses nothing", async () => {
    const { feed } = app.system.store;
    // Break the feed write: without its post-trigger every feed upsert fails, so the posts handler throws.
    await feed.scripts.trigger("truncateFeed").delete();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await app.call("POST", "/posts", { as: "poster", body: { title: `p${i}`, content: "c" } })).body.id);
    await within(10_000, async () => app.logs.some((line) => line.includes("postsChangeFeed: batch") && line.includes("retrying")));
    expect((await app.call("GET", "/feed")).body.items).toEqual([]);

    // Repair it: the same batch is delivered again and every post arrives.
    await feed.scripts.triggers.create({
      id: "truncateFeed",
      body: scriptBody("truncateFeed"),
      triggerType: TriggerType.Post,
      triggerOperation: TriggerOperation.All,
    });
    await within(20_000, async () => (await app.call("GET", "/feed")).body.items.length === 5);
    const feedIds = (await app.call("GET", "/feed")).body.items.map((p: { id: string }) => p.id);
    expect(feedIds.sort()).toEqual([...ids].sort());
    const listIds = (await app.call("GET", "/users/poster/posts")).body.items.map((p: { id: string }) => p.id);
    expect(listIds.sort()).toEqual([...ids].sort());
  }, 40_000);
});

describe("a failing change feed read", () => {
  it("is retried and the pump carries on", async () => {
    // An outage of the posts change feed: its first 8 reads answer 503 (each of the 4 ranges fails about twice).
    const app = await localSystem({ faults: { rules: [{ effect: "503", rate: 1, operations: ["changefeed"], containers: ["posts"], limit: 8 }] } });
    try {
      await app.call("POST", "/users", { as: "writer", body: { username: "writer" } });
      const post = (await app.call("POST", "/posts", { as: "writer", body: { title: "after the outage", content: "c" } })).body;
      await within(10_000, async () => app.logs.some((line) => /postsChangeFeed: change feed of lease \S+ failed/.test(line)));
      await within(20_000, async () => (await app.call("GET", "/feed")).body.items.some((p: { id: string }) => p.id === post.id));
    } finally {
      await app.stop();
    }
  }, 40_000);
});
