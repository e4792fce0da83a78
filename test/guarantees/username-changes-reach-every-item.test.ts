import { afterEach, describe, expect, it } from "vitest";
import type { Container } from "@azure/cosmos";
import { scriptBody } from "../../src/store/script-files";
import { localSystem, within, type Client } from "../support/system";

/**
 * Guarantee: every username change reaches every item, even when a step fails; nothing stays
 * stale forever. Soft-deleted items are left alone (rewriting them would restart their TTL).
 */
let app: Client | undefined;
afterEach(async () => {
  await app?.stop();
  app = undefined;
});

/** A quick policy, so failures and retries happen within a test's time. */
const fast = { policy: { activityRetryFirstMs: 10, activityAttempts: 2, failureBackoffMs: 100, failureBackoffMaxMs: 400, settleMs: 50, pageSize: 3 } };

const stale = async (container: Container, userId: string, name: string) =>
  (
    await container.items
      .query<number>({
        query: "SELECT VALUE COUNT(1) FROM c WHERE c.userId = @u AND c.userUsername = @n AND NOT IS_DEFINED(c.deleted)",
        parameters: [
          { name: "@u", value: userId },
          { name: "@n", value: name },
        ],
      })
      .fetchAll()
  ).resources[0] as number;

async function userWithItems(client: Client, userId: string, name: string, posts: number): Promise<string[]> {
  await client.call("POST", "/users", { as: userId, body: { username: name } });
  const ids: string[] = [];
  for (let i = 0; i < posts; i++) {
    const id = (await client.call("POST", "/posts", { as: userId, body: { title: `t${i}`, content: "c" } })).body.id as string;
    await client.call("POST", `/posts/${id}/comments`, { as: userId, body: { content: "mine" } });
    ids.push(id);
  }
  return ids;
}

describe("every username change reaches every item", () => {
  it("an activity that exhausts its retries is tried again after a durable timer until every item has the new name", async () => {
    app = await localSystem(fast);
    await userWithItems(app, "unlucky", "before", 6);
    const { posts } = app.system.store;
    const sproc = (await posts.scripts.storedProcedure("updateUsernames").read()).resource!;
    await posts.scripts.storedProcedure("updateUsernames").delete();
    expect((await app.call("PUT", "/users/unlucky", { as: "unlucky", body: { username: "after" } })).status).toBe(200);
    // More failed attempts than any single retry policy makes: the propagation kept going.
    const failedAttempts = () => app!.logs.filter((line) => /renameInPartition/.test(line) && /fail/i.test(line)).length;
    await within(40_000, async () => failedAttempts() > 40); // 6 partitions x 6 attempts is all any one policy run makes
    await posts.scripts.storedProcedures.create({ id: "updateUsernames", body: sproc.body ?? scriptBody("updateUsernames") });
    await within(30_000, async () => (await stale(posts, "unlucky", "before")) === 0);
    expect(await stale(posts, "unlucky", "after")).toBe(12);
  }, 90_000);

  it("leaves soft-deleted items as they are", async () => {
    app = await localSystem(fast);
    await app.call("POST", "/users", { as: "host", body: { username: "host" } });
    const [kept] = await userWithItems(app, "guest", "guest-before", 1);
    const gone = (await app.call("POST", "/posts", { as: "host", body: { title: "gone", content: "c" } })).body.id as string;
    const comment = (await app.call("POST", `/posts/${gone}/comments`, { as: "guest", body: { content: "hi" } })).body.id as string;
    expect((await app.call("DELETE", `/posts/${gone}`, { as: "host" })).status).toBe(204);
    const { posts } = app.system.store;
    const before = (await posts.item(comment, gone).read()).resource!;
    expect(before.deleted).toBe(true);

    expect((await app.call("PUT", "/users/guest", { as: "guest", body: { username: "guest-after" } })).status).toBe(200);
    await within(20_000, async () => (await stale(posts, "guest", "guest-before")) === 0);
    await app.system.durable.waitForIdle();
    const after = (await posts.item(comment, gone).read()).resource!;
    expect(after._etag).toBe(before._etag);
    expect(after.userUsername).toBe("guest-before");
    expect((await posts.item(kept, kept).read()).resource!.userUsername).toBe("guest-after");
  }, 60_000);

  it("restarts a failed or terminated propagation when the change feed delivers the same change again", async () => {
    app = await localSystem(fast);
    await userWithItems(app, "again", "again-before", 2);
    const { posts, users } = app.system.store;
    await posts.scripts.storedProcedure("updateUsernames").delete();
    await app.call("PUT", "/users/again", { as: "again", body: { username: "again-after" } });
    const [instance] = await within(20_000, async () => {
      const found = (await app!.system.durable.queryInstances()).filter(
        (i) => i.name === "propagateUsername" && (i.input as { userId?: string }).userId === "again",
      );
      return found.length > 0 ? found : undefined;
    }).then((r) => r.value);
    await app.system.durable.terminate(instance.instanceId, "stopped by an operator");
    expect((await app.system.durable.getStatus(instance.instanceId))?.runtimeStatus).toBe("Terminated");
    await posts.scripts.storedProcedures.create({ id: "updateUsernames", body: scriptBody("updateUsernames") });

    // The same change, delivered again (a lease that moved, a restarted host).
    const profile = (await users.item("again", "again").read()).resource!;
    const { changeFeedTriggers } = await import("../../src/pipeline/change-feed-triggers");
    const usersTrigger = changeFeedTriggers.find((t) => t.containerName === "users")!;
    await usersTrigger.handler([profile], app.system.services);
    await within(20_000, async () => (await stale(posts, "again", "again-before")) === 0);
  }, 60_000);

  it("pages the stale-partition lookup and keeps each orchestration's history bounded (continue-as-new per page)", async () => {
    app = await localSystem(fast);
    await userWithItems(app, "prolific", "prolific-before", 12);
    // Let the posts change feed settle first, so the propagation alone does the renaming.
    // Each copy counting its comment means the comment's change, written before the count, was delivered too.
    await within(20_000, async () => {
      const items = (await app!.call("GET", "/users/prolific/posts?limit=100")).body.items as { commentCount: number }[];
      return items.length === 12 && items.every((item) => item.commentCount === 1);
    });
    expect((await app.call("PUT", "/users/prolific", { as: "prolific", body: { username: "prolific-after" } })).status).toBe(200);
    const { posts } = app.system.store;
    await within(30_000, async () => (await stale(posts, "prolific", "prolific-before")) === 0);
    await app.system.durable.waitForIdle();
    const [instance] = (await app.system.durable.queryInstances()).filter(
      (i) => i.name === "propagateUsername" && (i.input as { userId?: string }).userId === "prolific",
    );
    const status = await app.system.durable.getStatus(instance.instanceId, { showHistory: true });
    expect(status?.runtimeStatus).toBe("Completed");
    // 12 partitions in pages of 3: several executions, each with a short history of its own.
    expect(status?.customStatus).toMatchObject({ partitions: 12, updated: 24 });
    expect((status?.customStatus as { pages: number }).pages).toBeGreaterThanOrEqual(4);
    expect(status?.history?.length).toBeLessThan(40);
  }, 60_000);
});
