import { spawn } from "node:child_process";
import { join } from "node:path";
import { ChangeFeedStartFrom, type Container } from "@azure/cosmos";
import { afterEach, describe, expect, it } from "vitest";
import type { CosmosOptions } from "embedded-cosmos";
import { ChangeFeedPump } from "../../src";
import { watchedTrigger } from "../support/watched";
import { cosmosFixture, eventually, type CosmosFixture } from "../../../embedded-cosmos/test/fixture";

/**
 * The local change feed consumers behave as the Functions trigger's change feed processor:
 * leases per partition key range shared among consumers, moving between them, and delivery
 * that is at-least-once (again after a lease moves mid-batch or a checkpoint fails).
 */
const TIMING = { expirationMs: 1500, renewMs: 200, acquireMs: 100 };

let fixture: CosmosFixture | undefined;
const pumps: ChangeFeedPump[] = [];
afterEach(async () => {
  await Promise.all(pumps.splice(0).map((pump) => pump.stop()));
  await fixture?.stop();
  fixture = undefined;
});

async function setup(cosmos: CosmosOptions = {}) {
  fixture = await cosmosFixture(cosmos);
  const watched = await fixture.container({ id: "watched", partitionKey: { paths: ["/pk"] } });
  const leases = await fixture.container({ id: "leases", partitionKey: { paths: ["/id"] } });
  return { watched, leases };
}

/** A consumer named `owner` that records every document id it is handed, each call waiting for `gate` first. */
function consumer(watched: Container, leases: Container, owner: string, gate: () => Promise<void> = async () => {}, timing = TIMING) {
  const delivered: string[] = [];
  const logs: string[] = [];
  const trigger = watchedTrigger(async (documents) => {
    await gate();
    delivered.push(...(documents as { id: string }[]).map((d) => d.id));
  });
  const pump = new ChangeFeedPump(watched, leases, trigger, {
    pollMs: 20,
    maxItems: 100,
    owner,
    accountHost: "127.0.0.1",
    leases: timing,
    log: (line) => logs.push(line),
  });
  pumps.push(pump);
  return { pump, delivered, logs };
}

/** Consumers of the same trigger on the same leases, started together. */
function startedConsumers(watched: Container, leases: Container, ...owners: string[]) {
  const all = owners.map((owner) => consumer(watched, leases, owner));
  for (const c of all) c.pump.start();
  return all;
}

const write = async (watched: Container, ids: string[]) => {
  for (const id of ids) await watched.items.create({ id, pk: `pk-${id}` });
};
const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
const covers = (delivered: string[][], expected: string[]) => expected.every((id) => delivered.some((d) => d.includes(id)));

describe("change feed leases shared by two consumers", () => {
  it("share the four ranges two and two, and together deliver every change", async () => {
    const { watched, leases } = await setup();
    const [a, b] = startedConsumers(watched, leases, "host-a", "host-b");
    await write(watched, ids("doc", 40));
    await eventually(
      async () => (covers([a.delivered, b.delivered], ids("doc", 40)) && a.pump.ownedLeases().length === 2 && b.pump.ownedLeases().length === 2) || undefined,
      20_000,
    );
    expect([...a.pump.ownedLeases(), ...b.pump.ownedLeases()].sort()).toHaveLength(4);
    expect(new Set([...a.pump.ownedLeases(), ...b.pump.ownedLeases()]).size).toBe(4);
  });

  it("a lease taken mid-batch: the old owner finishes its batch, the new one starts from the last checkpoint, so that batch is delivered twice and nothing is lost", async () => {
    const { watched, leases } = await setup();
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    // Written before host-a starts, so each range's first batch holds all of that range's changes.
    await write(watched, ids("first", 20));
    let stuck = 0;
    const a = consumer(watched, leases, "host-a", () => (stuck++, released));
    a.pump.start();
    await eventually(async () => (a.pump.ownedLeases().length === 4 ? true : undefined), 10_000);
    // host-a holds every range, each worker stuck in its handler with an unacknowledged batch.
    await eventually(async () => (stuck === 4 ? true : undefined), 10_000);
    const b = consumer(watched, leases, "host-b");
    b.pump.start();
    await eventually(async () => (b.pump.ownedLeases().length === 2 ? true : undefined), 20_000);
    await eventually(async () => (b.delivered.length > 0 ? true : undefined), 10_000);
    release();
    await eventually(async () => (a.pump.ownedLeases().length === 2 && covers([a.delivered], ids("first", 20)) ? true : undefined), 20_000);
    expect(a.logs.some((line) => /lease \S+ lost to another consumer/.test(line))).toBe(true);
    // Everything host-b delivered was also delivered by host-a (at-least-once, not exactly-once).
    expect(b.delivered.every((id) => a.delivered.includes(id))).toBe(true);
    // From now on each range has one owner: new changes are delivered once.
    await write(watched, ids("second", 20));
    await eventually(async () => (covers([a.delivered, b.delivered], ids("second", 20)) ? true : undefined), 20_000);
    const seconds = [...a.delivered, ...b.delivered].filter((id) => id.startsWith("second"));
    expect(seconds.sort()).toEqual(ids("second", 20).sort());
  });

  it("a consumer that stops releases its leases and the other takes them over from their checkpoints", async () => {
    const { watched, leases } = await setup();
    const [a, b] = startedConsumers(watched, leases, "host-a", "host-b");
    await eventually(async () => (a.pump.ownedLeases().length === 2 && b.pump.ownedLeases().length === 2 ? true : undefined), 20_000);
    await write(watched, ids("before", 10));
    await eventually(async () => (covers([a.delivered, b.delivered], ids("before", 10)) ? true : undefined), 10_000);
    await a.pump.stop();
    await eventually(async () => (b.pump.ownedLeases().length === 4 ? true : undefined), 20_000);
    await write(watched, ids("after", 10));
    await eventually(async () => (covers([b.delivered], ids("after", 10)) ? true : undefined), 10_000);
    // host-b resumed host-a's ranges from their checkpoints: nothing of "before" was delivered twice.
    expect([...a.delivered, ...b.delivered].filter((id) => id.startsWith("before")).sort()).toEqual(ids("before", 10).sort());
  });
});

describe("a consumer killed without a word", () => {
  it("keeps its leases until they expire; then another takes them over from their checkpoints and nothing is lost", async () => {
    const { watched, leases } = await setup();
    // host-a in a process of its own (its lease expiration: 5 s), killed with SIGKILL: it releases nothing.
    const script = join(__dirname, "../support/consumer-process.cjs");
    const child = spawn(process.execPath, [script, fixture!.cosmos.endpoint, fixture!.cosmos.key, "test", watched.id, leases.id, "watched-", "host-a"]);
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise((resolve) => child.once("exit", resolve));
    try {
      await eventually(async () => (/owns 4/.test(output) ? true : undefined), 20_000);
      await write(watched, ids("before", 10));
      await eventually(async () => (ids("before", 10).every((id) => output.includes(`delivered ${id}\n`)) ? true : undefined), 20_000);
    } finally {
      child.kill("SIGKILL");
      await exited;
    }
    const killedAt = Date.now();
    const b = consumer(watched, leases, "host-b", undefined, { expirationMs: 5000, renewMs: 1000, acquireMs: 200 });
    b.pump.start();
    await write(watched, ids("after", 10));
    await eventually(async () => (b.pump.ownedLeases().length === 4 ? true : undefined), 30_000);
    // Not before the dead owner's leases expired: until then they are its.
    expect(Date.now() - killedAt).toBeGreaterThanOrEqual(4000);
    await eventually(async () => (covers([b.delivered], ids("after", 10)) ? true : undefined), 20_000);
    // At least once: a batch host-a delivered but had not checkpointed may come again; every "after" change comes once.
    expect(b.delivered.filter((id) => id.startsWith("after")).sort()).toEqual(ids("after", 10).sort());
    expect(b.delivered.every((id) => id.startsWith("after") || id.startsWith("before"))).toBe(true);
  });
});

describe("leases whose owner's clock cannot be trusted", () => {
  it("a lease stamped in the future, or with no readable time, is taken once it stays unchanged for the expiration here", async () => {
    const { watched, leases } = await setup();
    const a = consumer(watched, leases, "host-a");
    a.pump.start();
    await eventually(async () => (a.pump.ownedLeases().length === 4 ? true : undefined), 20_000);
    await write(watched, ids("before", 5));
    await eventually(async () => (covers([a.delivered], ids("before", 5)) ? true : undefined), 10_000);
    await a.pump.stop();
    // A skewed clock, or a key holder, leaves three leases held "for good" by an owner that never writes again.
    const { resources } = await leases.items.readAll<{ id: string; Owner?: string; timestamp: string }>().fetchAll();
    const stamps = ["9999-12-31T23:59:59.000Z", "9999-01-01T00:00:00.000Z", "not a time"];
    for (const [i, lease] of resources.slice(0, 3).entries()) await leases.item(lease.id, lease.id).replace({ ...lease, Owner: "ghost", timestamp: stamps[i] });
    const b = consumer(watched, leases, "host-b");
    b.pump.start();
    await write(watched, ids("after", 12));
    await eventually(async () => (b.pump.ownedLeases().length === 4 ? true : undefined), 20_000);
    await eventually(async () => (covers([b.delivered], ids("after", 12)) ? true : undefined), 20_000);
  });
});

describe("checkpoints that fail", () => {
  it("make the batch come again from the last checkpoint: delivered at least once, some twice", async () => {
    const { watched, leases } = await setup({ faults: { seed: 3, rules: [{ effect: "503", rate: 0.4, operations: ["write"], containers: ["leases"] }] } });
    const a = consumer(watched, leases, "host-a");
    a.pump.start();
    await eventually(async () => (a.pump.ownedLeases().length === 4 ? true : undefined), 20_000);
    // One document at a time, each after the last was delivered: many batches, many checkpoints.
    for (const id of ids("doc", 30)) {
      await write(watched, [id]);
      await eventually(async () => (a.delivered.includes(id) ? true : undefined), 30_000);
    }
    await eventually(async () => (covers([a.delivered], ids("doc", 30)) ? true : undefined), 30_000);
    expect(a.delivered.length).toBeGreaterThan(30);
    expect(a.logs.some((line) => /resuming from the last checkpoint/.test(line))).toBe(true);
  });
});

describe("leases an operator damaged while the host runs", () => {
  /** One consumer holding every lease, with ten changes delivered and checkpointed. */
  async function runningConsumer() {
    const { watched, leases } = await setup();
    const a = consumer(watched, leases, "host-a");
    a.pump.start();
    await eventually(async () => (a.pump.ownedLeases().length === 4 ? true : undefined), 20_000);
    await write(watched, ids("before", 10));
    await eventually(async () => (covers([a.delivered], ids("before", 10)) ? true : undefined), 10_000);
    return { watched, leases, a };
  }

  it("a deleted lease is created again and its range replayed from the start: nothing is lost", async () => {
    const { watched, leases, a } = await runningConsumer();
    const { resources } = await leases.items.readAll<{ id: string }>().fetchAll();
    for (const lease of resources) await leases.item(lease.id, lease.id).delete();
    await write(watched, ids("after", 12));
    await eventually(async () => (covers([a.delivered], ids("after", 12)) ? true : undefined), 20_000);
    // The leases come back, and their ranges are replayed from the start: the earlier changes come again.
    await eventually(
      async () =>
        ((await leases.items.readAll().fetchAll()).resources.length === 4 && a.delivered.filter((id) => id.startsWith("before")).length >= 20) || undefined,
      20_000,
    );
    expect(a.logs.some((line) => /created again/.test(line))).toBe(true);
  });

  it("a lease whose continuation is garbage starts its range over instead of stalling", async () => {
    const { watched, leases, a } = await runningConsumer();
    await a.pump.stop();
    const { resources } = await leases.items.readAll<{ id: string; ContinuationToken: string }>().fetchAll();
    for (const lease of resources) await leases.item(lease.id, lease.id).replace({ ...lease, ContinuationToken: '"not an LSN"' });
    const b = consumer(watched, leases, "host-a");
    b.pump.start();
    await write(watched, ids("after", 12));
    await eventually(async () => (covers([b.delivered], [...ids("before", 10), ...ids("after", 12)]) ? true : undefined), 20_000);
    expect(b.logs.some((line) => /continuation .* unreadable/.test(line))).toBe(true);
  });
});

describe("a function's retry policy", () => {
  it("with retries spent, the failing batch is checkpointed past, as in Azure, and the changes after it are delivered", async () => {
    const { watched, leases } = await setup();
    const attempts = new Map<string, number>();
    const delivered: string[] = [];
    const logs: string[] = [];
    const trigger = watchedTrigger(
      async (documents) => {
        const batch = (documents as { id: string }[]).map((d) => d.id);
        for (const id of batch) attempts.set(id, (attempts.get(id) ?? 0) + 1);
        if (batch.includes("poison")) throw new Error("cannot take it");
        delivered.push(...batch);
      },
      { maxRetryCount: 1, minimumIntervalMs: 10, maximumIntervalMs: 10 },
    );
    const pump = new ChangeFeedPump(watched, leases, trigger, {
      pollMs: 20,
      maxItems: 100,
      owner: "host-a",
      accountHost: "127.0.0.1",
      leases: TIMING,
      log: (line) => logs.push(line),
    });
    pumps.push(pump);
    await watched.items.create({ id: "poison", pk: "p" });
    pump.start();
    await eventually(async () => logs.some((line) => /retries are spent, so it is skipped/.test(line)) || undefined, 20_000);
    await watched.items.create({ id: "after", pk: "p" });
    await eventually(async () => delivered.includes("after") || undefined, 20_000);
    // One try and one retry, never a third: the batch is gone, as Azure's trigger leaves it.
    expect(attempts.get("poison")).toBe(2);
    expect(delivered).not.toContain("poison");
  });
});

describe("leases in the trigger's own schema", () => {
  it("are named and written as the .NET change feed processor writes them", async () => {
    const { watched, leases } = await setup();
    const a = consumer(watched, leases, "host-a");
    a.pump.start();
    await write(watched, ids("doc", 8));
    await eventually(async () => covers([a.delivered], ids("doc", 8)) || undefined, 20_000);
    await a.pump.stop();
    const [db, coll] = [(await watched.database.read()).resource!._rid, (await watched.read()).resource!._rid];
    const { resources } = await leases.items.readAll<Record<string, unknown>>().fetchAll();
    expect(resources.map((l) => l.id).sort()).toEqual([0, 1, 2, 3].map((i) => `watched-127.0.0.1_${db}_${coll}..${i}`));
    for (const lease of resources) {
      expect(lease).toMatchObject({ version: 0, LeaseToken: expect.stringMatching(/^\d$/), Owner: null, properties: {}, Mode: "Incremental Feed" });
      expect((lease.FeedRange as { Range: { min: string; max: string } }).Range).toEqual({ min: expect.any(String), max: expect.any(String) });
      expect(lease.ContinuationToken).toMatch(/^"\d+"$/);
    }
  });

  it("take over the leases this host kept before, in its own schema, from their checkpoints", async () => {
    const { watched, leases } = await setup();
    await write(watched, ids("before", 10));
    // The earlier schema: one document per range, named by its bounds, holding an @azure/cosmos continuation token.
    for (const range of await watched.getFeedRanges()) {
      const iterator = watched.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning(range) });
      let continuation = "";
      for (let page = await iterator.readNext(); page.statusCode !== 304; page = await iterator.readNext()) continuation = page.continuationToken;
      await leases.items.create({
        id: `watched-${range.minInclusive || "00"}-${range.maxExclusive}`,
        owner: "",
        continuation,
        timestamp: new Date(0).toISOString(),
        range: { min: range.minInclusive, max: range.maxExclusive },
      });
    }
    const a = consumer(watched, leases, "host-a");
    a.pump.start();
    await write(watched, ids("after", 6));
    await eventually(async () => covers([a.delivered], ids("after", 6)) || undefined, 20_000);
    // Nothing before the old checkpoints came again, and the old documents are gone.
    expect(a.delivered.filter((id) => id.startsWith("before"))).toEqual([]);
    const { resources } = await leases.items.readAll<{ id: string }>().fetchAll();
    expect(resources.every((lease) => lease.id.includes(".."))).toBe(true);
    expect(a.logs.some((line) => /4 leases of the earlier local schema taken over/.test(line))).toBe(true);
  });
});
