import { execFileSync } from "node:child_process";
import { CosmosClient } from "@azure/cosmos";
import { devToken, LOCAL_DEV_SECRET } from "../../local/dev-auth";
import { describe, expect, it } from "vitest";
import { alive, exitWithin, injectedFaults, runHost, START_SCRIPT } from "../../chaos/host";
import { within } from "../support/system";

const DEV_SECRET = { AUTH_DEV_SECRET: "a-dev-secret-of-at-least-thirty-two-characters" };

describe("the local host as a process", () => {
  it("fails fast, naming the endpoint, when COSMOS_ENDPOINT is unreachable, with a key or without one", async () => {
    for (const key of [{ COSMOS_KEY: "a2V5" }, {}]) {
      const host = runHost("node", [START_SCRIPT], { COSMOS_ENDPOINT: "http://127.0.0.1:9/", ...key, ...DEV_SECRET });
      expect(await exitWithin(host, 20_000)).toBe(1);
      expect(host.output()).toMatch(/Cosmos DB at http:\/\/127\.0\.0\.1:9\/ is unreachable/);
      expect(host.output()).not.toMatch(/ready/);
    }
  });

  it("honours the app settings with the embedded server as with an account: database, soft-delete TTL, throttling wait", async () => {
    const host = runHost("node", [START_SCRIPT, "--in-memory"], { COSMOS_DATABASE: "journal", SOFT_DELETE_TTL_SECONDS: "77" });
    try {
      const { url, cosmosEndpoint, cosmosKey } = await host.ready;
      const client = new CosmosClient({ endpoint: cosmosEndpoint, key: cosmosKey!, connectionPolicy: { enableEndpointDiscovery: false } });
      const { resources: databases } = await client.databases.readAll().fetchAll();
      expect(databases.map((d) => d.id)).toEqual(["journal"]);
      const authorization = `Bearer ${await devToken("ttl-writer", LOCAL_DEV_SECRET)}`;
      const headers = { authorization, "content-type": "application/json" };
      await fetch(`${url}/users`, { method: "POST", headers, body: JSON.stringify({ username: "ttlwriter" }) });
      const post = (await (await fetch(`${url}/posts`, { method: "POST", headers, body: JSON.stringify({ title: "t", content: "c" }) })).json()) as {
        postId: string;
      };
      expect((await fetch(`${url}/posts/${post.postId}`, { method: "DELETE", headers })).status).toBe(204);
      const { resource } = await client.database("journal").container("posts").item(post.postId, post.postId).read<{ ttl?: number }>();
      expect(resource?.ttl).toBe(77);
      client.dispose();
    } finally {
      host.child.kill("SIGINT");
      await exitWithin(host, 15_000);
    }
    // Every point read of a profile is throttled: with no retry wait, the SDK gives up after the first.
    const throttled = runHost("node", [START_SCRIPT, "--in-memory", "--faults", "429=100:1@read/users"], { COSMOS_MAX_RETRY_WAIT_SECONDS: "0" });
    try {
      const { url, cosmosEndpoint } = await throttled.ready;
      const before = await injectedFaults(cosmosEndpoint);
      expect((await fetch(`${url}/users/someone`)).status).toBe(429);
      expect((await injectedFaults(cosmosEndpoint)) - before).toBe(1);
    } finally {
      throttled.child.kill("SIGINT");
      await exitWithin(throttled, 15_000);
    }
  });

  it("Ctrl-C drains: the request in flight is answered, new ones are refused, and it exits 0 within 5 s", async () => {
    // Every point read takes 1.5 s, so a GET is surely in flight when Ctrl-C arrives.
    const host = runHost("node", [START_SCRIPT, "--in-memory", "--faults", "latency=1500:1@read"]);
    const { url, cosmosEndpoint } = await host.ready;
    const inFlight = fetch(`${url}/users/nobody`);
    // In flight: its read has reached the Cosmos DB server, which holds it for 1.5 s.
    await within(10_000, async () => (await injectedFaults(cosmosEndpoint)) >= 1);
    host.child.kill("SIGINT");
    await within(10_000, async () => /Stopping \(SIGINT/.test(host.output()));
    const late = await fetch(`${url}/users/nobody`).then(
      (r) => r.status,
      () => "refused",
    );
    expect([503, "refused"]).toContain(late);
    expect((await inFlight).status).toBe(404);
    expect(await exitWithin(host, 15_000)).toBe(0);
    // Drained, not cut off by the 5 s deadline.
    expect(host.output()).toMatch(/Stopped: drained cleanly/);
    expect(host.output()).not.toMatch(/still stopping after/);
  });

  it("a second Ctrl-C exits at once", async () => {
    const host = runHost("node", [START_SCRIPT, "--in-memory", "--faults", "latency=3000:1@read"]);
    const { url, cosmosEndpoint } = await host.ready;
    void fetch(`${url}/users/nobody`).catch(() => undefined);
    await within(10_000, async () => (await injectedFaults(cosmosEndpoint)) >= 1);
    host.child.kill("SIGINT");
    // The first Ctrl-C's signals are past (a terminal and npm each send one): the host says another exits at once.
    await within(10_000, async () => /Ctrl-C again to exit at once/.test(host.output()));
    host.child.kill("SIGINT");
    expect(await exitWithin(host, 10_000)).toBe(130);
    expect(host.output()).toMatch(/SIGINT again: exiting now/);
    expect(host.output()).not.toMatch(/Stopped: drained cleanly/);
  });

  it("npm start leaves no orphaned process when npm itself is killed", async () => {
    const npm = runHost("npm", ["start", "--silent", "--", "--in-memory"], {}, { detached: true });
    await npm.ready;
    const children = execFileSync("ps", ["-o", "pid=", "--ppid", String(npm.child.pid)])
      .toString()
      .trim()
      .split(/\s+/)
      .map(Number);
    expect(children.length).toBeGreaterThan(0);
    npm.child.kill("SIGKILL");
    const deadline = Date.now() + 15_000;
    while (children.some(alive) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(children.filter(alive)).toEqual([]);
  });
});
