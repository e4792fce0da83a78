import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "local-host";
import { readPost } from "../../src/store/posts";
import { inBackground } from "../../src/store/priority";
import { apiFixture, type ApiFixture, type ApiResponse } from "../support/api";

/**
 * Guarantee: when a partition runs out of request units, the background (change feed consumers,
 * activities, the estimator) is throttled before a reader is. Its requests go at low priority,
 * and Cosmos DB (here the embedded server, with a budget of 40 operations per second per
 * physical partition and a clock the test moves) throttles those first, as Azure's
 * priority-based execution does.
 */
let api: ApiFixture;
let postId: string;
const clock = new ManualClock();
beforeAll(async () => {
  api = await apiFixture({ cosmos: { operationsPerSecond: 40, clock }, maxRetryWaitSeconds: 0 });
  const retrying = async (call: () => Promise<ApiResponse>) => {
    for (let response = await call(); ; response = await call()) {
      if (response.status !== 429) return response;
      clock.advance(1000);
    }
  };
  await retrying(() => api.request("POST", "/api/users", { as: "author", body: { username: "author" } }));
  postId = (await retrying(() => api.request("POST", "/api/posts", { as: "author", body: { title: "read me", content: "c" } }))).body.postId;
});
afterAll(() => api.stop());

describe("a partition out of request units", () => {
  it("throttles the background's requests and still serves the reader's", async () => {
    clock.advance(1000); // a full budget
    let background = 0;
    let throttled: unknown;
    while (!throttled && background < 100) {
      await inBackground(() => readPost(api.blog, postId)).then(
        () => background++,
        (error: unknown) => (throttled = error),
      );
    }
    expect(throttled).toMatchObject({ code: 429 });
    expect(background).toBeGreaterThan(0);
    // The same partition, the same second: the reader's request is admitted.
    const read = await api.request("GET", `/api/posts/${postId}`);
    expect(read.status).toBe(200);
    expect(read.body.postId).toBe(postId);
  });
});
