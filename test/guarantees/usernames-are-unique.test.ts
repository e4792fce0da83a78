import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CosmosClient } from "@azure/cosmos";
import { createDefaultHttpClient } from "@azure/core-rest-pipeline";
import { usernameClaimId } from "../../src/model/items";
import { BlogStore, createStore } from "../../src/store/client";
import { apiFixture, type ApiFixture } from "../support/api";

/**
 * Guarantee: usernames are unique, always. A name a profile uses is claimed by that profile's
 * user, and no retry or race of any client can free it or hand it to someone else.
 */
let api: ApiFixture;
beforeAll(async () => (api = await apiFixture()));
afterAll(() => api.stop());

async function claimOwner(username: string): Promise<string | undefined> {
  const id = usernameClaimId(username);
  const { resource } = await api.blog.users.item(id, id).read<{ ownerId: string }>();
  return resource?.ownerId;
}

/** The invariant itself: the profile's current name is claimed by its user, and nobody else can take it. */
async function expectNameHeld(userId: string, intruder: string): Promise<string> {
  const profile = await api.request("GET", `/api/users/${userId}`);
  expect(profile.status).toBe(200);
  const name = profile.body.username as string;
  expect(await claimOwner(name)).toBe(userId);
  const stolen = await api.request("POST", "/api/users", { as: intruder, body: { username: name.toUpperCase() } });
  expect(stolen.status).toBe(409);
  return name;
}

describe("usernames are unique, always", () => {
  it("three concurrent creates by the same caller with the same name: one 201, the others 409, and the name stays claimed", async () => {
    for (let round = 0; round < 10; round++) {
      const user = `triple${round}`;
      const responses = await Promise.all([0, 1, 2].map(() => api.request("POST", "/api/users", { as: user, body: { username: `same-${round}` } })));
      expect(responses.map((r) => r.status).sort()).toEqual([201, 409, 409]);
      await expectNameHeld(user, `thief${round}`);
    }
  });

  it("two concurrent identical renames both succeed (last writer wins) and the new name stays claimed", async () => {
    for (let round = 0; round < 10; round++) {
      const user = `twin${round}`;
      await api.user(user, `twin-before-${round}`);
      const responses = await Promise.all([0, 1].map(() => api.request("PUT", `/api/users/${user}`, { as: user, body: { username: `twin-after-${round}` } })));
      expect(responses.map((r) => r.status)).toEqual([200, 200]);
      expect(await expectNameHeld(user, `twin-thief${round}`)).toBe(`twin-after-${round}`);
    }
  });

  it("racing renames A->B and B->A never leave the profile's name unclaimed", async () => {
    const user = "pingpong";
    await api.user(user, "ping");
    // A gate on freeing a claim: the second rename is sent while the first is releasing its old name, every round.
    let releasing = () => {};
    let proceed = Promise.resolve();
    const inner = createDefaultHttpClient();
    const slowReleases = new BlogStore(
      new CosmosClient({
        endpoint: api.cosmos.endpoint,
        key: api.cosmos.key,
        connectionPolicy: { enableEndpointDiscovery: false },
        httpClient: {
          async sendRequest(request) {
            if (request.method === "DELETE" && request.url.includes("username")) {
              releasing();
              await proceed;
            }
            return inner.sendRequest(request);
          },
        },
      }),
      api.settings,
    );
    try {
      for (let round = 0; round < 10; round++) {
        let letGo = () => {};
        proceed = new Promise<void>((resolve) => (letGo = resolve));
        const released = new Promise<void>((resolve) => (releasing = resolve));
        const first = api.request("PUT", `/api/users/${user}`, { as: user, body: { username: "pong" }, store: slowReleases });
        await released;
        const second = api.request("PUT", `/api/users/${user}`, { as: user, body: { username: "ping" }, store: slowReleases });
        letGo();
        await Promise.all([first, second]);
        await expectNameHeld(user, `pingpong-thief${round}`);
      }
    } finally {
      slowReleases.dispose();
    }
  });

  it("concurrent renames without If-Match never answer 412: the last writer wins", async () => {
    await api.user("busy", "busy-0");
    const responses = await Promise.all(
      Array.from({ length: 8 }, (_, i) => api.request("PUT", "/api/users/busy", { as: "busy", body: { username: `busy-${i + 1}` } })),
    );
    expect(responses.every((r) => r.status === 200)).toBe(true);
    await expectNameHeld("busy", "busy-thief");
  });

  it("concurrent renames of one profile through three instances (each its own store and rename queue) all succeed", async () => {
    await api.user("spread", "spread-0");
    const instances = [api.blog, createStore(api.blog.settings), createStore(api.blog.settings)];
    try {
      const responses = await Promise.all(
        Array.from({ length: 24 }, (_, i) =>
          api.request("PUT", "/api/users/spread", { as: "spread", body: { username: `spread-${i + 1}` }, store: instances[i % instances.length] }),
        ),
      );
      expect(responses.map((r) => r.status)).toEqual(responses.map(() => 200));
      await expectNameHeld("spread", "spread-thief");
    } finally {
      instances.slice(1).forEach((store) => store.dispose());
    }
  });

  it("a stale If-Match is still the client's own 412", async () => {
    await api.user("careful", "careful-0");
    const stale = await api.request("PUT", "/api/users/careful", { as: "careful", body: { username: "careful-1" }, headers: { "if-match": '"not-the-etag"' } });
    expect(stale.status).toBe(412);
    expect(await expectNameHeld("careful", "careful-thief")).toBe("careful-0");
  });

  it("a claim left behind by a crash (its owner uses another name) can be taken by another user", async () => {
    await api.user("crashed", "crashed-now");
    // What a rename cut off after replacing the profile, before freeing the old name, leaves behind.
    const id = usernameClaimId("crashed-before");
    await api.blog.users.items.create({ id, type: "username", userId: id, ownerId: "crashed", username: "crashed-before" });
    const taken = await api.request("POST", "/api/users", { as: "newcomer", body: { username: "crashed-before" } });
    expect(taken.status).toBe(201);
    expect(await claimOwner("crashed-before")).toBe("newcomer");
    await expectNameHeld("crashed", "crashed-thief");
  });
});

describe("the orphaned-claim sweep in the pipeline", () => {
  it("frees claims left behind by crashes: a rename cut off before freeing the old name, a create cut off before the profile", async () => {
    const { localSystem, within } = await import("../support/system");
    const app = await localSystem({ policy: { unbornClaimGraceSeconds: 1, claimRecheckMs: 300, activityRetryFirstMs: 10 } });
    try {
      const { users } = app.system.store;
      await app.call("POST", "/users", { as: "survivor", body: { username: "survivor-now" } });
      const orphan = usernameClaimId("survivor-then");
      await users.items.create({ id: orphan, type: "username", userId: orphan, ownerId: "survivor", username: "survivor-then" });
      const unborn = usernameClaimId("never-born");
      await users.items.create({ id: unborn, type: "username", userId: unborn, ownerId: "ghost", username: "never-born" });
      const gone = async (id: string) => (await users.item(id, id).read()).resource === undefined;
      await within(20_000, async () => (await gone(orphan)) && (await gone(unborn)));
      // The name a profile uses is never swept.
      expect(await gone(usernameClaimId("survivor-now"))).toBe(false);
      expect((await app.call("POST", "/users", { as: "heir", body: { username: "survivor-then" } })).status).toBe(201);
    } finally {
      await app.stop();
    }
  }, 40_000);
});
