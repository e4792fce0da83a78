import { join } from "node:path";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { clientBindingData, createHttpServer, DurableHost, loadFunctionApp, ManualClock, TimerHost, type FunctionApp } from "../../src";

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
let seen: { notes: unknown[]; hooks: string[]; timers: unknown[] };

beforeAll(async () => {
  app = await loadFunctionApp(entry, {
    settings: (name) => ({ NOTES_DATABASE: "notebook", NIGHTLY_SCHEDULE: "0 0 3 * * *" })[name],
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
  it("is served from its registrations: HTTP routes with methods and auth levels, a change feed trigger with its settings resolved and its retry policy, a timer with its schedule resolved, durable functions", () => {
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
    expect(app.timers.map(({ name, schedule, runOnStartup }) => ({ name, schedule, runOnStartup }))).toEqual([
      { name: "nightly", schedule: "0 0 3 * * *", runOnStartup: false },
    ]);
    expect(app.unserved).toEqual(["inbox (queueTrigger)"]);
  });

  it("runs a timer function on its NCRONTAB schedule, in UTC, with the timer the programming model gives it (past due when late)", async () => {
    const clock = new ManualClock("2026-01-01T00:00:00.000Z");
    const timers = new TimerHost(app.timers, clock);
    timers.start();
    clock.advance(3 * 60 * 60 * 1000 - 1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen.timers).toEqual([]);
    clock.advance(1);
    await vi.waitFor(() => expect(seen.timers).toEqual([{ schedule: { adjustForDST: true }, scheduleStatus: null, isPastDue: false }]));
    // The next night's run knows the last one.
    clock.advance(24 * 60 * 60 * 1000);
    await vi.waitFor(() => expect(seen.timers).toHaveLength(2));
    expect(seen.timers[1]).toEqual({
      schedule: { adjustForDST: true },
      scheduleStatus: { last: "2026-01-01T03:00:00.000Z", next: "2026-01-03T03:00:00.000Z", lastUpdated: "2026-01-02T03:00:00.000Z" },
      isPastDue: false,
    });
    await timers.stop();
    clock.advance(24 * 60 * 60 * 1000);
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen.timers).toHaveLength(2);
  });

  it("refuses a schedule it cannot run, naming the function: a TimeSpan (dedicated plans only), too few fields, a bad field", () => {
    const clock = new ManualClock();
    const invoke = async () => {};
    expect(() => new TimerHost([{ name: "t", schedule: "00:05:00", runOnStartup: false, invoke }], clock)).toThrow(/t: schedule '00:05:00' is a TimeSpan/);
    expect(() => new TimerHost([{ name: "t", schedule: "*/5 * * * *", runOnStartup: false, invoke }], clock)).toThrow(/six fields/);
    expect(() => new TimerHost([{ name: "t", schedule: "0 0 25 * * *", runOnStartup: false, invoke }], clock)).toThrow(
      /t: schedule '0 0 25 \* \* \*' is not an NCRONTAB expression/,
    );
  });

  it("answers HTTP through the programming model: route parameters (optional, catch-all), query, cookies, bodies, 405, the function's log and its hooks", async () => {
    const greeting = await fetch(`${base}/greet/ann?q=1`);
    expect(greeting.status).toBe(200);
    expect(await greeting.json()).toEqual({ greeting: "hello ann", query: "1" });
    expect(greeting.headers.get("set-cookie")).toMatch(/^seen=1; .*httponly/i);
    expect(await (await fetch(`${base}/greet`)).json()).toMatchObject({ greeting: "hello you" });
    const wrongMethod = await fetch(`${base}/greet/ann`, { method: "POST" });
    // RFC 9457 4.2.1: a problem that says no more than its status has the type about:blank.
    expect([wrongMethod.status, await wrongMethod.json()]).toEqual([405, expect.objectContaining({ type: "about:blank", title: "Method Not Allowed" })]);
    const echo = await fetch(`${base}/files/a/b.txt`, { method: "POST", body: "x" });
    expect([echo.status, await echo.text()]).toEqual([201, "a/b.txt:x"]);
    expect(logs).toContain("[greet] information: greeting ann");
    expect(seen.hooks).toEqual(expect.arrayContaining(["pre greet", "post greet", "pre echo", "post echo"]));
  });

  it("delivers a batch to the change feed trigger with its durable client bound, and a failed batch rejects after the post-invocation hooks saw it", async () => {
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
