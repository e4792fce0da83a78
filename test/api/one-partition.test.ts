import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChangeFeedStartFrom } from "@azure/cosmos";
import type { CosmosRequest } from "../../src/store/metering";
import { handlePostsChanges } from "../../src/pipeline/posts-change-feed";
import type { PostChange } from "../../src/store/views";
import { apiFixture, type ApiFixture } from "../support/api";

let api: ApiFixture;
let postId: string;
beforeAll(async () => {
  api = await apiFixture();
  await api.user("reader", "Reader");
  postId = (await api.request("POST", "/api/posts", { as: "reader", body: { title: "t", content: "c" } })).body.postId;
  await api.request("POST", `/api/posts/${postId}/comments`, { as: "reader", body: { content: "c" } });
  await api.request("POST", `/api/posts/${postId}/likes`, { as: "reader" });
  const { result: resources } = await api.blog.posts.items
    .getChangeFeedIterator<PostChange>({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning(postId) })
    .readNext();
  await handlePostsChanges([resources.find((r) => r.type === "post")!]);
});
afterAll(() => api.stop());

const reads: [string, () => string, string][] = [
  ["Q1 get a user", () => "/api/users/reader", '["reader"]'],
  ["Q2 get a post", () => `/api/posts/${postId}`, ""],
  ["Q3 a user's posts", () => "/api/users/reader/posts", '["reader"]'],
  ["Q4 a post's comments", () => `/api/posts/${postId}/comments`, ""],
  ["Q5 a post's likes", () => `/api/posts/${postId}/likes`, ""],
  ["Q6 the feed", () => "/api/feed", '["post"]'],
];

describe("every read is one Cosmos DB request to one partition", () => {
  it.each(reads)("%s", async (_name, path, partition) => {
    await api.request("GET", path()); // warm the SDK's metadata caches (container, partition key ranges)
    const { response, usage } = await api.measured("GET", path());
    expect(response.status).toBe(200);
    const data = usage.requests.filter((r: CosmosRequest) => !r.isQueryPlan);
    const plans = usage.requests.filter((r: CosmosRequest) => r.isQueryPlan);
    expect(data).toHaveLength(1);
    expect(plans.length).toBeLessThanOrEqual(1); // the SDK's query-plan request, for queries only
    const expected = partition || JSON.stringify([postId]);
    expect(data[0].partitionKey).toBe(expected);
    expect(response.headers["server-timing"]).toContain(`cosmos-requests;desc="${usage.requests.length}"`);
  });
});
