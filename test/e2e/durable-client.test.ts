import { mkdtempSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HttpRequest } from "@azure/functions";
import * as df from "durable-functions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { announceHostName, createHttpServer, DURABLE_API_PATH, durableClient, DurableHost, fileInstanceStore, ManualClock } from "local-host";
import { durableFunctions, type EntityHandler } from "../support/local-host";
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
    // The API answers 410 Gone; the package's client takes that as done, as it does against Azure.
    const gone = await fetch(`${base}${DURABLE_API_PATH}instances/${id}/raiseEvent/late`, {
      method: "POST",
      body: "{}",
      headers: { "content-type": "application/json" },
    });
    expect(gone.status).toBe(410);
    await client.raiseEvent(id, "late", { too: "late" });
    await client.terminate(id, "done anyway");
    expect(await client.purgeInstanceHistory(id)).toMatchObject({ instancesDeleted: 1 });
    await expect(client.getStatus(id)).rejects.toThrow(/404/);
    await expect(client.raiseEvent("no-such-instance", "x", 1)).rejects.toThrow(/No instance/);
  });

  it("is what the pipeline starts its orchestrations through: a rename starts a propagation seen by the client", async () => {
    await app.call("POST", "/users", { as: "client-user", body: { username: "client-user" } });
    await app.call("PUT", "/users/client-user", { as: "client-user", body: { username: "client-user-2" } });
    await within(10_000, async () =>
      (await client.getStatusAll()).some((s) => s.name === "propagateUsername" && (s.input as { userId?: string }).userId === "client-user"),
    );
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
        })
          .on("error", reject)
          .end(),
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
    const durable = new DurableHost({ functions: durableFunctions({ orchestrations: { approval } }) });
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

/** Orchestrations, an activity and an entity of a user's own, written as the package's samples write them. */
function* approval(context: df.OrchestrationContext) {
  const answer = yield context.df.waitForExternalEvent("answer");
  return { input: context.df.getInput(), answer };
}
function* flaky(context: df.OrchestrationContext) {
  return yield context.df.callActivity("sometimesDown", context.df.getInput());
}
function* tally(context: df.OrchestrationContext) {
  const counter = new df.EntityId("counter", context.df.getInput<string>());
  yield context.df.callEntity(counter, "add", 5);
  context.df.signalEntity(counter, "add", 10);
  const child = yield context.df.callSubOrchestrator("approval", "child input", `${context.df.instanceId}-child`);
  return { child, count: yield context.df.callEntity(counter, "get") };
}
const counter = (context: df.EntityContext<number>) => {
  const value = context.df.getState(() => 0) ?? 0;
  if (context.df.operationName === "add") context.df.setState(value + context.df.getInput<number>()!);
  else context.df.return(value);
};

describe.each([{ rpc: true }, { rpc: false }])("the package's DurableClient (rpcBaseUrl: %o.rpc) over the local Durable Functions API", ({ rpc }) => {
  let down = true;
  const clock = new ManualClock();
  const dir = mkdtempSync(join(tmpdir(), "durable-api-"));

  /** A durable host on the file store in `dir`, behind the local HTTP server, and the package's client for it. */
  async function serve() {
    const durable = new DurableHost({
      functions: durableFunctions({
        orchestrations: { approval, flaky, tally },
        activities: {
          sometimesDown: async (input: unknown) => {
            if (down) throw new Error("down");
            return input;
          },
        },
        entities: { counter } as Record<string, EntityHandler>,
      }),
      clock,
      store: fileInstanceStore(dir),
    });
    durable.resume();
    const server = createHttpServer([], { log: () => {}, durable });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as { port: number };
    announceHostName(port);
    const origin = `http://127.0.0.1:${port}`;
    return { durable, origin, client: durableClient(origin, { rpc }), stop: async () => (await durable.stop(), server.close()) };
  }
  let host: Awaited<ReturnType<typeof serve>>;
  beforeAll(async () => (host = await serve()));
  afterAll(() => host.stop());

  it("starts instances with inputs of every JSON type and reads them back unchanged", async () => {
    for (const input of ["42", "text", 7, false, null, [1, { a: "ü" }], { nested: { list: [] } }]) {
      const id = await host.client.startNew("approval", { input });
      await host.client.raiseEvent(id, "answer", input);
      await host.durable.settled();
      expect(await host.client.getStatus(id), JSON.stringify(input)).toMatchObject({ runtimeStatus: "Completed", input, output: { input, answer: input } });
    }
  });

  it("answers with createCheckStatusResponse links that work: status, raise event, terminate, purge", async () => {
    const id = await host.client.startNew("approval", { instanceId: `links-${rpc}`, input: "to approve" });
    const response = host.client.createCheckStatusResponse(new HttpRequest({ url: `${host.origin}/api/approve`, method: "POST" }), id);
    const links = (await response.json()) as Record<string, string>;
    expect(response.status).toBe(202);
    expect((await fetch(links.statusQueryGetUri)).status).toBe(202); // running
    const raised = await fetch(links.sendEventPostUri.replace("{eventName}", "answer"), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify("yes"),
    });
    expect(raised.status).toBe(202);
    await host.durable.settled();
    const done = await fetch(links.statusQueryGetUri);
    expect(done.status).toBe(200);
    expect(await done.json()).toMatchObject({ runtimeStatus: "Completed", output: { answer: "yes" } });
    expect(await (await fetch(links.purgeHistoryDeleteUri, { method: "DELETE" })).json()).toEqual({ instancesDeleted: 1 });
    const other = await host.client.startNew("approval", {});
    const otherLinks = host.client.createHttpManagementPayload(other);
    expect((await fetch(otherLinks.terminatePostUri.replace("{text}", "no%20longer"), { method: "POST" })).status).toBe(202);
    expect(await host.client.getStatus(other)).toMatchObject({ runtimeStatus: "Terminated", output: "no longer" });
  });

  it("starts and waits, as createAndWaitOnNewInstancePostUri asks: the output if it finishes in time, else the links", async () => {
    down = false;
    const start = (name: string, seconds: number) =>
      fetch(`${host.origin}/runtime/webhooks/durabletask/orchestrators/${name}?timeout=${seconds}&pollingInterval=0.02`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ quick: true }),
      });
    const quick = await start("flaky", 30);
    expect(quick.status).toBe(200);
    expect(await quick.json()).toEqual({ quick: true });
    const slow = await start("approval", 0.1); // waits for an event that never comes
    expect(slow.status).toBe(202);
    expect(await slow.json()).toMatchObject({ statusQueryGetUri: expect.stringContaining("/instances/") });
  });

  it("queries by status and creation time, a page at a time, and purges by filter", async () => {
    const from = clock.now();
    clock.advance(1000);
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push(await host.client.startNew("approval", { instanceId: `query-${rpc}-${i}` }));
    const running = await host.client.getStatusBy({ createdTimeFrom: new Date(from.getTime() + 1), runtimeStatus: [df.OrchestrationRuntimeStatus.Running] });
    expect(running.map((s) => s.instanceId).sort()).toEqual(ids);
    // Pages as the client follows them: top per page, then the continuation token.
    const pages: string[][] = [];
    let token: string | null = null;
    do {
      const page: Response = await fetch(
        `${host.origin}/runtime/webhooks/durabletask/instances/?runtimeStatus=Running&createdTimeFrom=${encodeURIComponent(new Date(from.getTime() + 1).toISOString())}&top=2`,
        { headers: token ? { "x-ms-continuation-token": token } : {} },
      );
      pages.push(((await page.json()) as { instanceId: string }[]).map((s) => s.instanceId));
      token = page.headers.get("x-ms-continuation-token");
    } while (token);
    expect(pages.map((p) => p.length)).toEqual([2, 2, 1]);
    expect(pages.flat()).toEqual(ids);
    for (const id of ids.slice(0, 3)) await host.client.terminate(id, "done");
    const purged = await host.client.purgeInstanceHistoryBy({
      createdTimeFrom: new Date(from.getTime() + 1),
      runtimeStatus: [df.OrchestrationRuntimeStatus.Terminated],
    });
    expect(purged.instancesDeleted).toBe(3);
    expect((await host.client.getStatusBy({ createdTimeFrom: new Date(from.getTime() + 1) })).map((s) => s.instanceId)).toEqual(ids.slice(3));
    expect(
      (await host.client.purgeInstanceHistoryBy({ createdTimeFrom: new Date(from.getTime() + 1), runtimeStatus: [df.OrchestrationRuntimeStatus.Terminated] }))
        .instancesDeleted,
    ).toBe(0);
  });

  it("rewinds an instance a failed activity failed; refuses one that is running", async () => {
    down = true;
    const id = await host.client.startNew("flaky", { input: { try: 1 } });
    await host.durable.settled();
    expect((await host.client.getStatus(id)).runtimeStatus).toBe("Failed");
    down = false;
    await host.client.rewind(id, "the service is back");
    await host.durable.settled();
    expect(await host.client.getStatus(id)).toMatchObject({ runtimeStatus: "Completed", output: { try: 1 } });
    const running = await host.client.startNew("approval", {});
    await expect(host.client.rewind(running, "why")).rejects.toThrow(/Running/);
  });

  it("signals, reads and lists entities; an orchestration calls and signals one and runs a child, across a host restart", async () => {
    const key = `k-${rpc}`;
    await host.client.signalEntity(new df.EntityId("counter", key), "add", 1);
    const id = await host.client.startNew("tally", { input: key });
    await host.durable.settled(); // the entity has its calls; the child waits for its event
    expect((await host.client.readEntityState<number>(new df.EntityId("counter", key))).entityState).toBe(16);
    expect((await host.client.readEntityState(new df.EntityId("counter", "never"))).entityExists).toBe(false);

    // The host stops while the child waits; an event for it arrives at the new host, which finds parent and child where they were.
    await host.stop();
    host = await serve();
    await host.client.raiseEvent(`${id}-child`, "answer", "after the restart");
    await host.durable.settled();
    expect(await host.client.getStatus(id)).toMatchObject({
      runtimeStatus: "Completed",
      output: { child: { input: "child input", answer: "after the restart" }, count: 16 },
    });
    const listed = await (await fetch(`${host.origin}/runtime/webhooks/durabletask/entities/counter?fetchState=true`)).json();
    expect(listed).toContainEqual({ entityId: { name: "counter", key }, lastOperationTime: expect.any(String), state: 16 });
  });
});
