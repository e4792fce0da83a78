import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CosmosClient } from "@azure/cosmos";
import { afterEach, describe, expect, it } from "vitest";
import { runAccount, runHost, START_SCRIPT, type HostProcess } from "../../chaos/host";
import { devToken, LOCAL_DEV_SECRET } from "../../local/dev-auth";
import type { BlogStore } from "../../src/store/client";
import { ACCOUNT_ERASED } from "../../src/model/errors";
import { changeFeedTriggers } from "../../src/pipeline/change-feed-triggers";
import { estimateStoreLag } from "../../src/store/change-feed-lag";
import { localSystem, within, type Client } from "../support/system";

/** How long a step of the erasure may take on a busy machine (a CI run once needed more than 30 s for the TTL sweep): generous; the benchmark times it. */
const GENEROUS_MS = 90_000;

/**
 * Guarantee: an erased account leaves nothing of itself behind. From the DELETE on, the profile
 * is gone and the token cannot write; once the erasure has run and the soft-deleted items'
 * TTL has passed, no document in any container carries the user's id or username except the
 * erasure record (id, dates, counts), every counter still equals its items, and the username
 * can be claimed by someone else.
 */
let app: Client | undefined;
afterEach(async () => {
  await app?.stop();
  app = undefined;
});

/** Quick retries, a short claim grace and a short TTL, so the whole erasure happens within a test. */
const options = {
  softDeleteTtlSeconds: 2,
  policy: {
    activityRetryFirstMs: 10,
    activityAttempts: 3,
    failureBackoffMs: 100,
    failureBackoffMaxMs: 400,
    settleMs: 50,
    pageSize: 2,
    unbornClaimGraceSeconds: 1,
    claimRecheckMs: 200,
  },
};

/** Every document of every container that mentions the user's id or name anywhere in it. */
async function mentions(store: BlogStore, userId: string, username: string): Promise<{ container: string; doc: Record<string, unknown> }[]> {
  const found = [];
  for (const container of [store.users, store.posts, store.feed, store.deadLetters]) {
    const { resources } = await container.items.query<Record<string, unknown>>("SELECT * FROM c").fetchAll();
    for (const doc of resources) {
      const text = JSON.stringify(doc);
      if (text.includes(`"${userId}"`) || text.includes(`:${userId}`) || text.toLowerCase().includes(username.toLowerCase()))
        found.push({ container: container.id, doc });
    }
  }
  return found;
}

async function countsMatch(store: BlogStore, postId: string): Promise<boolean> {
  const { resource: post } = await store.posts.item(postId, postId).read<{ commentCount: number; likeCount: number }>();
  const live = async (type: string) =>
    (
      await store.posts.items
        .query<number>(
          { query: "SELECT VALUE COUNT(1) FROM c WHERE c.type = @type AND NOT IS_DEFINED(c.deleted)", parameters: [{ name: "@type", value: type }] },
          { partitionKey: postId },
        )
        .fetchAll()
    ).resources[0];
  return post!.commentCount === (await live("comment")) && post!.likeCount === (await live("like"));
}

describe("an erasure reaches every copy", () => {
  it("removes the profile at once, refuses the token, then everything of the user, with every count exact and the name free again", async () => {
    app = await localSystem(options);
    const call = app.call;
    for (const [id, name] of [
      ["eve", "Eve_Writes"],
      ["ann", "ann"],
      ["bob", "bob"],
    ])
      expect((await call("POST", "/users", { as: id, body: { username: name } })).status).toBe(201);
    const evesPosts: string[] = [];
    for (let i = 0; i < 3; i++) evesPosts.push((await call("POST", "/posts", { as: "eve", body: { title: `eve ${i}`, content: "mine" } })).body.id);
    const annsPost = (await call("POST", "/posts", { as: "ann", body: { title: "ann's", content: "hers" } })).body.id as string;
    for (const postId of evesPosts) {
      await call("POST", `/posts/${postId}/comments`, { as: "ann", body: { content: "nice" } });
      await call("POST", `/posts/${postId}/likes`, { as: "ann" });
    }
    await call("POST", `/posts/${annsPost}/comments`, { as: "eve", body: { content: "first" } });
    await call("POST", `/posts/${annsPost}/comments`, { as: "eve", body: { content: "second" } });
    await call("POST", `/posts/${annsPost}/comments`, { as: "bob", body: { content: "bob's" } });
    await call("POST", `/posts/${annsPost}/likes`, { as: "eve" });
    await call("POST", `/posts/${annsPost}/likes`, { as: "bob" });
    // The pipeline has copied eve's posts into her list and recorded where she wrote: the
    // erasure's steps find her posts there (what they miss of her comments and likes, the posts
    // change feed erases, counted all the same).
    await within(20_000, async () => (await call("GET", "/users/eve/posts")).body?.items?.length === 3);
    await within(20_000, async () => (await app!.system.store.users.item(`contribution:${annsPost}`, "eve").read()).resource !== undefined);

    const erased = await call("DELETE", "/users/eve", { as: "eve" });
    expect(erased.status).toBe(202);
    expect(erased.headers.get("location")).toBe("/api/users/eve/erasure");
    expect((await call("DELETE", "/users/eve", { as: "eve" })).status).toBe(202);

    // At once: the profile is gone from every read, and the token writes nothing.
    expect((await call("GET", "/users/eve")).status).toBe(404);
    expect((await call("GET", "/users/eve/posts")).status).toBe(404);
    for (const [method, path, body] of [
      ["POST", "/posts", { title: "t", content: "c" }],
      ["POST", "/users", { username: "Eve_Again" }],
      ["PUT", "/users/eve", { username: "Eve_Again" }],
      ["POST", `/posts/${annsPost}/comments`, { content: "c" }],
      ["POST", `/posts/${annsPost}/likes`, undefined],
    ] as const) {
      const refused = await call(method, path, { as: "eve", body });
      expect(refused.status, `${method} ${path}`).toBe(403);
      expect(refused.body.type).toBe(ACCOUNT_ERASED);
    }
    // Others may not ask for someone else's erasure or look at it.
    expect((await call("DELETE", "/users/ann", { as: "bob" })).status).toBe(403);
    expect((await call("GET", "/users/eve/erasure", { as: "bob" })).status).toBe(403);

    const done = await within(GENEROUS_MS, async () => {
      const status = await call("GET", "/users/eve/erasure", { as: "eve" });
      return status.body.status === "completed" && status.body;
    });
    expect(done.value.progress).toMatchObject({ posts: 3, comments: 2, likes: 1 });
    for (const postId of evesPosts) expect((await call("GET", `/posts/${postId}`)).status).toBe(404);
    const comments = (await call("GET", `/posts/${annsPost}/comments`)).body.items as { userId: string }[];
    expect(comments.map((comment) => comment.userId)).toEqual(["bob"]);
    const post = (await call("GET", `/posts/${annsPost}`)).body;
    expect([post.commentCount, post.likeCount]).toEqual([1, 1]);
    expect(await countsMatch(app.system.store, annsPost)).toBe(true);

    // Once the soft-deleted items' TTL has run out, nothing but the erasure record mentions her.
    const left = await within(GENEROUS_MS, async () => {
      const found = await mentions(app!.system.store, "eve", "Eve_Writes");
      return found.every(({ doc }) => doc.type === "erasure") && found;
    });
    expect(
      left.value.map(({ doc }) =>
        Object.keys(doc)
          .filter((key) => !key.startsWith("_"))
          .sort(),
      ),
    ).toEqual([["id", "progress", "requestedBy", "requestedDate", "type", "userId", "completedDate"].sort()]);

    // The name is free again for someone else, after the claim's grace period.
    await within(20_000, async () => (await call("POST", "/users", { as: "zed", body: { username: "eve_writes" } })).status === 201);
  }, 240_000);

  it("erases again what a stale change feed holder writes into the account after the erasure finished", async () => {
    // With several instances, a host whose lease was taken over may still be handling a batch the
    // new holder already handled: it records where the user wrote, after the erasure removed that
    // record, and is killed before it reads the account and erases it again. Nobody handles that
    // batch again, so what it wrote must be found from the write itself.
    app = await localSystem(options);
    const call = app.call;
    for (const [id, name] of [
      ["ivy", "ivy"],
      ["kim", "kim"],
    ])
      expect((await call("POST", "/users", { as: id, body: { username: name } })).status).toBe(201);
    const kimsPost = (await call("POST", "/posts", { as: "kim", body: { title: "kim's", content: "hers" } })).body.id as string;
    const ivysPost = (await call("POST", "/posts", { as: "ivy", body: { title: "ivy's", content: "mine" } })).body.id as string;
    await call("POST", `/posts/${kimsPost}/comments`, { as: "ivy", body: { content: "hello" } });
    expect((await call("DELETE", "/users/ivy", { as: "ivy" })).status).toBe(202);
    await within(GENEROUS_MS, async () => (await call("GET", "/users/ivy/erasure", { as: "ivy" })).body.status === "completed");
    const users = app.system.store.users;
    const left = async () => (await users.items.query({ query: "SELECT c.id FROM c WHERE c.type != 'erasure'" }, { partitionKey: "ivy" }).fetchAll()).resources;
    // Settled: the posts change feed has handled every change (its own late repairs done), and the account is clean.
    const postsConsumer = changeFeedTriggers.find((trigger) => trigger.name === "postsChangeFeed")!;
    await within(
      GENEROUS_MS,
      async () => (await estimateStoreLag(app!.system.store, "posts", postsConsumer)).every((reading) => reading.items === 0) && (await left()).length === 0,
    );

    // The stale holder's writes: the record of where ivy wrote, and her post's copy in her list.
    await users.items.create({ id: `contribution:${kimsPost}`, type: "contribution", userId: "ivy", postId: kimsPost, since: new Date().toISOString() });
    const { resource: copy } = await app.system.store.posts.item(ivysPost, ivysPost).read<Record<string, unknown>>();
    await users.items.upsert({ ...copy, id: ivysPost, type: "post", userId: "ivy", postId: ivysPost, sourceLsn: 0 });
    expect(await left()).toHaveLength(2);
    // Generous: on a busy machine the users change feed may retry its batch (1 s, then doubling) before it succeeds.
    await within(GENEROUS_MS, async () => (await left()).length === 0);
  }, 300_000);
});

describe("an erasure cut short", () => {
  /** JSON over HTTP to a host process, as `as` (a dev token). */
  const caller = (url: string) => async (method: string, path: string, as?: string, body?: unknown) => {
    const headers: Record<string, string> = as ? { authorization: `Bearer ${await devToken(as, LOCAL_DEV_SECRET)}` } : {};
    if (body !== undefined) headers["content-type"] = "application/json";
    const response = await fetch(`${url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await response.text();
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    return { status: response.status, body: (text ? JSON.parse(text) : undefined) as any };
  };
  const start = (dataDir: string, faults?: string) => runHost("node", [START_SCRIPT, "--data-dir", dataDir, ...(faults ? ["--faults", faults] : [])]);
  const stop = async (host: HostProcess, signal: NodeJS.Signals) => {
    host.child.kill(signal);
    await host.exited;
  };

  it("by kill -9 halfway through finishes after the restart", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "erasure-kill-"));
    // Every stored procedure call on posts takes 150 ms: deleting twelve posts takes long enough to be cut.
    let host = start(dataDir, "latency=150:1@sproc/posts");
    try {
      let call = caller((await host.ready).url);
      expect((await call("POST", "/users", "eve", { username: "eve_leaves" })).status).toBe(201);
      const posts: string[] = [];
      for (let i = 0; i < 12; i++) posts.push((await call("POST", "/posts", "eve", { title: `eve ${i}`, content: "c" })).body.id);
      await within(GENEROUS_MS, async () => (await call("GET", "/users/eve/posts?limit=100")).body?.items?.length === 12);

      expect((await call("DELETE", "/users/eve", "eve")).status).toBe(202);
      // Some of her posts are gone, not all: the erasure is under way. Cut it there.
      await within(GENEROUS_MS, async () => (await Promise.all(posts.map((id) => call("GET", `/posts/${id}`)))).some((reply) => reply.status === 404));
      await stop(host, "SIGKILL");

      // What the account holds at that moment: the erasure was cut partway.
      const account = runAccount(join(dataDir, "cosmos"), undefined);
      const { cosmosEndpoint, cosmosKey } = await account.ready;
      const client = new CosmosClient({ endpoint: cosmosEndpoint, key: cosmosKey, connectionPolicy: { enableEndpointDiscovery: false } });
      const { resources } = await client
        .database("blog")
        .container("posts")
        .items.query<number>("SELECT VALUE COUNT(1) FROM c WHERE c.userId = 'eve' AND c.type = 'post' AND NOT IS_DEFINED(c.deleted)")
        .fetchAll();
      client.dispose();
      await stop(account, "SIGINT");
      expect(resources[0]).toBeGreaterThan(0);
      expect(resources[0]).toBeLessThan(12);

      host = start(dataDir);
      call = caller((await host.ready).url);
      const done = await within(GENEROUS_MS, async () => {
        const status = await call("GET", "/users/eve/erasure", "eve");
        return status.body?.status === "completed" && status.body;
      });
      // A page cut by the crash counts what its repeat removed: at most the twelve.
      expect(done.value.progress.posts).toBeGreaterThan(0);
      expect(done.value.progress.posts).toBeLessThanOrEqual(12);
      for (const id of posts) expect((await call("GET", `/posts/${id}`)).status).toBe(404);
    } finally {
      await stop(host, "SIGINT");
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 300_000);
});
