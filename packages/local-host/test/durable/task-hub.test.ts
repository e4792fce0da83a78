import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import type { Container } from "@azure/cosmos";
import { afterEach, describe, expect, it, vi } from "vitest";
import * as df from "durable-functions";
import type { EntityContext, OrchestrationContext, OrchestrationHandler } from "durable-functions";
import { DurableHost, type InstanceStatus } from "../../src";
import { durableFunctions, type ActivityHandler, type EntityHandler } from "../support/durable-functions";
import { cosmosFixture, eventually, type CosmosFixture } from "../../../embedded-cosmos/test/fixture";

/**
 * One task hub shared by several hosts, on the embedded Cosmos DB server: each pattern the
 * durable host runs, with one host and with three, every request sent through a host chosen in
 * turn (so most go to a partition another host holds), every status read from every host.
 */
const TIMING = { expirationMs: 1500, renewMs: 300, acquireMs: 200, pollMs: 50, idlePollMs: 200 };
const DEADLINE_MS = 60_000;
vi.setConfig({ testTimeout: 2 * DEADLINE_MS });

let fixture: CosmosFixture | undefined;
const hosts: DurableHost[] = [];
const processes: ChildProcess[] = [];
/** What the hosts logged, each line after its host's name. */
const logs: string[] = [];
afterEach(async () => {
  for (const child of processes.splice(0)) child.kill("SIGKILL");
  await Promise.all(hosts.splice(0).map((host) => host.stop()));
  // Only once they stopped: a host still balancing would log into the next test's lines, under a name the next test's hosts reuse.
  logs.splice(0);
  await fixture?.stop();
  fixture = undefined;
});

interface Handlers {
  orchestrations: Record<string, OrchestrationHandler>;
  activities?: Record<string, ActivityHandler>;
  entities?: Record<string, EntityHandler>;
}

/** `count` more hosts on one hub, started together, each with a name of its own. */
async function startHosts(count: number, handlers: Handlers, hub: string): Promise<DurableHost[]> {
  fixture ??= await cosmosFixture();
  const started: DurableHost[] = [];
  for (let i = 0; i < count; i++) {
    const owner = `host-${hosts.length}`;
    const host = new DurableHost({
      functions: durableFunctions(handlers),
      log: (line) => logs.push(`${owner}: ${line}`),
      hub: { database: fixture.database, name: hub, owner, timing: TIMING },
    });
    hosts.push(host);
    started.push(host);
  }
  await Promise.all(started.map((host) => host.resume()));
  return started;
}

/** `count` hosts on one hub; resolves once the hub's 4 partitions are held, each by one of them. */
async function cluster(count: number, handlers: Handlers, hub = "taskHub"): Promise<DurableHost[]> {
  const started = await startHosts(count, handlers, hub);
  await eventually(async () => heldOnce(started) || undefined, DEADLINE_MS);
  return started;
}

/** Whether every partition is held by exactly one of `hosts`. */
function heldOnce(hosts: DurableHost[]): boolean {
  const held = hosts.flatMap((host) => host.partitions());
  return held.length === 4 && new Set(held).size === 4;
}

/** The status every host reports for `id`, once all of them report it `runtimeStatus`; the same from each. */
async function finished(all: DurableHost[], id: string, runtimeStatus = "Completed"): Promise<InstanceStatus> {
  return eventually(async () => {
    const statuses = await Promise.all(all.map((host) => host.getStatus(id)));
    const done = statuses.every((status) => status?.runtimeStatus === runtimeStatus);
    if (!done) return undefined;
    for (const status of statuses) expect({ ...status, lastUpdatedTime: undefined }).toEqual({ ...statuses[0], lastUpdatedTime: undefined });
    return statuses[0];
  }, DEADLINE_MS);
}

/** The host the `i`th request goes through. */
const via = (all: DurableHost[], i: number) => all[i % all.length];

describe.each([1, 3])("one task hub, %i host(s)", (count) => {
  it("runs activities with retries, durable timers and continue-as-new, whoever starts them", async () => {
    const attempts = new Map<string, number>();
    function* countdown(context: OrchestrationContext) {
      const { n, total } = context.df.getInput<{ n: number; total: number }>();
      const doubled = (yield context.df.callActivityWithRetry("flakyDouble", new df.RetryOptions(20, 3), `${context.df.instanceId}:${n}`)) as number;
      yield context.df.createTimer(new Date(context.df.currentUtcDateTime.getTime() + 100));
      if (n > 0) context.df.continueAsNew({ n: n - 1, total: total + doubled });
      else return total + doubled;
    }
    const flakyDouble = async (key: string) => {
      // Every first attempt fails: the retry runs where the instance runs now.
      const attempt = (attempts.get(key) ?? 0) + 1;
      attempts.set(key, attempt);
      if (attempt === 1) throw new Error(`first attempt of ${key}`);
      return 2 * Number(key.split(":").pop());
    };
    const all = await cluster(count, { orchestrations: { countdown }, activities: { flakyDouble } });
    const ids = await Promise.all(
      [...Array(8).keys()].map((i) => via(all, i).startNew("countdown", { instanceId: `countdown-${i}`, input: { n: 2, total: i } })),
    );
    for (const [i, id] of ids.entries()) expect(await finished(all, id)).toMatchObject({ runtimeStatus: "Completed", output: i + 2 * (2 + 1 + 0) });
    // A running id cannot be started again, through any host.
    await via(all, 1).startNew("countdown", { instanceId: "long", input: { n: 50, total: 0 } });
    await expect(via(all, 2).startNew("countdown", { instanceId: "long", input: { n: 1, total: 0 } })).rejects.toMatchObject({ status: 409 });
    await via(all, 0).terminate("long", "enough");
    expect(await finished(all, "long", "Terminated")).toMatchObject({ runtimeStatus: "Terminated", output: "enough" });
  });

  it("delivers external events raised through any host, and suspends and resumes through another", async () => {
    function* waiter(context: OrchestrationContext) {
      const first = (yield context.df.waitForExternalEvent("add")) as number;
      const second = (yield context.df.waitForExternalEvent("add")) as number;
      return first + second;
    }
    const all = await cluster(count, { orchestrations: { waiter } });
    const ids = await Promise.all([...Array(6).keys()].map((i) => via(all, i).startNew("waiter", { instanceId: `waiter-${i}` })));
    await eventually(
      async () => (await Promise.all(ids.map((id) => via(all, 1).getStatus(id)))).every((s) => s?.runtimeStatus === "Running") || undefined,
      DEADLINE_MS,
    );
    await via(all, 2).suspend(ids[0]);
    await eventually(async () => (await via(all, 1).getStatus(ids[0]))?.runtimeStatus === "Suspended" || undefined, DEADLINE_MS);
    for (const [i, id] of ids.entries()) {
      await via(all, i).raiseEvent(id, "add", i);
      await via(all, i + 1).raiseEvent(id, "add", 10);
    }
    // The suspended one keeps its events until it is resumed.
    for (const [i, id] of ids.entries()) if (i > 0) expect(await finished(all, id)).toMatchObject({ runtimeStatus: "Completed", output: i + 10 });
    expect((await via(all, 0).getStatus(ids[0]))?.runtimeStatus).toBe("Suspended");
    await via(all, 1).resumeInstance(ids[0]);
    expect(await finished(all, ids[0])).toMatchObject({ runtimeStatus: "Completed", output: 10 });
  });

  it("runs sub-orchestrations and entities in other partitions, and reads entities from every host", async () => {
    const counter = (context: EntityContext<number>) => {
      const value = context.df.getState(() => 0) ?? 0;
      if (context.df.operationName === "add") context.df.setState(value + context.df.getInput<number>()!);
      else context.df.return(value);
    };
    function* child(context: OrchestrationContext) {
      const n = context.df.getInput<number>();
      yield context.df.callEntity(new df.EntityId("counter", `k${n % 3}`), "add", n);
      return n * n;
    }
    function* parent(context: OrchestrationContext) {
      const squares = (yield context.df.Task.all([...Array(6).keys()].map((n) => context.df.callSubOrchestrator("child", n, `child-${n}`)))) as number[];
      context.df.signalEntity(new df.EntityId("counter", "signalled"), "add", 1);
      const k0 = (yield context.df.callEntity(new df.EntityId("counter", "k0"), "get")) as number;
      return { squares, k0 };
    }
    const all = await cluster(count, { orchestrations: { parent, child }, entities: { counter } as Record<string, EntityHandler> });
    const id = await via(all, 1).startNew("parent", { instanceId: "parent" });
    expect(await finished(all, id)).toMatchObject({ runtimeStatus: "Completed", output: { squares: [0, 1, 4, 9, 16, 25], k0: 0 + 3 } });
    for (const n of [...Array(6).keys()]) expect(await finished(all, `child-${n}`)).toMatchObject({ output: n * n });
    await via(all, 2).signalEntity("counter", "signalled", "add", 2);
    for (const host of all) {
      await eventually(async () => ((await host.readEntityState("counter", "signalled")).entityState === 3 ? true : undefined), DEADLINE_MS);
      expect(await host.readEntityState("counter", "k1")).toEqual({ entityExists: true, entityState: 1 + 4 });
      expect((await host.listEntities("counter")).map((entity) => entity.entityId.key)).toEqual(["k0", "k1", "k2", "signalled"]);
    }
  });

  it("rewinds, through another host, an instance a failed activity failed; purges it through a third", async () => {
    let broken = true;
    function* fragile(context: OrchestrationContext) {
      return yield context.df.callActivity("mayFail", context.df.getInput<number>());
    }
    const mayFail = async (n: number) => {
      if (broken) throw new Error("not yet");
      return n + 1;
    };
    const all = await cluster(count, { orchestrations: { fragile }, activities: { mayFail } });
    const ids = await Promise.all([...Array(4).keys()].map((i) => via(all, i).startNew("fragile", { instanceId: `fragile-${i}`, input: i })));
    for (const id of ids) expect(await finished(all, id, "Failed")).toMatchObject({ output: expect.stringContaining("not yet") });
    broken = false;
    for (const [i, id] of ids.entries()) await via(all, i + 1).rewind(id);
    for (const [i, id] of ids.entries()) expect(await finished(all, id)).toMatchObject({ runtimeStatus: "Completed", output: i + 1 });
    for (const [i, id] of ids.entries()) expect(await via(all, i + 2).purgeInstanceHistory(id)).toBe(true);
    await eventually(
      async () => ((await Promise.all(all.map((host) => host.queryInstances()))).every((list) => list.length === 0) ? true : undefined),
      DEADLINE_MS,
    );
  });
});

describe("task hub partitions", () => {
  it("are split evenly between two hosts, at most a fair share each among three, and a stopped host's are taken by the others", async () => {
    const two = await cluster(2, { orchestrations: {} }, "twoHosts");
    await eventually(async () => (two.every((host) => host.partitions().length === 2) ? true : undefined), DEADLINE_MS);
    // Several rounds later, no host took a partition it held (only one it had let go in between).
    await new Promise((resolve) => setTimeout(resolve, 10 * TIMING.acquireMs));
    const holding = new Set<string>();
    for (const line of logs) {
      const [, host, partition, what] = /^(\S+): task hub: partition (\d) (let go|.* by)/.exec(line) ?? [];
      if (!host) continue;
      const key = `${host} ${partition}`;
      if (what === "let go") holding.delete(key);
      else {
        expect(holding.has(key), logs.join("\n")).toBe(false);
        holding.add(key);
      }
    }
    expect(holding.size).toBe(4);
    const all = [...two, ...(await startHosts(1, { orchestrations: {} }, "twoHosts"))];
    await eventually(async () => (heldOnce(all) && all.every((host) => host.partitions().length <= 2) ? true : undefined), DEADLINE_MS);
    const [leaving, ...staying] = all;
    await leaving.stop();
    hosts.splice(hosts.indexOf(leaving), 1);
    await eventually(async () => (heldOnce(staying) && staying.every((host) => host.partitions().length === 2) ? true : undefined), DEADLINE_MS);
  });

  it("fence their holder: once its lease is taken it writes nothing more, and what it was asked goes to the next holder", async () => {
    function* waiter(context: OrchestrationContext) {
      return (yield context.df.waitForExternalEvent("go")) as string;
    }
    const [host] = await cluster(1, { orchestrations: { waiter } }, "fencedHub");
    await host.startNew("waiter", { instanceId: "fenced" });
    await eventually(async () => ((await host.getStatus("fenced"))?.runtimeStatus === "Running" ? true : undefined), DEADLINE_MS);
    // Another host takes the partition's lease (as a steal would) while the holder still runs it.
    const hub = fixture!.database.container("fencedHub");
    const key = await hubPartitionOf(hub, "fenced");
    const { resource: lease } = await hub.item("lease", key).read();
    await hub
      .item("lease", key)
      .replace({ ...lease, owner: "thief", timestamp: new Date().toISOString() }, { accessCondition: { type: "IfMatch", condition: lease._etag } });
    await host.raiseEvent("fenced", "go", "through the fence");
    expect(logs.join("\n")).toMatch(new RegExp(`partition ${key} let go by host-\\d+: writing .* refused \\(412\\)`));
    // Nothing it did after the lease was taken is stored: the instance still waits there.
    const stored = await hub.items.query({ query: "SELECT * FROM c WHERE c.kind = 'instance'" }, { partitionKey: key }).fetchAll();
    expect(stored.resources.map((document) => JSON.parse(document.text as string).runtimeStatus)).toEqual(["Running"]);
    // The thief lets the lease go: the host takes the partition again and applies the event it was sent.
    const { resource: taken } = await hub.item("lease", key).read();
    await hub.item("lease", key).replace({ ...taken, owner: "" }, { accessCondition: { type: "IfMatch", condition: taken._etag } });
    expect(await finished([host], "fenced")).toMatchObject({ output: "through the fence" });
  });

  it("lose nothing when their host is killed mid-episode: another host takes them after the lease expires and finishes the work", async () => {
    fixture = await cosmosFixture();
    const { endpoint, key } = fixture.cosmos;
    // A host in a process of its own, killed with SIGKILL while its instances are in the middle of their steps.
    const child = spawn(process.execPath, [join(__dirname, "../support/hub-process.cjs"), endpoint, key!, "test", "killedHub", "doomed"], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    processes.push(child);
    let output = "";
    child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    await eventually(async () => (/holds 4/.test(output) ? true : undefined), DEADLINE_MS);
    const survivor = new DurableHost({
      functions: durableFunctions({ orchestrations: { steps: hubProcessSteps }, activities: { step: async ([, i]: [string, number]) => i } }),
      hub: { database: fixture.database, name: "killedHub", owner: "survivor", timing: TIMING },
    });
    hosts.push(survivor);
    await survivor.resume();
    const ids = await Promise.all([...Array(6).keys()].map((i) => survivor.startNew("steps", { instanceId: `steps-${i}`, input: 5 })));
    // Some instances have taken steps in the doomed process (the survivor holds nothing yet, or only what it stole).
    await eventually(async () => (/step steps-\d+ 2/.test(output) ? true : undefined), DEADLINE_MS);
    child.kill("SIGKILL");
    for (const id of ids) expect(await finished([survivor], id)).toMatchObject({ runtimeStatus: "Completed", output: 0 + 1 + 2 + 3 + 4 });
    expect(survivor.partitions()).toEqual(["0", "1", "2", "3"]);
  });
});

/** The orchestration `hub-process.cjs` runs: `n` steps, one activity each, their sum. */
function* hubProcessSteps(context: OrchestrationContext) {
  const n = context.df.getInput<number>();
  let sum = 0;
  for (let i = 0; i < n; i++) sum += (yield context.df.callActivity("step", [context.df.instanceId, i])) as number;
  return sum;
}

/** The task hub partition holding instance `id`'s record. */
async function hubPartitionOf(hub: Container, id: string): Promise<string> {
  for (let index = 0; index < 4; index++) {
    const { resources } = await hub.items.query({ query: "SELECT * FROM c WHERE c.kind = 'instance'" }, { partitionKey: String(index) }).fetchAll();
    if (resources.some((document) => JSON.parse(document.text as string).instanceId === id)) return String(index);
  }
  throw new Error(`no record of ${id} in the hub`);
}
