import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChangeFeedStartFrom } from "@azure/cosmos";
import { copyPostToFeed } from "../../src/pipeline/feed-refresh";
import { feedWritePlan } from "../../src/pipeline/feed-window";
import { handlePostsChanges } from "../../src/pipeline/posts-change-feed";
import type { FeedEntry } from "../../src/store/copies";
import { measureCosmos } from "../../src/store/metering";
import type { PostChange } from "../../src/store/copies";
import { apiFixture, type ApiFixture } from "../support/api";
import { localSystem, within, type Client } from "../support/system";

/**
 * Guarantee: the feed's single partition takes a bounded number of writes however a post is
 * liked or commented on. A change that only moves a post's counters rewrites its feed copy at
 * most once per FEED_REFRESH_SECONDS (a durable refresh carries the last value there); new and
 * edited posts go in at once; posts outside the 100-newest window are never written.
 */
describe("the feed write plan", () => {
  const post = {
    id: "p",
    postId: "p",
    type: "post",
    userId: "u",
    userUsername: "ann",
    title: "t",
    content: "c",
    creationDate: "2026-01-01T00:00:00.000Z",
    commentCount: 0,
    likeCount: 1,
    _lsn: 10,
  } as PostChange;
  const entry: FeedEntry = {
    id: "p",
    creationDate: post.creationDate,
    sourceLsn: 9,
    userUsername: "ann",
    title: "t",
    content: "c",
    commentCount: 0,
    likeCount: 0,
    _ts: 1000,
  };
  it("defers a counter-only change until FEED_REFRESH_SECONDS after the copy was written, and writes everything else at once", () => {
    expect(feedWritePlan(entry, post, 5, 1_002_000)).toEqual({ dueAtMs: 1_005_000 });
    expect(feedWritePlan(entry, post, 5, 1_005_000)).toBe("now");
    expect(feedWritePlan(undefined, post, 5, 1_002_000)).toBe("now"); // a new post
    expect(feedWritePlan({ ...entry, title: "old" }, post, 5, 1_002_000)).toBe("now"); // an edit
    expect(feedWritePlan({ ...entry, userUsername: "old" }, post, 5, 1_002_000)).toBe("now"); // a rename
    expect(feedWritePlan({ ...entry, likeCount: 1 }, post, 5, 1_002_000)).toBe("skip"); // nothing a reader sees
    expect(feedWritePlan({ ...entry, deleted: true }, post, 5, 1_002_000)).toBe("now"); // the tombstone decides
  });
});

describe("feed writes under a like storm", () => {
  let api: ApiFixture;
  beforeAll(async () => {
    // The storm inside one refresh window, however long a busy machine takes over 1,000 changes
    // (with the default 5 s, a slow run's later changes fell due and were written, as they should).
    api = await apiFixture({ settings: { feedRefreshSeconds: 600 } });
    await api.user("author", "author");
  });
  afterAll(() => api.stop());

  it("1,000 counter changes to one post within FEED_REFRESH_SECONDS write the feed at most once and start one refresh, which lands the last value", async () => {
    const postId = (await api.request("POST", "/api/posts", { as: "author", body: { title: "viral", content: "c" } })).body.postId as string;
    const started: { name: string; instanceId: string; input: unknown }[] = [];
    const services = {
      orchestrations: { ensureStarted: async (name: string, instanceId: string, input: unknown) => void started.push({ name, instanceId, input }) },
    };
    const iterator = api.blog.posts.items.getChangeFeedIterator<PostChange>({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning(postId) });
    const created = (await iterator.readNext()).result.find((c) => c.type === "post")!;
    await handlePostsChanges(api.blog, [created], services); // a new post: in the feed at once

    const { usage } = await measureCosmos(async () => {
      for (let likes = 1; likes <= 1000; likes++) await handlePostsChanges(api.blog, [{ ...created, likeCount: likes, _lsn: created._lsn + likes }], services);
    });
    const feedWrites = usage.requests.filter((r) => r.path.includes("/colls/feed/docs") && r.method !== "GET" && !r.isQuery && !r.isQueryPlan);
    expect(feedWrites.length).toBeLessThanOrEqual(1);
    expect(new Set(started.map((s) => s.instanceId)).size).toBeLessThanOrEqual(2);
    expect(started.every((s) => s.name === "refreshFeedCopy")).toBe(true);

    // The refresh (its activity, as the orchestration runs it when due) copies the post as it is now.
    const { resource: post } = await api.blog.posts.item(postId, postId).read();
    await api.blog.posts.item(postId, postId).replace({ ...post, likeCount: 1000 });
    const last = started[started.length - 1].input as { postId: string; sourceLsn: number };
    expect(await copyPostToFeed(api.blog, last)).toBe("written");
    const feed = (await api.request("GET", "/api/feed?limit=100")).body.items as { postId: string; likeCount: number }[];
    expect(feed.find((p) => p.postId === postId)?.likeCount).toBe(1000);
  }, 60_000);
});

describe("the author's list copy under a like storm", () => {
  let api: ApiFixture;
  const fans = Array.from({ length: 200 }, (_, i) => `fan${i}`);
  beforeAll(async () => {
    api = await apiFixture();
    for (const user of ["author", ...fans]) await api.user(user, user);
  });
  afterAll(() => api.stop());

  it("is written once for 200 likes the change feed delivers together, not once per like", async () => {
    const postId = (await api.request("POST", "/api/posts", { as: "author", body: { title: "viral", content: "c" } })).body.postId as string;
    const iterator = api.blog.posts.items.getChangeFeedIterator<PostChange | { type: "comment" | "like" }>({
      changeFeedStartFrom: ChangeFeedStartFrom.Beginning(postId),
    });
    await handlePostsChanges(api.blog, (await iterator.readNext()).result);
    const statuses = await Promise.all(fans.map(async (fan) => (await api.request("POST", `/api/posts/${postId}/likes`, { as: fan })).status));
    expect(statuses.every((s) => s === 201)).toBe(true);

    // The change feed, as the trigger reads it: the post once (its latest version), and the new likes.
    const delivered: (PostChange | { type: "comment" | "like" })[] = [];
    const { usage } = await measureCosmos(async () => {
      for (let page = await iterator.readNext(); page.result.length > 0; page = await iterator.readNext()) {
        delivered.push(...page.result);
        await handlePostsChanges(api.blog, page.result);
      }
    });
    expect(delivered.filter((c): c is PostChange => c.type === "post").map((c) => c.likeCount)).toEqual([200]);
    expect(delivered.filter((c) => c.type === "like")).toHaveLength(200);
    const usersWrites = usage.requests.filter((r) => r.path.includes("/colls/users/docs") && r.method !== "GET" && !r.isQuery && !r.isQueryPlan);
    // One write to the author's partition (the list copy); each fan's own partition gets where they wrote, once.
    const partitions = usersWrites.map((r) => (JSON.parse(r.partitionKey ?? "[]") as string[])[0]);
    expect(partitions.filter((key) => key === "author")).toHaveLength(1);
    expect(partitions.filter((key) => key !== "author").sort()).toEqual([...fans].sort());
    const list = (await api.request("GET", "/api/users/author/posts")).body.items as { postId: string; likeCount: number }[];
    expect(list.find((p) => p.postId === postId)?.likeCount).toBe(200);
  }, 60_000);
});

describe("feed refresh in the running system", () => {
  let client: Client;
  beforeAll(async () => {
    // Long enough that the likes below (well under a second) all come before the copy may be rewritten.
    client = await localSystem({ feedRefreshSeconds: 6, policy: { activityRetryFirstMs: 50, failureBackoffMs: 50 } });
  });
  afterAll(() => client.stop());

  it("likes that arrive faster than the refresh interval reach the feed copy through one durable refresh", async () => {
    const fans = Array.from({ length: 8 }, (_, i) => `fan${i}`);
    for (const user of ["author", ...fans]) await client.call("POST", "/users", { as: user, body: { username: user } });
    const postId = (await client.call("POST", "/posts", { as: "author", body: { title: "hot", content: "c" } })).body.postId as string;
    const inFeed = async () =>
      ((await client.call("GET", "/feed?limit=100")).body.items as { postId: string; likeCount: number }[]).find((p) => p.postId === postId);
    await within(20_000, inFeed);
    for (const fan of fans) expect((await client.call("POST", `/posts/${postId}/likes`, { as: fan })).status).toBe(201);
    const { value } = await within(40_000, async () => {
      const copy = await inFeed();
      return copy?.likeCount === fans.length ? copy : undefined;
    });
    expect(value.likeCount).toBe(fans.length);
    expect(client.logs.some((line) => line.includes(`feed-refresh-${postId}-`))).toBe(true);
  }, 90_000);
});
