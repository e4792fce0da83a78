import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DURABLE_API_PATH } from "local-host";
import { localSystem, within, type Client } from "../support/system";

/**
 * The local Durable Functions HTTP API is for the app's durable clients and the developer's
 * tools: no web page may drive it, no name from a path may reach Object's members, and no input
 * may make an orchestration loop.
 */
let app: Client;
let webhooks: string;
beforeAll(async () => {
  app = await localSystem();
  webhooks = `${app.system.url.replace(/\/api$/, "")}${DURABLE_API_PATH}`;
});
afterAll(() => app.stop());

const instanceIds = async () => ((await (await fetch(`${webhooks}instances`)).json()) as { instanceId: string }[]).map((s) => s.instanceId);

describe("the local Durable Functions API refuses web pages", () => {
  it("refuses a page of another origin that starts, terminates or purges (a no-cors text/plain POST), and creates nothing", async () => {
    const before = await instanceIds();
    const started = await fetch(`${webhooks}orchestrators/releaseOrphanedUsernames/from-a-page`, {
      method: "POST",
      headers: { origin: "https://evil.example", "content-type": "text/plain" },
      body: JSON.stringify({ userId: "alice" }),
    });
    expect(started.status).toBe(403);
    for (const path of ["instances/any/terminate", "instances/any/suspend", "instances/any/raiseEvent/x", "instances/any/rewind"]) {
      expect((await fetch(`${webhooks}${path}`, { method: "POST", headers: { origin: "https://evil.example" } })).status, path).toBe(403);
    }
    expect((await fetch(`${webhooks}instances`, { method: "DELETE", headers: { origin: "null" } })).status).toBe(403);
    expect(await instanceIds()).toEqual(before);
  });

  it("refuses what a browser marks as from another site, even without an Origin (an <img> GET)", async () => {
    expect((await fetch(`${webhooks}instances`, { headers: { "sec-fetch-site": "cross-site" } })).status).toBe(403);
    expect((await fetch(`${webhooks}instances`, { headers: { "sec-fetch-site": "same-site" } })).status).toBe(403);
    expect((await fetch(`${webhooks}instances`, { headers: { "sec-fetch-site": "same-origin" } })).status).toBe(200);
  });
});

describe("names from a request on the durable API", () => {
  it("that are Object's members (constructor, toString, __proto__) answer 404 at once and create nothing", async () => {
    const before = await instanceIds();
    for (const name of ["constructor", "toString", "valueOf", "__proto__", "hasOwnProperty"]) {
      const get = await fetch(`${webhooks}${name}`, { signal: AbortSignal.timeout(10_000) });
      expect(get.status, name).toBe(404);
      const start = await fetch(`${webhooks}orchestrators/${name}`, { method: "POST", body: "{}", signal: AbortSignal.timeout(10_000) });
      expect(start.status, name).toBe(404);
      const signal = await fetch(`${webhooks}entities/${name}/key?op=x`, { method: "POST", signal: AbortSignal.timeout(10_000) });
      expect(signal.status, name).toBe(404);
    }
    expect(await instanceIds()).toEqual(before);
  });
});

describe("an orchestration's input", () => {
  const start = (name: string, id: string, input: unknown) => fetch(`${webhooks}orchestrators/${name}/${id}`, { method: "POST", body: JSON.stringify(input) });
  const finished = (id: string) =>
    within(20_000, async () => {
      const status = (await (await fetch(`${webhooks}instances/${id}`)).json()) as { runtimeStatus: string; output: unknown };
      return ["Failed", "Completed"].includes(status.runtimeStatus) ? status : undefined;
    });

  it("that sets a pacing no host would (a retry every millisecond) fails the instance once, with the reason, instead of looping", async () => {
    const input = { postId: "p1", sourceLsn: 1, dueAt: new Date().toISOString(), policy: { failureBackoffMs: 1, activityAttempts: 1 } };
    expect((await start("refreshFeedCopy", "spin", input)).status).toBe(202);
    const { value } = await finished("spin");
    expect(value.runtimeStatus).toBe("Failed");
    expect(JSON.stringify(value.output)).toMatch(/refreshFeedCopy refuses its input: policy.failureBackoffMs: .*got 1/);
  });

  it("that names a live account makes the erasure fail once, saying why, and erases nothing", async () => {
    expect((await app.call("POST", "/users", { as: "alive", body: { username: "alive" } })).status).toBe(201);
    const post = (await app.call("POST", "/posts", { as: "alive", body: { title: "still here", content: "and staying" } })).body as { postId: string };
    expect((await start("eraseAccount", "erase-live", { userId: "alive" })).status).toBe(202);
    const { value } = await finished("erase-live");
    expect(value.runtimeStatus).toBe("Failed");
    expect(JSON.stringify(value.output)).toMatch(/no erasure was asked for the account 'alive'/);
    expect((await app.call("GET", `/posts/${post.postId}`)).status).toBe(200);
    const profile = await app.call("GET", "/users/alive");
    expect(profile.status).toBe(200);
    expect(JSON.stringify(profile.body)).not.toContain("completedDate");
  });

  it("that no activity could act on (no post id, an unknown policy field) fails the instance once", async () => {
    for (const [id, input] of [
      ["no-post", { sourceLsn: 1, dueAt: new Date().toISOString() }],
      ["odd-policy", { userId: "alice", policy: { loops: 1 } }],
    ] as const) {
      expect((await start(id === "no-post" ? "refreshFeedCopy" : "releaseOrphanedUsernames", id, input)).status).toBe(202);
      const { value } = await finished(id);
      expect(value.runtimeStatus, id).toBe("Failed");
      expect(JSON.stringify(value.output), id).toMatch(/refuses its input/);
    }
  });
});
