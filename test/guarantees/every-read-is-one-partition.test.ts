import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChangeFeedStartFrom } from "@azure/cosmos";
import type { CosmosRequest } from "../../src/store/metering";
import { handlePostsChanges } from "../../src/pipeline/posts-change-feed";
import type { PostChange } from "../../src/store/copies";
import { routes } from "../../src/api/routes";
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
  await handlePostsChanges(api.blog, [resources.find((r) => r.type === "post")!]);
  // An account erased: its erasure's status is a read of its own.
  await api.user("leaver", "Leaver");
  await api.request("DELETE", "/api/users/leaver", { as: "leaver" });
});
afterAll(() => api.stop());

/**
 * Every read route of the route table (the article's Q1-Q6 and any other GET that reads data;
 * the OpenAPI document reads none, and the one that downloads a whole account says why it
 * reads more), with its path for the data above and the partition it must read.
 */
const reads = routes
  .filter((route) => route.method === "GET" && route.route !== "openapi.json" && !route.doc.readsSeveralPartitions)
  .map((route) => {
    // An erasure's status is read for the account that was erased.
    const userId = route.route.endsWith("/erasure") ? "leaver" : "reader";
    const path = () => `/api/${route.route.replace("{userId}", userId).replace("{postId}", postId)}`;
    const partition = () => (route.route.includes("{userId}") ? `["${userId}"]` : route.route.includes("{postId}") ? JSON.stringify([postId]) : '["post"]');
    return [`${route.doc.request ?? "read"} ${route.name}`, path, partition, route.doc.auth ? userId : undefined] as const;
  });

it("exempts only the account download and search, each with its reason", () => {
  expect(routes.filter((route) => route.doc.readsSeveralPartitions).map((route) => route.name)).toEqual(["exportUser", "search"]);
});

it("finds the article's six reads in the route table", () => {
  expect(
    reads
      .map(([name]) => name.split(" ")[0])
      .filter((request) => request.startsWith("Q"))
      .sort(),
  ).toEqual(["Q1", "Q2", "Q3", "Q4", "Q5", "Q6"]);
});

describe("every read is one Cosmos DB request to one partition", () => {
  it.each(reads)("%s", async (_name, path, partition, as) => {
    await api.request("GET", path(), { as }); // warm the SDK's metadata caches (container, partition key ranges)
    const { response, usage } = await api.measured("GET", path(), { as });
    expect(response.status).toBe(200);
    const data = usage.requests.filter((r: CosmosRequest) => !r.isQueryPlan);
    const plans = usage.requests.filter((r: CosmosRequest) => r.isQueryPlan);
    expect(data).toHaveLength(1);
    expect(plans.length).toBeLessThanOrEqual(1); // the SDK's query-plan request, for queries only
    expect(data[0].partitionKey).toBe(partition());
    expect(response.headers["server-timing"]).toContain(`cosmos-requests;desc="${usage.requests.length}"`);
  });
});
