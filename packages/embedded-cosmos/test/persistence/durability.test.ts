import { spawn, type ChildProcess } from "node:child_process";
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ChangeFeedStartFrom, StatusCodes, TriggerOperation, TriggerType, type Container } from "@azure/cosmos";
import { startCosmos } from "../../src";
import { clientFor, eventually, statusOf } from "../fixture";

/** The embedded server with --data-dir: every acknowledged write survives kill -9; a torn last write is ignored. */
const cli = join(__dirname, "../../dist/cli.js");
const children: ChildProcess[] = [];
afterEach(() => children.splice(0).forEach((child) => child.kill("SIGKILL")));

/** Starts `npm run cosmos` on a data directory; resolves with its endpoint and key once it listens. */
function serve(dataDir: string): Promise<{ child: ChildProcess; endpoint: string; key: string }> {
  const child = spawn(process.execPath, [cli, "--port", "0", "--data-dir", dataDir], { stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let output = "";
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const endpoint = /COSMOS_ENDPOINT=(\S+)/.exec(output)?.[1];
      const key = /COSMOS_KEY=(\S+)/.exec(output)?.[1];
      if (endpoint && key) resolve({ child, endpoint, key });
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.once("exit", (code) => reject(new Error(`exited with ${code}: ${output}`)));
  });
}

const killed = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    child.removeAllListeners("exit");
    child.once("exit", () => resolve());
    child.kill("SIGKILL");
  });

async function containerOf(endpoint: string, key: string): Promise<Container> {
  const client = clientFor({ endpoint, key });
  const { database } = await client.databases.createIfNotExists({ id: "durable" });
  const { container } = await database.containers.createIfNotExists({ id: "things", partitionKey: { paths: ["/pk"] }, defaultTtl: -1 });
  return container;
}

describe("data that survives a restart", () => {
  it("keeps every acknowledged write, script, trigger, TTL and change feed position across kill -9", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cosmos-data-"));
    const first = await serve(dir);
    let things = await containerOf(first.endpoint, first.key);
    await things.scripts.storedProcedures.create({ id: "hello", body: "function () { getContext().getResponse().setBody('hi'); }" });
    await things.scripts.triggers.create({
      id: "stamp",
      body: "function () { var r = getContext().getRequest(); var d = r.getBody(); d.stamped = true; r.setBody(d); }",
      triggerType: TriggerType.Pre,
      triggerOperation: TriggerOperation.All,
    });
    await Promise.all(Array.from({ length: 200 }, (_, i) => things.items.create({ id: `t${i}`, pk: `p${i % 7}`, n: i })));
    await things.item("t1", "p1").patch([{ op: "incr", path: "/n", value: 100 }]);
    await things.item("t2", "p2").delete();
    await things.items.create({ id: "stamped", pk: "p0" }, { preTriggerInclude: ["stamp"] });
    await things.items.create({ id: "short-lived", pk: "p0", ttl: 1 });
    const feed = things.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning(), maxItemCount: 1000 });
    while ((await feed.readNext()).statusCode !== StatusCodes.NotModified);
    const position = (await feed.readNext()).continuationToken;
    await killed(first.child);

    const second = await serve(dir);
    things = await containerOf(second.endpoint, second.key);
    const { resources } = await things.items.query("SELECT c.id, c.n, c.stamped FROM c").fetchAll();
    expect(resources.filter((r) => r.id.startsWith("t"))).toHaveLength(199);
    expect(resources.find((r) => r.id === "t1")?.n).toBe(101);
    expect(await statusOf(things.item("t2", "p2").read())).toBe(404);
    expect(resources.find((r) => r.id === "stamped")?.stamped).toBe(true);
    expect((await things.scripts.storedProcedure("hello").execute("p0")).resource).toBe("hi");
    // A TTL counts in wall-clock seconds across the restart (this server runs in another process).
    await eventually(async () => ((await statusOf(things.item("short-lived", "p0").read())) === 404 ? true : undefined), 10_000, 100);
    // The change feed continues from where it was: only what is written after the restart.
    await things.items.create({ id: "after-restart", pk: "p3" });
    const resumed = things.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Continuation(position) });
    expect((await resumed.readNext()).result.map((r) => r.id)).toEqual(["after-restart"]);
  }, 60_000);

  it("ignores a torn last write and carries on", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cosmos-torn-"));
    const first = await serve(dir);
    let things = await containerOf(first.endpoint, first.key);
    for (let i = 0; i < 10; i++) await things.items.create({ id: `w${i}`, pk: "p" });
    await killed(first.child);
    // What a crash in the middle of writing the next line leaves behind.
    appendFileSync(join(dir, "journal.jsonl"), '1a2b3c4d\t{"op":"items","db":"durable","cont');
    const second = await serve(dir);
    things = await containerOf(second.endpoint, second.key);
    expect((await things.items.query("SELECT VALUE COUNT(1) FROM c").fetchAll()).resources).toEqual([10]);
    await things.items.create({ id: "w10", pk: "p" });
    await killed(second.child);
    const third = await serve(dir);
    things = await containerOf(third.endpoint, third.key);
    expect((await things.items.query("SELECT VALUE COUNT(1) FROM c").fetchAll()).resources).toEqual([11]);
  }, 60_000);

  it("compacts the journal into a snapshot and loads from both", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cosmos-compact-"));
    let cosmos = await startCosmos({ dataDir: dir, compactAfterBytes: 20_000 });
    let things = await containerOf(cosmos.endpoint, cosmos.key);
    for (let i = 0; i < 300; i++) await things.items.upsert({ id: `k${i % 50}`, pk: "p", version: i });
    await cosmos.stop();
    expect(readdirSync(dir)).toContain("snapshot.jsonl");
    expect(statSync(join(dir, "journal.jsonl")).size).toBeLessThan(40_000);
    cosmos = await startCosmos({ dataDir: dir, compactAfterBytes: 20_000 });
    things = await containerOf(cosmos.endpoint, cosmos.key);
    const { resources } = await things.items.query("SELECT VALUE MAX(c.version) FROM c").fetchAll();
    expect(resources).toEqual([299]);
    expect((await things.items.query("SELECT VALUE COUNT(1) FROM c").fetchAll()).resources).toEqual([50]);
    await cosmos.stop();
  });

  it("refuses a second process on the same data directory, naming it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cosmos-lock-"));
    await serve(dir);
    await expect(serve(dir)).rejects.toThrow(/in use by another process/);
  });

  describe("a damaged byte before the end of a data file", () => {
    /** A data directory of 40 items (one journal line each) and, with `snapshot`, compacted after the first 20. */
    async function dataDir(snapshot: boolean): Promise<string> {
      const dir = mkdtempSync(join(tmpdir(), "cosmos-damaged-"));
      const cosmos = await startCosmos({ dataDir: dir, compactAfterBytes: snapshot ? 8_000 : undefined });
      const things = await containerOf(cosmos.endpoint, cosmos.key);
      for (let i = 0; i < 40; i++) await things.items.create({ id: `d${i}`, pk: "p", text: "x".repeat(200) });
      await cosmos.stop();
      return dir;
    }

    /** Changes one byte at 20 % of `file`, inside a JSON value; returns the bytes before it. */
    function damage(file: string): Buffer {
      const bytes = readFileSync(file);
      const at = bytes.indexOf("xxxx", Math.floor(bytes.length * 0.2));
      const damaged = Buffer.from(bytes);
      damaged[at] = "y".charCodeAt(0);
      writeFileSync(file, damaged);
      return damaged;
    }

    it.each([
      ["journal.jsonl", false],
      ["snapshot.jsonl", true],
    ])("in %s stops the start naming the file and offset, and changes nothing", async (name, snapshot) => {
      const dir = await dataDir(snapshot as boolean);
      const file = join(dir, name as string);
      const damaged = damage(file);
      await expect(startCosmos({ dataDir: dir })).rejects.toThrow(new RegExp(`${name}.* damaged at byte \\d+`));
      expect(readFileSync(file).equals(damaged)).toBe(true);
    });

    it("with recovery asked for, moves the damaged file aside and starts from the valid part before it", async () => {
      const dir = await dataDir(false);
      const damaged = damage(join(dir, "journal.jsonl"));
      const cosmos = await startCosmos({ dataDir: dir, recoverDamagedData: true });
      try {
        const aside = readdirSync(dir).filter((file) => file.startsWith("journal.jsonl.damaged-"));
        expect(aside).toHaveLength(1);
        expect(readFileSync(join(dir, aside[0])).equals(damaged)).toBe(true);
        const things = await containerOf(cosmos.endpoint, cosmos.key);
        const count = (await things.items.query("SELECT VALUE COUNT(1) FROM c").fetchAll()).resources[0] as number;
        expect(count).toBeGreaterThan(0);
        expect(count).toBeLessThan(40);
      } finally {
        await cosmos.stop();
      }
    });
  });
});
