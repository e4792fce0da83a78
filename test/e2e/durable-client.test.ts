import { request } from "node:http";
import * as df from "durable-functions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DurableHost } from "../../local/host/durable/host";
import { DURABLE_API_PATH, durableClient } from "../../local/host/durable/http-api";
import { createHttpServer } from "../../local/host/http-server";
import { localSystem, within, type Client } from "../support/system";

/**
 * The package's own DurableClient (what df.getClient(context) returns) against the local host's
 * Durable Functions HTTP API: the calls code written for Azure makes, unchanged.
 */
let app: Client;
let client: ReturnType<typeof durableClient>;
let base: string;
beforeAll(async () => {
  app = await localSystem();
  base = app.system.url.replace(/\/api$/, "");
  client = durableClient(base);
});
afterAll(() => app.stop());

describe("the package's DurableClient on the local host", () => {
  it("starts, reads and lists instances, and throws its 404 error for an unknown one", async () => {
    const id = await client.startNew("releaseOrphanedUsernames", { instanceId: "client-started", input: { userId: "nobody" } });
    expect(id).toBe("client-started");
    const status = await within(10_000, async () => {
      const now = await client.getStatus(id, { showHistory: true });
      return now.runtimeStatus === df.OrchestrationRuntimeStatus.Completed ? now : undefined;
    });
    expect(status.value).toMatchObject({ name: "releaseOrphanedUsernames", instanceId: id, input: { userId: "nobody" }, output: { released: 0 } });
    expect(Array.isArray(status.value.history)).toBe(true);
    expect((await client.getStatusBy({ runtimeStatus: [df.OrchestrationRuntimeStatus.Completed] })).map((s) => s.instanceId)).toContain(id);
    await expect(client.getStatus("no-such-instance")).rejects.toThrow(/404/);
  });

  it("raises events, terminates and purges through the API, and answers a finished instance 410 (ignored by the client)", async () => {
    const id = await client.startNew("releaseOrphanedUsernames", { instanceId: "to-purge", input: { userId: "nobody" } });
    await within(10_000, async () => (await client.getStatus(id)).runtimeStatus === df.OrchestrationRuntimeStatus.Completed);
    await client.raiseEvent(id, "late", { too: "late" });
    await client.terminate(id, "done anyway");
    expect(await client.purgeInstanceHistory(id)).toMatchObject({ instancesDeleted: 1 });
    await expect(client.getStatus(id)).rejects.toThrow(/404/);
    await expect(client.raiseEvent("no-such-instance", "x", 1)).rejects.toThrow(/No instance/);
  });

  it("is what the pipeline starts its orchestrations through: a rename starts a propagation seen by the client", async () => {
    await app.call("POST", "/users", { as: "client-user", body: { username: "client-user" } });
    await app.call("PUT", "/users/client-user", { as: "client-user", body: { username: "client-user-2" } });
    await within(10_000, async () => (await client.getStatusAll()).some((s) => s.name === "propagateUsername" && (s.input as { userId?: string }).userId === "client-user"));
  });

  it("answers loopback callers only", async () => {
    // Even where LOCAL_ALLOWED_HOSTS lets other host names reach the API.
    const open = await localSystem({ allowedHosts: ["*"] });
    try {
      const url = new URL(`${open.system.url.replace(/\/api$/, DURABLE_API_PATH)}instances/`);
      const status = await new Promise<number>((resolve, reject) =>
        request({ host: "127.0.0.1", port: url.port, path: url.pathname, headers: { host: "blog.example" } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        }).on("error", reject).end(),
      );
      expect(status).toBe(403);
    } finally {
      await open.stop();
    }
  });
});

describe("the package's DurableClient with an orchestration of the user's own", () => {
  it("suspends an instance (what it is sent waits) and resumes it, and raises the event it waits for", async () => {
    function* approval(context: df.OrchestrationContext) {
      const answer = yield context.df.waitForExternalEvent("answer");
      return { answer };
    }
    const durable = new DurableHost({ orchestrations: { approval }, activities: {} });
    const server = createHttpServer([], { log: () => {}, durable });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const own = durableClient(`http://localhost:${(server.address() as { port: number }).port}`);
    try {
      const id = await own.startNew("approval", { input: "a string input" });
      await within(10_000, async () => (await own.getStatus(id)).runtimeStatus === df.OrchestrationRuntimeStatus.Running);
      await own.suspend(id, "on hold");
      await own.raiseEvent(id, "answer", "yes");
      expect((await own.getStatus(id)).runtimeStatus).toBe("Suspended");
      await own.resume(id, "go on");
      const done = await within(10_000, async () => {
        const now = await own.getStatus(id);
        return now.runtimeStatus === df.OrchestrationRuntimeStatus.Completed ? now : undefined;
      });
      expect(done.value).toMatchObject({ input: "a string input", output: { answer: "yes" } });
    } finally {
      await durable.stop();
      server.close();
    }
  });
});
