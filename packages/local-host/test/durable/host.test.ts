import { mkdtempSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import * as df from "durable-functions";
import type { EntityContext, OrchestrationContext, OrchestrationHandler } from "durable-functions";
import { DurableHost, fileInstanceStore, ManualClock } from "../../src";
import { durableFunctions, type ActivityHandler, type EntityHandler } from "../support/durable-functions";

/**
 * The local durable host: the durable-functions package's own replay engine over a history kept
 * here. Each host in these tests runs on a manual clock: time moves when a test moves it, so no
 * test sleeps to order events. Longer than most files for a reason: it mirrors host.ts, one
 * describe per pattern the host runs, sharing its helpers (the host, the drive loop).
 */
const clocks = new WeakMap<DurableHost, ManualClock>();
const host = (
  orchestrations: Record<string, OrchestrationHandler>,
  activities: Record<string, ActivityHandler>,
  dataDir?: string,
  entities?: Record<string, EntityHandler>,
) => {
  const clock = new ManualClock();
  const durable = new DurableHost({
    functions: durableFunctions({ orchestrations, activities, entities }),
    clock,
    store: dataDir ? fileInstanceStore(dataDir) : undefined,
  });
  clocks.set(durable, clock);
  return durable;
};

/** Runs the host until only the outside (an event, a client) could move an instance: each armed timer fired by moving its clock. */
async function drive(durable: DurableHost): Promise<void> {
  for (;;) {
    await durable.settled();
    if (!clocks.get(durable)!.advanceToNext()) return;
  }
}

/** A promise that resolves when `signal` is called: an activity telling the test it has started. */
function started(): { signal: () => void; reached: Promise<void> } {
  let signal!: () => void;
  const reached = new Promise<void>((resolve) => (signal = resolve));
  return { signal, reached };
}

const retry = (attempts: number) => new df.RetryOptions(10, attempts);

describe("local durable host", () => {
  it("replays the orchestrator from its history on every episode, with inputs and results through JSON", async () => {
    let episodes = 0;
    const seen: unknown[] = [];
    function* greet(context: OrchestrationContext) {
      episodes++;
      const input = context.df.getInput<{ when: string; names: string[] }>();
      const first = yield context.df.callActivity("hello", { name: input.names[0], at: new Date(input.when) });
      const second = yield context.df.callActivity("hello", { name: input.names[1] });
      context.df.setCustomStatus({ greeted: 2, missing: undefined });
      return [first, second];
    }
    const durable = host({ greet }, { hello: async (input: { name: string; at?: unknown }) => (seen.push(input), `hello ${input.name}`) });
    const id = await durable.startNew("greet", { input: { when: "2026-01-01T00:00:00.000Z", names: ["a", "b"] } });
    await drive(durable);
    const status = await durable.getStatus(id, { showHistory: true });
    expect(status).toMatchObject({ runtimeStatus: "Completed", output: ["hello a", "hello b"], customStatus: { greeted: 2 } });
    // A Date in an activity input arrives as the string JSON makes of it, as it does in Azure.
    expect(seen[0]).toEqual({ name: "a", at: "2026-01-01T00:00:00.000Z" });
    expect(episodes).toBe(3); // start, and once per completed activity: each a replay from the beginning
    const types = status!.history!.map((e) => (e as { EventType: number }).EventType);
    expect(types.filter((t) => t === 4)).toHaveLength(2); // TaskScheduled
    expect(types.filter((t) => t === 5)).toHaveLength(2); // TaskCompleted
  });

  it("retries activities per RetryOptions inside a fan-out, timers and ids interleaved as the extension does", async () => {
    const failuresLeft: Record<string, number> = { a: 2, b: 0, c: 1, d: 3 };
    function* fanOut(context: OrchestrationContext) {
      return yield context.df.Task.all(["a", "b", "c", "d"].map((name) => context.df.callActivityWithRetry("flaky", retry(4), name)));
    }
    const durable = host(
      { fanOut },
      {
        flaky: async (name: string) => {
          if (failuresLeft[name]-- > 0) throw new Error(`${name} is down`);
          return name.toUpperCase();
        },
      },
    );
    const id = await durable.startNew("fanOut", {});
    await drive(durable);
    expect(await durable.getStatus(id)).toMatchObject({ runtimeStatus: "Completed", output: ["A", "B", "C", "D"] });
  });

  it("fails a task once its attempts are spent, and the orchestrator can catch it and wait on a durable timer", async () => {
    function* resilient(context: OrchestrationContext) {
      try {
        yield context.df.callActivityWithRetry("broken", retry(2), null);
        return "unexpected";
      } catch (error) {
        yield context.df.createTimer(new Date(context.df.currentUtcDateTime.getTime() + 30));
        return `recovered from: ${(error as Error).message}`;
      }
    }
    let calls = 0;
    const durable = host({ resilient }, { broken: async () => Promise.reject(new Error(`broken ${++calls}`)) });
    const id = await durable.startNew("resilient", {});
    await drive(durable);
    const status = await durable.getStatus(id, { showHistory: true });
    expect(calls).toBe(2);
    expect(status?.output).toMatch(/recovered from: .*broken 2/);
    const types = status!.history!.map((e) => (e as { EventType: number }).EventType);
    expect(types.filter((t) => t === 10)).toHaveLength(3); // two retry timers (the last one too) and the orchestrator's own
  });

  it("continues as new with a fresh history, keeping the instance id", async () => {
    function* counter(context: OrchestrationContext) {
      const n = context.df.getInput<number>();
      yield context.df.callActivity("tick", n);
      if (n < 5) context.df.continueAsNew(n + 1);
      return n;
    }
    const ticks: number[] = [];
    const durable = host({ counter }, { tick: async (n: number) => void ticks.push(n) });
    const id = await durable.startNew("counter", { instanceId: "count", input: 1 });
    await drive(durable);
    const status = await durable.getStatus(id, { showHistory: true });
    expect(status).toMatchObject({ instanceId: "count", runtimeStatus: "Completed", output: 5, input: 5 });
    expect(ticks).toEqual([1, 2, 3, 4, 5]);
    expect(status!.history!.length).toBeLessThan(10); // only the last execution's events
  });

  it("fails an instance whose orchestrator no longer replays its history (non-determinism), as on Azure", async () => {
    let version = 1;
    function* changing(context: OrchestrationContext) {
      yield context.df.callActivity(version === 1 ? "first" : "renamed", null);
      yield context.df.callActivity("second", null);
      return "done";
    }
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const first = started();
    const durable = host({ changing }, { first: () => (first.signal(), gate), renamed: async () => undefined, second: async () => undefined });
    const id = await durable.startNew("changing", {});
    await first.reached;
    version = 2; // a deployment changed the code while an instance was in flight
    release();
    await drive(durable);
    const status = await durable.getStatus(id);
    expect(status?.runtimeStatus).toBe("Failed");
    expect(String(status?.output)).toMatch(/Non-deterministic workflow detected/);
  });

  it("survives a restart of the host: finished tasks are not run again, the unanswered one is, timers fire late", async () => {
    const dir = mkdtempSync(join(tmpdir(), "durable-"));
    const runs: string[] = [];
    function* steps(context: OrchestrationContext) {
      const a = yield context.df.callActivity("step", "a");
      yield context.df.createTimer(new Date(context.df.currentUtcDateTime.getTime() + 200));
      const b = yield context.df.callActivity("step", "b");
      return [a, b];
    }
    let hang = true;
    const b = started();
    const step: ActivityHandler = async (name: string) => {
      runs.push(name);
      if (name === "b" && hang) await (b.signal(), new Promise(() => {})); // cut off by the restart
      return name;
    };
    const first = host({ steps }, { step }, dir);
    const id = await first.startNew("steps", { instanceId: "restartable" });
    await first.settled();
    expect(runs).toEqual(["a"]); // the timer holds "b" back until the clock passes it
    clocks.get(first)!.advance(200);
    await b.reached;
    expect(runs).toEqual(["a", "b"]);
    void first.stop();

    hang = false;
    const second = host({ steps }, { step }, dir);
    expect((await second.getStatus(id))?.runtimeStatus).toBe("Running");
    second.resume();
    await drive(second);
    expect(await second.getStatus(id)).toMatchObject({ runtimeStatus: "Completed", output: ["a", "b"] });
    expect(runs).toEqual(["a", "b", "b"]); // "a" was answered before the restart; "b" runs again (at least once)
  });

  it("manages instances as the durable client does: terminate, restart, purge; a running id cannot be started twice", async () => {
    function* waits(context: OrchestrationContext) {
      yield context.df.createTimer(new Date(context.df.currentUtcDateTime.getTime() + 60_000));
      return "woke";
    }
    function* quick() {
      return "quick";
    }
    const durable = host({ waits, quick: quick as OrchestrationHandler }, {});
    await durable.startNew("waits", { instanceId: "sleeper", input: { why: "test" } });
    await expect(durable.startNew("waits", { instanceId: "sleeper" })).rejects.toThrow(/already exists/);
    await durable.terminate("sleeper", "no longer needed");
    expect(await durable.getStatus("sleeper")).toMatchObject({ runtimeStatus: "Terminated", output: "no longer needed" });
    await durable.restart("sleeper");
    expect(await durable.getStatus("sleeper")).toMatchObject({ runtimeStatus: "Running", input: { why: "test" } });
    await durable.terminate("sleeper", "again");
    expect(await durable.purgeInstanceHistory("sleeper")).toBe(true);
    expect(await durable.getStatus("sleeper")).toBeUndefined();

    await durable.startNew("quick", { instanceId: "q" });
    await drive(durable);
    await durable.startNew("quick", { instanceId: "q" }); // a finished instance may be started again
    await drive(durable);
    expect(await durable.getStatus("q")).toMatchObject({ runtimeStatus: "Completed", output: "quick" });
    await durable.stop();
  });
});

describe("local durable host: nothing hangs silently", () => {
  it("fails an instance whose orchestrator asks for an action the host cannot carry out, naming it", async () => {
    function* locks(context: OrchestrationContext) {
      return yield context.df.lock([new df.EntityId("counter", "a")]);
    }
    const durable = host({ locks }, {});
    const id = await durable.startNew("locks");
    await drive(durable);
    const status = await durable.getStatus(id);
    expect(status?.runtimeStatus).toBe("Failed");
    // Critical sections need replay schema V4, which the extension bundle's Durable Functions
    // extension does not offer yet: the package refuses them, here as on Azure, a clear failure.
    expect(String(status?.output)).toMatch(/lock/i);
  });

  it("round-trips a string input as a string, as the package's client sends it (JSON)", async () => {
    function* echo(context: OrchestrationContext) {
      yield context.df.callActivity("same", context.df.getInput());
      return context.df.getInput();
    }
    const durable = host({ echo }, { same: async (input: unknown) => input });
    for (const input of ["hello", "42", "", "true"]) {
      const id = await durable.startNew("echo", { input });
      await drive(durable);
      expect(await durable.getStatus(id), JSON.stringify(input)).toMatchObject({ runtimeStatus: "Completed", input, output: input });
    }
  });
});

describe("local durable host: external events", () => {
  it("delivers an event to a wait, whether it is raised before or after the wait, several of one name in order", async () => {
    function* approvals(context: OrchestrationContext) {
      const first = yield context.df.waitForExternalEvent("approval");
      const second = yield context.df.waitForExternalEvent("approval");
      const note = yield context.df.waitForExternalEvent("note");
      return { first, second, note };
    }
    const durable = host({ approvals }, {});
    const id = await durable.startNew("approvals");
    await durable.settled();
    // "note" comes before anything waits for it: it is kept until the wait asks.
    await durable.raiseEvent(id, "note", "kept for later");
    await durable.raiseEvent(id, "approval", { by: "ann" });
    await durable.raiseEvent(id, "approval", { by: "ben" });
    await drive(durable);
    expect(await durable.getStatus(id)).toMatchObject({
      runtimeStatus: "Completed",
      output: { first: { by: "ann" }, second: { by: "ben" }, note: "kept for later" },
    });
    await expect(durable.raiseEvent(id, "approval")).rejects.toThrow(/Completed/);
    await expect(durable.raiseEvent("nobody", "approval")).rejects.toThrow(/No instance/);
  });

  it("races an event against a durable timer with Task.any: the first to come wins", async () => {
    function* deadline(context: OrchestrationContext) {
      const event = context.df.waitForExternalEvent("answer");
      const timer = context.df.createTimer(new Date(context.df.currentUtcDateTime.getTime() + context.df.getInput<number>()));
      const winner = yield context.df.Task.any([event, timer]);
      if (winner === event) {
        timer.cancel();
        return { answered: event.result };
      }
      return { answered: null };
    }
    const durable = host({ deadline }, {});
    const answered = await durable.startNew("deadline", { input: 60_000 });
    await durable.settled();
    await durable.raiseEvent(answered, "answer", 42);
    const timedOut = await durable.startNew("deadline", { input: 1000 });
    await durable.settled();
    expect(await durable.getStatus(timedOut)).toMatchObject({ runtimeStatus: "Running" }); // its timer has not come yet
    await drive(durable);
    expect(await durable.getStatus(answered)).toMatchObject({ runtimeStatus: "Completed", output: { answered: 42 } });
    expect(await durable.getStatus(timedOut)).toMatchObject({ runtimeStatus: "Completed", output: { answered: null } });
    await durable.stop();
  });
});

describe("local durable host: sub-orchestrations", () => {
  function* child(context: OrchestrationContext) {
    const input = context.df.getInput<{ n: number; fail?: boolean }>();
    const doubled = yield context.df.callActivity("double", input.n);
    if (input.fail) throw new Error(`child gave up at ${doubled}`);
    return doubled;
  }
  const double = async (n: number) => n * 2;

  it("runs a child with its input and hands its output back, with a given instance id or a derived one", async () => {
    function* parent(context: OrchestrationContext) {
      const a = yield context.df.callSubOrchestrator("child", { n: 2 }, "child-given-id");
      const b = yield context.df.callSubOrchestrator("child", { n: 5 });
      const text = yield context.df.callSubOrchestrator("echo", "a string");
      return { a, b, text };
    }
    function* echo(context: OrchestrationContext) {
      return context.df.getInput<string>();
    }
    const durable = host({ parent, child, echo }, { double });
    const id = await durable.startNew("parent");
    await drive(durable);
    expect(await durable.getStatus(id)).toMatchObject({ runtimeStatus: "Completed", output: { a: 4, b: 10, text: "a string" } });
    expect(await durable.getStatus("child-given-id")).toMatchObject({ runtimeStatus: "Completed", output: 4 });
    expect((await durable.queryInstances()).filter((i) => i.instanceId.startsWith(`${id}:`))).toHaveLength(2);
  });

  it("surfaces a child's failure to the parent as the error its task throws, and retries it with callSubOrchestratorWithRetry", async () => {
    let attempts = 0;
    function* flaky(context: OrchestrationContext) {
      const attempt = yield context.df.callActivity("count");
      if ((attempt as number) < 3) throw new Error(`attempt ${attempt} failed`);
      return `succeeded on attempt ${attempt}`;
    }
    function* parent(context: OrchestrationContext) {
      let caught = "";
      try {
        yield context.df.callSubOrchestrator("child", { n: 1, fail: true });
      } catch (error) {
        caught = (error as Error).message;
      }
      const retried = yield context.df.callSubOrchestratorWithRetry("flaky", retry(3));
      return { caught, retried };
    }
    const durable = host({ parent, child, flaky }, { double, count: async () => ++attempts });
    const id = await durable.startNew("parent");
    await drive(durable);
    const status = await durable.getStatus(id);
    expect(status?.runtimeStatus).toBe("Completed");
    expect((status?.output as { caught: string }).caught).toMatch(/child gave up at 2/);
    expect((status?.output as { retried: string }).retried).toBe("succeeded on attempt 3");
  });

  it("carries on across a host restart on the file store, with the parent waiting on a running child", async () => {
    const dir = mkdtempSync(join(tmpdir(), "durable-sub-"));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    function* parent(context: OrchestrationContext) {
      return yield context.df.callSubOrchestrator("child", { n: 21 });
    }
    const doubling = started();
    const first = new DurableHost({
      functions: durableFunctions({ orchestrations: { parent, child }, activities: { double: async () => (doubling.signal(), gate.then(() => 0)) } }),
      store: fileInstanceStore(dir),
    });
    const id = await first.startNew("parent");
    await doubling.reached; // the child runs its activity: both instances are recorded
    release();
    await first.stop();
    const second = host({ parent, child }, { double }, dir);
    second.resume();
    await drive(second);
    expect(await second.getStatus(id)).toMatchObject({ runtimeStatus: "Completed", output: 42 });
  });
});

describe("local durable host: durable entities", () => {
  /** A counter: add, get, fail; state kept by the host. */
  const counter = (context: EntityContext<number>) => {
    const value = context.df.getState(() => 0) ?? 0;
    switch (context.df.operationName) {
      case "add":
        context.df.setState(value + context.df.getInput<number>()!);
        break;
      case "get":
        context.df.return(value);
        break;
      case "fail":
        throw new Error("the counter refuses");
    }
  };
  const entityHost = (orchestrations: Record<string, OrchestrationHandler>, dataDir?: string) =>
    host(orchestrations, {}, dataDir, { counter } as Record<string, EntityHandler>);

  it("applies calls and signals from orchestrations one at a time, in order, and answers calls with results and errors", async () => {
    function* bump(context: OrchestrationContext) {
      const id = new df.EntityId("counter", "shared");
      for (let i = 0; i < 5; i++) yield context.df.callEntity(id, "add", 1);
      context.df.signalEntity(id, "add", 100);
      let refused = false;
      try {
        yield context.df.callEntity(id, "fail");
      } catch {
        // The package serializes an operation's Error as JSON, which keeps no message: only that it failed.
        refused = true;
      }
      const now = (yield context.df.callEntity(id, "get")) as number;
      return { now, refused };
    }
    const durable = entityHost({ bump });
    const ids = await Promise.all([durable.startNew("bump"), durable.startNew("bump")]);
    await drive(durable);
    await durable.entities.idle();
    // Two orchestrations, 10 adds of 1 and 2 signals of 100, none lost to a race.
    expect(durable.entities.readState("counter", "shared")).toEqual({ entityExists: true, entityState: 210 });
    for (const id of ids) {
      const status = await durable.getStatus(id);
      expect(status?.runtimeStatus).toBe("Completed");
      expect(status?.output).toMatchObject({ refused: true });
    }
  });

  it("takes signals from a client, and keeps entity state and queued operations across a restart", async () => {
    const dir = mkdtempSync(join(tmpdir(), "durable-entities-"));
    const first = entityHost({}, dir);
    first.entities.signal("counter", "k", "add", 7);
    await first.entities.idle();
    await first.stop();
    first.entities.signal("counter", "k", "add", 20); // arrives as the host stops: queued, not applied
    expect(first.entities.readState("counter", "k")).toEqual({ entityExists: true, entityState: 7 });
    const second = entityHost({}, dir);
    second.resume();
    second.entities.signal("counter", "k", "add", 3);
    await second.entities.idle();
    expect(second.entities.readState("counter", "k")).toEqual({ entityExists: true, entityState: 30 });
    expect(second.entities.readState("counter", "never")).toEqual({ entityExists: false, entityState: undefined });
  });
});

describe("local durable host: rewind", () => {
  it("runs again the activity whose failure failed the instance, and the instance completes", async () => {
    let attempts = 0;
    function* once(context: OrchestrationContext) {
      const first = yield context.df.callActivity("steady", "x");
      const second = yield context.df.callActivity("flaky", "y");
      return [first, second];
    }
    const calls: string[] = [];
    const durable = host(
      { once },
      {
        steady: async (input: string) => (calls.push(`steady ${input}`), input),
        flaky: async (input: string) => {
          calls.push(`flaky ${input}`);
          if (attempts++ === 0) throw new Error("down for now");
          return input.toUpperCase();
        },
      },
    );
    const id = await durable.startNew("once");
    await drive(durable);
    expect(await durable.getStatus(id)).toMatchObject({ runtimeStatus: "Failed", output: expect.stringMatching(/down for now/) });
    await durable.rewind(id);
    await drive(durable);
    expect(await durable.getStatus(id)).toMatchObject({ runtimeStatus: "Completed", output: ["x", "Y"] });
    expect(calls).toEqual(["steady x", "flaky y", "flaky y"]); // what had succeeded is not run again
  });

  it("gives a task whose retries were spent its last attempt again, and rewinds a failed child with its parent", async () => {
    let broken = true;
    function* child(context: OrchestrationContext) {
      return yield context.df.callActivityWithRetry("fragile", retry(2), context.df.getInput());
    }
    function* parent(context: OrchestrationContext) {
      return yield context.df.callSubOrchestrator("child", "payload", "the-child");
    }
    const durable = host(
      { parent, child },
      {
        fragile: async (input: string) => {
          if (broken) throw new Error("still broken");
          return `${input} done`;
        },
      },
    );
    const id = await durable.startNew("parent");
    await drive(durable);
    expect((await durable.getStatus(id))?.runtimeStatus).toBe("Failed");
    expect((await durable.getStatus("the-child"))?.runtimeStatus).toBe("Failed");
    broken = false;
    await durable.rewind(id);
    await drive(durable);
    expect(await durable.getStatus("the-child")).toMatchObject({ runtimeStatus: "Completed", output: "payload done" });
    expect(await durable.getStatus(id)).toMatchObject({ runtimeStatus: "Completed", output: "payload done" });
  });

  it("refuses what cannot be rewound: an unknown, a running, or an instance its own code failed", async () => {
    function* throws(): Generator<never, never> {
      throw new Error("the orchestrator's own error");
    }
    function* waits(context: OrchestrationContext) {
      yield context.df.waitForExternalEvent("never");
    }
    const durable = host({ throws: throws as OrchestrationHandler, waits }, {});
    const failed = await durable.startNew("throws");
    const running = await durable.startNew("waits");
    await drive(durable);
    await expect(durable.rewind("nobody")).rejects.toMatchObject({ status: 404 });
    await expect(durable.rewind(running)).rejects.toMatchObject({ status: 412, message: expect.stringMatching(/Running/) });
    await expect(durable.rewind(failed)).rejects.toMatchObject({ status: 412, message: expect.stringMatching(/no task to run again/) });
  });
});

describe("local durable host: every JSON type, and orchestrators that break", () => {
  const values: unknown[] = [
    "text",
    "42",
    "",
    0,
    -1.5,
    1e21,
    true,
    false,
    null,
    [],
    [1, "two", null, { three: [3] }],
    {},
    { nested: { a: [true, { b: "ü 😀" }] } },
  ];

  it("round-trips inputs, activity results, sub-orchestration results and outputs of every JSON type", async () => {
    function* echoChild(context: OrchestrationContext) {
      return context.df.getInput();
    }
    function* echo(context: OrchestrationContext) {
      const viaActivity = yield context.df.callActivity("same", context.df.getInput());
      const viaChild = yield context.df.callSubOrchestrator("echoChild", viaActivity);
      return { input: context.df.getInput(), viaActivity, viaChild };
    }
    const durable = host({ echo, echoChild }, { same: async (input: unknown) => input });
    const ids = await Promise.all(values.map((input) => durable.startNew("echo", { input })));
    await drive(durable);
    for (const [i, input] of values.entries()) {
      expect(await durable.getStatus(ids[i]), JSON.stringify(input)).toMatchObject({
        runtimeStatus: "Completed",
        input,
        output: { input, viaActivity: input, viaChild: input },
      });
    }
  });

  it("fails an instance whose orchestrator throws, naming its error, and one that is no orchestrator at all", async () => {
    function* throws(): Generator<never, never> {
      throw new Error("bad input, giving up");
    }
    const notAGenerator = (() => 42) as unknown as OrchestrationHandler;
    const durable = host({ throws: throws as OrchestrationHandler, notAGenerator }, {});
    const a = await durable.startNew("throws");
    const b = await durable.startNew("notAGenerator");
    await drive(durable);
    expect(await durable.getStatus(a)).toMatchObject({ runtimeStatus: "Failed", output: expect.stringMatching(/bad input, giving up/) });
    expect((await durable.getStatus(b))?.runtimeStatus).toBe("Failed");
    expect(String((await durable.getStatus(b))?.output)).not.toBe("");
  });
});

describe("local durable host: what waits survives a restart", () => {
  it("keeps an event raised before its wait (and one raised while the host was stopping) for the orchestrator after a restart", async () => {
    const dir = mkdtempSync(join(tmpdir(), "durable-events-"));
    function* patient(context: OrchestrationContext) {
      yield context.df.createTimer(new Date(context.df.currentUtcDateTime.getTime() + 60_000));
      const first = yield context.df.waitForExternalEvent("go");
      const second = yield context.df.waitForExternalEvent("go");
      return [first, second];
    }
    const first = host({ patient }, {}, dir);
    const id = await first.startNew("patient", { instanceId: "patient" });
    await first.settled();
    await first.raiseEvent(id, "go", "early one"); // buffered: nothing waits for it yet
    await first.raiseEvent(id, "go", { early: 2 });
    await first.stop();

    const second = host({ patient }, {}, dir);
    second.resume();
    await drive(second); // the timer fires late, then both waits find their events
    expect(await second.getStatus(id)).toMatchObject({ runtimeStatus: "Completed", output: ["early one", { early: 2 }] });
  });

  it("lists entities of one name with when they last ran and, if asked, their state", async () => {
    const adder = (context: EntityContext<number>) => context.df.setState((context.df.getState(() => 0) ?? 0) + context.df.getInput<number>()!);
    const durable = host({}, {}, undefined, { adder } as Record<string, EntityHandler>);
    durable.entities.signal("adder", "b", "add", 2);
    durable.entities.signal("adder", "a", "add", 1);
    await durable.settled();
    expect(durable.entities.list("adder")).toEqual([
      { entityId: { name: "adder", key: "a" }, lastOperationTime: "2026-01-01T00:00:00.000Z", state: 1 },
      { entityId: { name: "adder", key: "b" }, lastOperationTime: "2026-01-01T00:00:00.000Z", state: 2 },
    ]);
    expect(durable.entities.list("nothing")).toEqual([]);
  });
});

describe("local durable host: durable HTTP (callHttp)", () => {
  it("makes the request as the extension's built-in activity, and the package polls a 202 on a durable timer", async () => {
    const seen: { method?: string; path?: string; body: string; header?: string }[] = [];
    const server = createServer((req, res) => {
      let body = "";
      req
        .on("data", (chunk) => (body += chunk))
        .on("end", () => {
          seen.push({ method: req.method, path: req.url, body, header: req.headers["x-caller"] as string | undefined });
          if (seen.length === 1) res.writeHead(202, { location: "/status", "retry-after": "5" }).end();
          else res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ done: true }));
        });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/work`;
    function* caller(context: OrchestrationContext) {
      const response = (yield context.df.callHttp({
        method: "POST",
        url,
        body: { job: 1 },
        headers: { "x-caller": "orchestration" },
      })) as df.DurableHttpResponse;
      return { status: response.statusCode, content: JSON.parse(response.content!), type: response.headers?.["content-type"] };
    }
    try {
      const durable = host({ caller }, {});
      const id = await durable.startNew("caller");
      await durable.settled();
      expect(seen).toHaveLength(1); // answered 202: the next request waits for the Retry-After timer
      expect(await durable.getStatus(id)).toMatchObject({ runtimeStatus: "Running" });
      await drive(durable);
      expect(await durable.getStatus(id)).toMatchObject({
        runtimeStatus: "Completed",
        output: { status: 200, content: { done: true }, type: "application/json" },
      });
      expect(seen).toEqual([
        { method: "POST", path: "/work", body: JSON.stringify({ job: 1 }), header: "orchestration" },
        { method: "GET", path: "/status", body: "", header: "orchestration" }, // the Location, 5 s (Retry-After) later
      ]);
      const history = (await durable.getStatus(id, { showHistory: true }))!.history as { EventType: number; Name?: string }[];
      expect(history.filter((e) => e.EventType === 4).map((e) => e.Name)).toEqual(["BuiltIn::HttpActivity", "BuiltIn::HttpActivity"]);
    } finally {
      server.close();
    }
  });
});
