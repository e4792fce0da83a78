import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiFixture, type ApiFixture } from "../support/api";
import { measureCosmos, type CosmosUsage } from "../../src/store/metering";
import { likePost, unlikePost } from "../../src/store/posts";
import type { DomainError } from "../../src/model/errors";
import type { UserItem } from "../../src/model/items";

/**
 * Group commit of likes: what a caller sees is what one call per like would give (its own
 * outcome, exact counts), while a post under concurrent likes gets far fewer stored procedure
 * calls, each one transaction.
 */
const changeLikesCalls = (usage: CosmosUsage) => usage.requests.filter((r) => r.path.endsWith("/sprocs/changeLikes")).length;

async function likeItems(api: ApiFixture, postId: string): Promise<string[]> {
  const { resources } = await api.blog.posts.items
    .query<string>({ query: "SELECT VALUE c.userId FROM c WHERE c.type = 'like' AND NOT IS_DEFINED(c.deleted)" }, { partitionKey: postId })
    .fetchAll();
  return resources.sort();
}

/** A profile as the like handlers pass it to the store, for calls made straight to the store in one tick. */
const profile = (userId: string): UserItem => ({ id: userId, type: "user", userId, username: userId, creationDate: "2026-01-01T00:00:00.000Z" });

const fanIds = (n: number) => Array.from({ length: n }, (_, i) => `fan${i}`);

/** For one describe block: an API with the profiles of "author", "nobody" and `n` fans. */
function withFans(n: number, options: Parameters<typeof apiFixture>[0] = {}) {
  const fixture = { api: undefined as unknown as ApiFixture, fans: fanIds(n) };
  beforeAll(async () => {
    fixture.api = await apiFixture(options);
    for (const user of ["author", "nobody", ...fixture.fans]) await fixture.api.user(user, user);
  });
  afterAll(() => fixture.api.stop());
  return fixture;
}

async function newPost(api: ApiFixture, title: string): Promise<string> {
  return (await api.request("POST", "/api/posts", { as: "author", body: { title, content: "c" } })).body.postId;
}

describe("likes of one post sent together (group commit)", () => {
  const fixture = withFans(60);

  it("sends a lone like at once, in one call", async () => {
    const { api } = fixture;
    const postId = await newPost(api, "quiet");
    const { response, usage } = await api.measured("POST", `/api/posts/${postId}/likes`, { as: "fan0" });
    expect(response.status).toBe(201);
    expect(changeLikesCalls(usage)).toBe(1);
  });

  it("answers concurrent likes each with its own outcome, in far fewer calls, with exact counts", async () => {
    const { api, fans } = fixture;
    const postId = await newPost(api, "hot");
    const { result: responses, usage } = await measureCosmos(() =>
      Promise.all([
        ...fans.map((fan) => api.request("POST", `/api/posts/${postId}/likes`, { as: fan })),
        api.request("POST", `/api/posts/${postId}/likes`, { as: "fan7" }), // a repeat, in the same storm
        api.request("DELETE", `/api/posts/${postId}/likes`, { as: "nobody" }), // never liked it
      ]),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses.slice(0, fans.length)).toEqual(fans.map(() => 201));
    expect(statuses.slice(fans.length)).toEqual([200, 404]);
    expect(responses[fans.length].body).toEqual(responses[7].body); // the repeat returns the like the first one made
    expect(responses.slice(0, fans.length).map((r) => r.body.userId)).toEqual(fans);
    // How many wait for a call depends on timing; a single call per like would be 62.
    expect(changeLikesCalls(usage)).toBeLessThan(fans.length);
    expect((await api.request("GET", `/api/posts/${postId}`)).body.likeCount).toBe(60);
    expect(await likeItems(api, postId)).toEqual([...fans].sort());
  });

  it("sends what arrives while a call runs in the next call, at most LIKE_BATCH_MAX (50) at a time", async () => {
    const { api, fans } = fixture;
    const postId = await newPost(api, "burst");
    // Called in one tick, as requests arriving together: the first goes alone, the rest wait for it.
    const { result, usage } = await measureCosmos(() => Promise.all(fans.map((fan) => likePost(api.blog, postId, profile(fan)))));
    expect(result.every((r) => r.created)).toBe(true);
    expect(changeLikesCalls(usage)).toBe(3); // 1, then 50, then 9
    expect(await likeItems(api, postId)).toEqual([...fans].sort());
  });

  it("applies a user's likes and unlikes in the order they arrived", async () => {
    const { api } = fixture;
    const postId = await newPost(api, "undecided");
    const outcomes = await Promise.allSettled([
      likePost(api.blog, postId, profile("fan1")),
      likePost(api.blog, postId, profile("fan2")),
      unlikePost(api.blog, postId, "fan2"),
      unlikePost(api.blog, postId, "fan2"),
      likePost(api.blog, postId, profile("fan2")),
      likePost(api.blog, postId, profile("fan3")),
      unlikePost(api.blog, postId, "fan3"),
    ]);
    const summary = outcomes.map((o) =>
      o.status === "rejected" ? (o.reason as DomainError).kind : o.value === undefined ? "unliked" : o.value.created ? "created" : "exists",
    );
    expect(summary).toEqual(["created", "created", "unliked", "notFound", "created", "created", "unliked"]);
    expect((await api.request("GET", `/api/posts/${postId}`)).body.likeCount).toBe(2);
    expect(await likeItems(api, postId)).toEqual(["fan1", "fan2"]);
  });

  it("answers 404 to every change of a post that does not exist", async () => {
    const { api, fans } = fixture;
    const responses = await Promise.all(fans.slice(0, 5).map((fan) => api.request("POST", "/api/posts/missing/likes", { as: fan })));
    expect(responses.map((r) => r.status)).toEqual([404, 404, 404, 404, 404]);
  });
});

describe("a batch the procedure bounds (isAccepted false)", () => {
  // 10 collection calls per procedure call: a query, up to 8 like writes and the count.
  const fixture = withFans(20, { cosmos: { scriptOperationLimit: 10 } });

  it("is rolled back and sent again in smaller calls, every like acknowledged and counted once", async () => {
    const { api, fans } = fixture;
    const postId = await newPost(api, "bounded");
    // In one tick: 1 alone, then 19 that do not fit (rolled back), then 10 (rolled back), then 5, 5, 5, 4.
    const { result, usage } = await measureCosmos(() => Promise.all(fans.map((fan) => likePost(api.blog, postId, profile(fan)))));
    expect(result.every((r) => r.created)).toBe(true);
    expect(changeLikesCalls(usage)).toBe(7);
    expect((await api.request("GET", `/api/posts/${postId}`)).body.likeCount).toBe(20);
    expect(await likeItems(api, postId)).toEqual([...fans].sort());
  });
});

describe("a batch whose call fails", () => {
  // The first two changeLikes calls run and are then rolled back (a timeout): the lone first like, then the batch behind it.
  const fixture = withFans(10, {
    cosmos: { faults: { rules: [{ effect: "sproc-timeout", rate: 1, operations: ["sproc"], containers: ["posts"], limit: 2 }] } },
  });

  it("fails every change in it and commits none of them; the retries count once", async () => {
    const { api, fans } = fixture;
    const postId = await newPost(api, "unlucky");
    const first = await Promise.all(fans.map((fan) => api.request("POST", `/api/posts/${postId}/likes`, { as: fan })));
    expect(first.every((r) => r.status === 503 || r.status === 201)).toBe(true);
    const failed = fans.filter((_, i) => first[i].status === 503);
    expect(failed.length).toBeGreaterThanOrEqual(2); // the second failed call carried more than one like
    expect((await api.request("GET", `/api/posts/${postId}`)).body.likeCount).toBe(fans.length - failed.length);
    expect(await likeItems(api, postId)).toEqual(fans.filter((f) => !failed.includes(f)).sort());

    const retried = await Promise.all(failed.map((fan) => api.request("POST", `/api/posts/${postId}/likes`, { as: fan })));
    expect(retried.map((r) => r.status)).toEqual(failed.map(() => 201));
    expect((await api.request("GET", `/api/posts/${postId}`)).body.likeCount).toBe(10);
    expect(await likeItems(api, postId)).toEqual([...fans].sort());
  });
});

describe("LIKE_BATCH_MAX = 1", () => {
  const fixture = withFans(8, { settings: { likeBatchMax: 1 } });

  it("sends each like in its own call", async () => {
    const { api, fans } = fixture;
    const postId = await newPost(api, "one by one");
    const { result: responses, usage } = await measureCosmos(() =>
      Promise.all(fans.map((fan) => api.request("POST", `/api/posts/${postId}/likes`, { as: fan }))),
    );
    expect(responses.map((r) => r.status)).toEqual(fans.map(() => 201));
    expect(changeLikesCalls(usage)).toBe(8);
    expect((await api.request("GET", `/api/posts/${postId}`)).body.likeCount).toBe(8);
  });
});
