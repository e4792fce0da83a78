import { join } from "node:path";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clientBindingData, createHttpServer, DurableHost, loadFunctionApp, type FunctionApp } from "../../src";

/**
 * The local host serves an app from what it registers through `@azure/functions-core`, as the
 * Functions host and its Node.js worker do, knowing nothing of the app: here an app of another
 * domain (test/support/greetings-app, in this package), with its routes, trigger settings, retry policy, hooks
 * and durable functions.
 */
const entry = join(__dirname, "../support/greetings-app/index");
const logs: string[] = [];
let app: FunctionApp;
let server: Server;
let base: string;
/** What the app saw, from the app's own module (loaded by the host first: loaded before, it would have registered nothing). */
let seen: { notes: unknown[]; hooks: string[] };

beforeAll(async () => {
  app = await loadFunctionApp(entry, {
    settings: (name) => (name === "NOTES_DATABASE" ? "notebook" : undefined),
    durableClient: () => clientBindingData("http://127.0.0.1:9"),
    log: (name, level, message) => logs.push(`[${name}] ${level}: ${message}`),
  });
  ({ seen } = (await import("../support/greetings-app/index")) as { seen: typeof seen });
  server = createHttpServer(app.http, { log: () => {} });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe("an app loaded through the worker's API", () => {
  it("is served from its registrations: HTTP routes with methods and auth levels, a Cosmos DB trigger with its settings resolved and its retry policy, durable functions", () => {
    expect(app.http.map(({ name, route, methods, authLevel }) => ({ name, route, methods, authLevel }))).toEqual([
      { name: "greet", route: "greet/{name?}", methods: ["GET"], authLevel: "function" },
      { name: "echo", route: "files/{*path}", methods: ["POST"], authLevel: "anonymous" },
    ]);
    const [trigger] = app.cosmosDBTriggers;
    expect({ ...trigger, invoke: undefined }).toEqual({
      name: "notesChanged",
      connection: "NOTES",
      databaseName: "notebook",
      containerName: "notes",
      leaseContainerName: "note-leases",
      leaseContainerPrefix: "notes-",
      startFromBeginning: false,
      feedPollDelayMs: 5000,
      retry: { minimumIntervalMs: 3000, maximumIntervalMs: 3000, maxRetryCount: 2 },
      leaseTiming: { expirationMs: 30_000, renewMs: 10_000 },
      invoke: undefined,
    });
    expect([...app.durable.orchestrations.keys()]).toEqual(["greetTwice"]);
    expect([...app.durable.activities.keys()]).toEqual(["shout"]);
    expect([...app.durable.entities.keys()]).toEqual(["tally"]);
    // A trigger type this host does not run is named, not silently dropped.
    expect(app.unserved).toEqual(["nightly (timerTrigger)"]);
  });

  it("answers HTTP through the programming model: route parameters (optional, catch-all), query, cookies, bodies, 405, the function's log and its hooks", async () => {
    const greeting = await fetch(`${base}/greet/ann?q=1`);
    expect(greeting.status).toBe(200);
    expect(await greeting.json()).toEqual({ greeting: "hello ann", query: "1" });
    expect(greeting.headers.get("set-cookie")).toMatch(/^seen=1; .*httponly/i);
    expect(await (await fetch(`${base}/greet`)).json()).toMatchObject({ greeting: "hello you" });
    expect((await fetch(`${base}/greet/ann`, { method: "POST" })).status).toBe(405);
    const echo = await fetch(`${base}/files/a/b.txt`, { method: "POST", body: "x" });
    expect([echo.status, await echo.text()]).toEqual([201, "a/b.txt:x"]);
    expect(logs).toContain("[greet] information: greeting ann");
    expect(seen.hooks).toEqual(expect.arrayContaining(["pre greet", "post greet", "pre echo", "post echo"]));
  });

  it("delivers a batch to the Cosmos DB trigger with its durable client bound, and a failed batch rejects after the post-invocation hooks saw it", async () => {
    await app.cosmosDBTriggers[0].invoke([{ id: "n1" }]);
    expect(seen.notes).toEqual([{ id: "n1" }]);
    await expect(app.cosmosDBTriggers[0].invoke([{ id: "n2", fail: true }])).rejects.toThrow(/a note that fails/);
    expect(seen.hooks).toContain("post notesChanged failed");
  });

  it("runs its orchestrations, activities and entities in the durable host", async () => {
    const durable = new DurableHost({ functions: app.durable });
    try {
      const id = await durable.startNew("greetTwice", { input: "ann" });
      durable.entities.signal("tally", "k", "add", 2);
      durable.entities.signal("tally", "k", "add", 3);
      await durable.waitForIdle(20_000);
      await durable.entities.idle();
      expect((await durable.getStatus(id))?.output).toEqual(["HELLO ANN", "BYE ANN"]);
      expect(durable.entities.readState("tally", "k")).toEqual({ entityExists: true, entityState: 5 });
    } finally {
      await durable.stop();
    }
  });

  it("runs its appStart hooks when started, and refuses a trigger setting that resolves to nothing, naming it", async () => {
    await app.start();
    expect(seen.hooks).toContain("appStart");
    await expect(loadFunctionApp(entry, { settings: () => undefined, durableClient: () => ({}), log: () => {} })).rejects.toThrow(
      /notesChanged: '%NOTES_DATABASE%' does not resolve to a value/,
    );
  });
});
