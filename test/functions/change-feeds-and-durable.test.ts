import { describe, expect, it, vi } from "vitest";

const recorded = vi.hoisted(() => ({
  cosmosDB: [] as { name: string; options: Record<string, unknown> }[],
  orchestrations: [] as { name: string; handler: unknown }[],
  activities: [] as { name: string; options: Record<string, unknown> }[],
}));

// `app` of @azure/functions and `df.app` of durable-functions replaced by recorders.
vi.mock("@azure/functions", async (importOriginal) => {
  const actual = await importOriginal<typeof import("@azure/functions")>();
  return { ...actual, app: { ...actual.app, cosmosDB: (name: string, options: Record<string, unknown>) => recorded.cosmosDB.push({ name, options }) } };
});
vi.mock("durable-functions", async (importOriginal) => {
  const actual = await importOriginal<typeof import("durable-functions")>();
  return {
    ...actual,
    app: {
      ...actual.app,
      orchestration: (name: string, handler: unknown) => recorded.orchestrations.push({ name, handler }),
      activity: (name: string, options: Record<string, unknown>) => recorded.activities.push({ name, options }),
    },
  };
});

describe("functions/ registrations of the pipeline", () => {
  it("register one change feed trigger per consumer with the v4 options, a lease prefix each and a retry policy", async () => {
    await import("../../functions/change-feeds");
    const { changeFeedTriggers } = await import("../../src/pipeline/change-feed-triggers");
    expect(recorded.cosmosDB.map((r) => r.name)).toEqual(["postsChangeFeed", "usersChangeFeed"]);
    for (const trigger of changeFeedTriggers) {
      const { options } = recorded.cosmosDB.find((r) => r.name === trigger.name)!;
      expect(options).toMatchObject({
        connection: "COSMOS",
        databaseName: "%COSMOS_DATABASE%",
        containerName: trigger.containerName,
        leaseContainerName: "leases",
        leaseContainerPrefix: trigger.leaseContainerPrefix,
        createLeaseContainerIfNotExists: false,
        retry: { strategy: "exponentialBackoff", maxRetryCount: -1 },
      });
      expect(typeof options.handler).toBe("function");
      expect((options.extraInputs as unknown[]).length).toBe(trigger.needsDurableClient ? 1 : 0);
    }
    expect(recorded.cosmosDB.map((r) => r.options.containerName)).toEqual(["posts", "users"]);
    expect(new Set(recorded.cosmosDB.map((r) => r.options.leaseContainerPrefix)).size).toBe(2);
  });

  it("register every orchestration and activity of the shared table", async () => {
    await import("../../functions/durable");
    const table = await import("../../src/pipeline/orchestrations");
    expect(recorded.orchestrations).toEqual(Object.entries(table.orchestrations).map(([name, handler]) => ({ name, handler })));
    expect(recorded.orchestrations.map((o) => o.name).sort()).toEqual(["eraseAccount", "propagateUsername", "refreshFeedCopy", "releaseOrphanedUsernames"]);
    expect(recorded.activities.map((a) => a.name).sort()).toEqual([
      "completeErasure",
      "copyPostToFeed",
      "eraseLeftovers",
      "eraseOwnPosts",
      "eraseWriting",
      "findStalePartitions",
      "releaseOrphanedClaims",
      "renameInPartition",
    ]);
    for (const activity of recorded.activities) expect(typeof activity.options.handler).toBe("function");
  });
});
