import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DURABLE_API_PATH } from "local-host";
import { localSystem, within, type Client } from "../support/system";

/**
 * Two instances of the app on one account, as Azure runs it when it scales out: each holds its
 * own in-process state (the rename queue, the like group commit, the feed micro-cache), they
 * share one durable task hub, and a client's requests land on either. The guarantees hold across them (docs/architecture.md,
 * "State in one instance").
 */
let a: Client;
let b: Client;
beforeAll(async () => {
  a = await localSystem({ leaseOwner: "instance-a", feedCacheMs: 1000 });
  b = await localSystem({ cosmos: { endpoint: a.system.cosmosEndpoint, key: a.system.cosmosKey }, leaseOwner: "instance-b", feedCacheMs: 1000 });
});
afterAll(async () => {
  await b.stop();
  await a.stop();
});

const either = (i: number) => (i % 2 === 0 ? a : b);

describe("two instances on one account", () => {
  it("concurrent renames of one profile through both all succeed, and the last name stands claimed", async () => {
    expect((await a.call("POST", "/users", { as: "multi", body: { username: "multi-0" } })).status).toBe(201);
    const names = Array.from({ length: 12 }, (_, i) => `multi-${i + 1}`);
    const answers = await Promise.all(names.map((username, i) => either(i).call("PUT", "/users/multi", { as: "multi", body: { username } })));
    expect(answers.map((answer) => answer.status)).toEqual(names.map(() => 200));
    const final = (await b.call("GET", "/users/multi")).body.username as string;
    expect(names).toContain(final);
    // The name it stands under is its own: nobody else can take it, from either instance.
    expect((await a.call("POST", "/users", { as: "intruder-a", body: { username: final } })).status).toBe(409);
    expect((await b.call("POST", "/users", { as: "intruder-b", body: { username: final } })).status).toBe(409);
  });

  it("likes through both instances at once are counted exactly", async () => {
    await a.call("POST", "/users", { as: "author", body: { username: "author" } });
    const post = (await a.call("POST", "/posts", { as: "author", body: { title: "liked", content: "by many" } })).body;
    const likers = Array.from({ length: 30 }, (_, i) => `liker${i}`);
    await Promise.all(likers.map((liker, i) => either(i).call("POST", "/users", { as: liker, body: { username: liker } })));
    const answers = await Promise.all(likers.map((liker, i) => either(i).call("POST", `/posts/${post.postId}/likes`, { as: liker })));
    expect(answers.filter((answer) => answer.status >= 300)).toEqual([]);
    const unliked = likers.slice(0, 7);
    await Promise.all(unliked.map((liker, i) => either(i + 1).call("DELETE", `/posts/${post.postId}/likes`, { as: liker })));
    for (const instance of [a, b]) expect((await instance.call("GET", `/posts/${post.postId}`)).body.likeCount).toBe(likers.length - unliked.length);
  });

  it("a post deleted through one instance leaves the other's feed within its cache's lifetime", async () => {
    const post = (await b.call("POST", "/posts", { as: "author", body: { title: "short-lived", content: "gone soon" } })).body;
    await within(10_000, async () => ((await a.call("GET", "/feed")).body.items.some((p: { postId: string }) => p.postId === post.postId) ? true : undefined));
    expect((await b.call("DELETE", `/posts/${post.postId}`, { as: "author" })).status).toBe(204);
    // Gone from the other instance's Q6 once its micro-cache (1 s) has turned over; the deadline is generous.
    await within(10_000, async () => ((await a.call("GET", "/feed")).body.items.some((p: { postId: string }) => p.postId === post.postId) ? undefined : true));
  });

  it("share one durable task hub: an orchestration started through one instance's Durable Functions API is seen, to its end, through the other's", async () => {
    const durableApi = (client: Client) => `${client.system.url.replace(/\/api$/, "")}${DURABLE_API_PATH}`;
    const instanceIds = ["sweep-a", "sweep-b", "sweep-c", "sweep-d"];
    for (const [i, id] of instanceIds.entries()) {
      const started = await fetch(`${durableApi(either(i))}orchestrators/releaseOrphanedUsernames/${id}`, {
        method: "POST",
        body: JSON.stringify({ userId: id }),
      });
      expect(started.status).toBe(202);
    }
    const statusThrough = async (client: Client, id: string) =>
      (await fetch(`${durableApi(client)}instances/${id}`)).json() as Promise<Record<string, unknown>>;
    for (const [i, id] of instanceIds.entries()) {
      const other = either(i + 1);
      const { value: done } = await within(30_000, async () => {
        const status = await statusThrough(other, id);
        return status.runtimeStatus === "Completed" ? status : undefined;
      });
      expect(done.output).toEqual({ released: 0 });
      // The instance it was started through sees the same end (its view of a partition it does not hold may lag a moment).
      const { value: seenThere } = await within(30_000, async () => {
        const status = await statusThrough(either(i), id);
        return status.runtimeStatus === "Completed" ? status : undefined;
      });
      expect(seenThere).toEqual(done);
    }
    // The hub's partitions end up split between the two, each held by one (a stolen one is let go at its old holder's next renewal).
    await within(30_000, async () => {
      const held = [a, b].map((client) => client.system.durable.partitions());
      return held.every((partitions) => partitions.length === 2) && new Set(held.flat()).size === 4 ? true : undefined;
    });
  });
});
