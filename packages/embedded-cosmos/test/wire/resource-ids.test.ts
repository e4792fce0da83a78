import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHmac } from "node:crypto";
import { crc32 } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { authorizationHeaders, startCosmos, type RunningCosmos } from "../../src";
import { documentNumber, ridLevel } from "../../src/wire/resource-ids";
import { clientFor } from "../fixture";

/**
 * Resource ids as Cosmos DB makes them, so the .NET SDK can parse and route by them (its tests
 * are test/dotnet at the repository's root): hierarchical, addressable, stable across restarts.
 */
const running: RunningCosmos[] = [];
afterEach(async () => Promise.all(running.splice(0).map((cosmos) => cosmos.stop())));

async function server(dataDir?: string) {
  const cosmos = await startCosmos({ port: 0, partitions: 4, dataDir });
  running.push(cosmos);
  const client = clientFor(cosmos);
  const { database } = await client.databases.createIfNotExists({ id: "ids" });
  const { container } = await database.containers.createIfNotExists({ id: "things", partitionKey: { paths: ["/pk"] } });
  return { cosmos, database, container };
}

/** The authorization of a GET by resource ids, as the .NET SDK signs it: over the last id of the link, lower-cased. */
function signedByRid(key: string, type: string, rid: string): Record<string, string> {
  const date = new Date().toUTCString();
  const text = `get\n${type}\n${rid.toLowerCase()}\n${date.toLowerCase()}\n\n`;
  const sig = createHmac("sha256", Buffer.from(key, "base64")).update(text).digest("base64");
  return { authorization: encodeURIComponent(`type=master&ver=1.0&sig=${sig}`), "x-ms-date": date };
}

/** A signed GET of the server's REST API, as a client other than @azure/cosmos makes it. */
async function rest(cosmos: RunningCosmos, path: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${cosmos.endpoint.replace(/\/$/, "")}/${path}`, {
    headers: { ...authorizationHeaders(cosmos.key, "GET", path), "x-ms-version": "2018-12-31", ...headers },
  });
  return {
    status: response.status,
    headers: response.headers,
    body: response.status === 200 ? ((await response.json()) as Record<string, unknown>) : undefined,
  };
}

describe("resource ids", () => {
  it("are hierarchical: a database's 4 bytes, a collection's 8 beginning with them, documents, scripts and key ranges 16 beginning with the collection's", async () => {
    const { cosmos, database, container } = await server();
    const db = (await database.read()).resource!;
    const coll = (await container.read()).resource!;
    const { resource: doc } = await container.items.create({ id: "a", pk: "p" });
    const { resource: sproc } = await container.scripts.storedProcedures.create({ id: "s", body: "function s() {}" });
    expect([ridLevel(db._rid), ridLevel(coll._rid), ridLevel(doc!._rid), ridLevel(sproc!._rid)]).toEqual(["database", "collection", "document", "sproc"]);
    const bytes = (rid: string) => Buffer.from(rid.replace(/-/g, "/"), "base64");
    expect(bytes(coll._rid).subarray(0, 4)).toEqual(bytes(db._rid));
    expect([bytes(db._rid).length, bytes(coll._rid).length]).toEqual([4, 8]);
    for (const child of [doc!._rid, sproc!._rid]) {
      expect(bytes(child)).toHaveLength(16);
      expect(bytes(child).subarray(0, 8)).toEqual(bytes(coll._rid));
    }
    expect(doc!._self).toBe(`dbs/${db._rid}/colls/${coll._rid}/docs/${doc!._rid}/`);
    const ranges = await rest(cosmos, `dbs/${db._rid}/colls/${coll._rid}/pkranges`);
    expect((ranges.body!.PartitionKeyRanges as { _rid: string }[]).map((r) => ridLevel(r._rid))).toEqual(["pkrange", "pkrange", "pkrange", "pkrange"]);
    for (const range of ranges.body!.PartitionKeyRanges as { _rid: string }[]) {
      expect(bytes(range._rid)).toHaveLength(16);
      expect(bytes(range._rid).subarray(0, 8)).toEqual(bytes(coll._rid));
    }
  });

  it("of documents number them in insertion order, which queries without ORDER BY, and ORDER BY's ties, follow", async () => {
    const { container } = await server();
    const rids: string[] = [];
    for (let i = 0; i < 60; i++) rids.push((await container.items.create({ id: `i${i}`, pk: "p", same: 1 })).resource!._rid);
    const numbers = rids.map((rid) => documentNumber(rid)!);
    expect(numbers.every((n, i) => i === 0 || n > numbers[i - 1])).toBe(true);
    const { resources } = await container.items.query("SELECT c.id, c._rid FROM c", { partitionKey: "p", maxItemCount: 7 }).fetchAll();
    expect(resources.map((r: { id: string }) => r.id)).toEqual(rids.map((_, i) => `i${i}`));
    // Projections carry the real ids.
    expect(resources.map((r: { _rid: string }) => r._rid)).toEqual(rids);
    for (const order of ["ASC", "DESC"]) {
      const { resources: tied } = await container.items
        .query(`SELECT VALUE c.id FROM c ORDER BY c.same ${order}`, { partitionKey: "p", maxItemCount: 9 })
        .fetchAll();
      expect(tied).toEqual(rids.map((_, i) => `i${i}`));
    }
  });

  it("address a container's key ranges as the .NET SDK does: signed over the collection's id, lower-cased, with 304 once nothing changed", async () => {
    const { cosmos, database, container } = await server();
    const [db, coll] = [(await database.read()).resource!._rid, (await container.read()).resource!._rid];
    const path = `dbs/${db}/colls/${coll}/pkranges`;
    const first = await rest(cosmos, path, { "a-im": "Incremental Feed" });
    expect(first.status).toBe(200);
    expect(first.body!.PartitionKeyRanges).toHaveLength(4);
    const again = await rest(cosmos, path, { "a-im": "Incremental Feed", "if-none-match": first.headers.get("etag")! });
    expect(again.status).toBe(304);
    // The signature by resource id is the collection's id lower-cased, as the .NET SDK signs it.
    expect((await rest(cosmos, path, signedByRid(cosmos.key, "pkranges", coll))).status).toBe(200);
  });

  it("come with session tokens: the key range and its latest LSN, on every read and write of items", async () => {
    const { container } = await server();
    const created = await container.items.create({ id: "a", pk: "p" });
    const token = created.headers["x-ms-session-token"] as string;
    expect(token).toMatch(/^\d+:-1#\d+$/);
    const [range, lsn] = [token.split(":")[0], Number(token.split("#")[1])];
    const replaced = await container.item("a", "p").replace({ id: "a", pk: "p", n: 2 });
    expect(replaced.headers["x-ms-session-token"]).toBe(`${range}:-1#${lsn + 1}`);
  });

  it("are kept across restarts, and those of an older data directory (random bytes) are made well formed, the same on every load", async () => {
    const dir = mkdtempSync(join(tmpdir(), "rids-"));
    const first = await server(dir);
    await first.container.items.create({ id: "kept", pk: "p" });
    await first.container.scripts.storedProcedures.create({ id: "s", body: "function s() {}" });
    const before = (await first.container.read()).resource!._rid;
    await first.cosmos.stop();
    running.splice(0);
    const second = await server(dir);
    expect((await second.container.read()).resource!._rid).toBe(before);
    await second.cosmos.stop();
    running.splice(0);

    // An older journal: every resource id 6 random bytes, as before they had Cosmos DB's shape.
    const journal = join(dir, "journal.jsonl");
    const old = (rid: string) => (ridLevel(rid) ? "h3S99h-+" : rid);
    const lines = readFileSync(journal, "utf8").trimEnd().split("\n");
    const rewritten = lines.map((line) => {
      const json = line.slice(line.indexOf("\t") + 1).replace(/"_rid":"([^"]+)"/g, (_, rid: string) => `"_rid":"${old(rid)}"`);
      return `${crc32(json).toString(16).padStart(8, "0")}\t${json}\n`;
    });
    writeFileSync(journal, rewritten.join(""));
    const loads: string[] = [];
    for (let i = 0; i < 2; i++) {
      const { cosmos, container } = await server(dir);
      const coll = (await container.read()).resource!;
      const { resource: doc } = await container.item("kept", "p").read();
      const { resource: sproc } = await container.scripts.storedProcedure("s").read();
      expect([ridLevel(coll._rid), ridLevel(doc._rid), ridLevel(sproc!._rid)]).toEqual(["collection", "document", "sproc"]);
      loads.push(coll._rid);
      await cosmos.stop();
      running.splice(0);
    }
    expect(loads[0]).toBe(loads[1]);
  });
});
