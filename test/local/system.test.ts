import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { devToken } from "../../local/dev-auth";
import { localSystem, within, type Client } from "../support/system";

/** A secret of B's own: A's dev tokens (signed with the local one) mean nothing to B. */
const B_SECRET = "the-second-system-signs-with-a-secret-of-its-own";

let a: Client;
let b: Client;

beforeAll(async () => {
  a = await localSystem();
  b = await localSystem({ auth: { devSecret: B_SECRET } });
});
afterAll(async () => {
  await a?.stop();
  await b?.stop();
});

const feedIds = async (client: Client) => (await client.call("GET", "/feed?limit=100")).body.items.map((post: { id: string }) => post.id);

describe("two local systems in one process", () => {
  it("each serves its own store: a profile and a post made on one are not on the other", async () => {
    expect((await a.call("POST", "/users", { as: "ann", body: { username: "ann" } })).status).toBe(201);
    expect((await a.call("GET", "/users/ann")).status).toBe(200);
    expect((await b.call("GET", "/users/ann")).status).toBe(404);
    const post = await a.call("POST", "/posts", { as: "ann", body: { title: "only on a", content: "c" } });
    expect(post.status).toBe(201);
    expect((await b.call("GET", `/posts/${post.body.postId}`)).status).toBe(404);
  });

  it("each runs its change feed consumers on its own store: A's new post reaches A's feed, never B's", async () => {
    const { postId } = (await a.call("POST", "/posts", { as: "ann", body: { title: "to the feed", content: "c" } })).body;
    await within(20_000, async () => (await feedIds(a)).includes(postId));
    expect(await feedIds(b)).toEqual([]);
  });

  it("each checks tokens with its own settings", async () => {
    expect((await b.call("POST", "/users", { as: "bob", body: { username: "bob" } })).status).toBe(401);
    const token = await devToken("bob", B_SECRET);
    const response = await fetch(`${b.system.url}/users`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ username: "bob" }),
    });
    expect(response.status).toBe(201);
    expect((await a.call("GET", "/users/bob")).status).toBe(404);
  });
});
