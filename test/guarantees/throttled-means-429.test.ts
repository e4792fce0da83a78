import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CosmosClient } from "@azure/cosmos";
import { ManualClock } from "local-host";
import { apiFixture, type ApiFixture, type ApiResponse } from "../support/api";

/**
 * Guarantee: when Cosmos DB throttles a request beyond the SDK's retries, the client gets 429
 * with Retry-After, never a 500, and nothing is half-done: every like answered 201 is counted,
 * exactly. The embedded server is given a budget of 40 operations per second per physical
 * partition, and the SDK no time to wait, so a like storm on one post is throttled.
 */
let api: ApiFixture;
let postId: string;
/** The server's clock: its budget refills when the test moves time, not while it sleeps. */
const clock = new ManualClock();
beforeAll(async () => {
  api = await apiFixture({ cosmos: { operationsPerSecond: 40, clock }, maxRetryWaitSeconds: 0 });
  // Setup may be throttled too: retry it as a client would.
  await retrying(() => api.request("POST", "/api/users", { as: "author", body: { username: "author" } }));
  postId = (await retrying(() => api.request("POST", "/api/posts", { as: "author", body: { title: "viral", content: "c" } }))).body.postId;
});
afterAll(() => api.stop());

async function retrying(call: () => Promise<ApiResponse>) {
  for (;;) {
    const response = await call();
    if (response.status !== 429) return response;
    clock.advance(Number(response.headers["retry-after"]) * 1000); // as a client waits Retry-After
  }
}

describe("a throttled request", () => {
  it("is answered 429 with Retry-After, and the likes that were accepted are counted exactly", async () => {
    const likers = Array.from({ length: 80 }, (_, i) => `fan${i}`);
    for (const fan of likers) await retrying(() => api.request("POST", "/api/users", { as: fan, body: { username: fan } }));
    clock.advance(1000); // a full budget for the storm
    const responses = await Promise.all(likers.map((fan) => api.request("POST", `/api/posts/${postId}/likes`, { as: fan })));
    const statuses = responses.map((r) => r.status);
    expect(
      statuses.filter((s) => s !== 201 && s !== 429),
      JSON.stringify(statuses),
    ).toEqual([]);
    const throttled = responses.filter((r) => r.status === 429);
    expect(throttled.length).toBeGreaterThan(0);
    for (const r of throttled) {
      expect(Number(r.headers["retry-after"])).toBeGreaterThanOrEqual(1);
      expect(r.headers["content-type"]).toBe("application/problem+json");
      expect(r.body).toMatchObject({ status: 429, title: "Too Many Requests" });
    }
    const accepted = likers.filter((_, i) => statuses[i] === 201);
    expect(accepted.length).toBeGreaterThan(0);

    // The counter and the like items agree with what was accepted, read without a budget-starved retry.
    const post = (await retrying(() => api.request("GET", `/api/posts/${postId}`))).body;
    expect(post.likeCount).toBe(accepted.length);
    const client = new CosmosClient({ endpoint: api.cosmos.endpoint, key: api.cosmos.key, connectionPolicy: { enableEndpointDiscovery: false } });
    clock.advance(1000); // let the partition's budget refill
    const { resources } = await client
      .database("blog")
      .container("posts")
      .items.query(
        {
          query: "SELECT VALUE c.userId FROM c WHERE c.postId = @p AND c.type = 'like' AND NOT IS_DEFINED(c.deleted)",
          parameters: [{ name: "@p", value: postId }],
        },
        { partitionKey: postId },
      )
      .fetchAll();
    expect((resources as string[]).sort()).toEqual([...accepted].sort());
    client.dispose();
  }, 60_000);
});
