import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHttpServer, DURABLE_API_PATH, DurableHost, fileInstanceStore, memoryInstanceStore } from "local-host";
import { localSystem, within, type Client } from "../support/system";
import { durableFunctions } from "../support/local-host";

/**
 * Every id the API accepts (1-128 of A-Z, a-z, 0-9, `_.@|-`) flows into instance ids and file
 * names of the durable host: none may be too long to store, and a start that cannot be stored
 * leaves nothing behind, so the change that caused it is delivered again instead of forgotten.
 */
const longId = `u${"|".repeat(127)}`;
let app: Client;
let dataDir: string;
beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "unusual-ids-"));
  app = await localSystem({ dataDir });
});
afterAll(() => app.stop());

describe("a user id of 128 characters, most of them '|'", () => {
  it("renames: the propagation is stored and reaches the user's posts", async () => {
    expect((await app.call("POST", "/users", { as: longId, body: { username: "pipes-1" } })).status).toBe(201);
    const postId = (await app.call("POST", "/posts", { as: longId, body: { title: "t", content: "c" } })).body.postId;
    // The posts change feed has seen the post (its copy is in Q3): from now on only the propagation renames it.
    await within(30_000, async () => (await app.call("GET", `/users/${encodeURIComponent(longId)}/posts`)).body?.items?.length === 1);
    expect((await app.call("PUT", `/users/${encodeURIComponent(longId)}`, { as: longId, body: { username: "pipes-2" } })).status).toBe(200);
    await within(30_000, async () => (await app.call("GET", `/posts/${postId}`)).body.userUsername === "pipes-2");
    const names = readdirSync(join(dataDir, "durable"));
    expect(names.length).toBeGreaterThan(0);
    expect(names.every((name) => Buffer.byteLength(name) <= 255)).toBe(true);
    expect(app.logs.join("\n")).not.toMatch(/ENAMETOOLONG/);
  }, 60_000);
});

describe("the durable host's store", () => {
  it("keeps an instance whose id would make a file name over 255 bytes, and finds it again after a restart", async () => {
    const directory = mkdtempSync(join(tmpdir(), "long-instance-"));
    const orchestrations = { noop: function* () {} };
    const first = new DurableHost({ functions: durableFunctions({ orchestrations }), store: fileInstanceStore(directory) });
    const id = `instance-${"@|".repeat(60)}`;
    await first.startNew("noop", { instanceId: id });
    await first.waitForIdle();
    await first.stop();
    const second = new DurableHost({ functions: durableFunctions({ orchestrations }), store: fileInstanceStore(directory) });
    expect((await second.getStatus(id))?.runtimeStatus).toBe("Completed");
    await second.stop();
  });

  it("leaves nothing behind when an instance cannot be stored: its starter sees the failure and may try again", async () => {
    const store = memoryInstanceStore();
    let failing = true;
    const save = store.save;
    store.save = (record) => {
      if (failing) throw new Error("ENOSPC: no space left on device, open '/very/private/path'");
      save(record);
    };
    const host = new DurableHost({ functions: durableFunctions({ orchestrations: { noop: function* () {} } }), store });
    await expect(host.startNew("noop", { instanceId: "unstorable" })).rejects.toThrow(/ENOSPC/);
    expect(await host.getStatus("unstorable")).toBeUndefined();
    // Through the Durable Functions API: the host's failure is a 500 that names no path on this machine.
    const logs: string[] = [];
    const server = createHttpServer([], { log: (line) => logs.push(line), durable: host });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const answer = await fetch(`http://localhost:${(server.address() as { port: number }).port}${DURABLE_API_PATH}orchestrators/noop/unstorable`, {
      method: "POST",
    });
    server.close();
    expect(answer.status).toBe(500);
    expect(await answer.text()).not.toMatch(/private|ENOSPC/);
    expect(logs.join("\n")).toMatch(/ENOSPC/);
    expect(await host.getStatus("unstorable")).toBeUndefined();
    failing = false;
    await host.startNew("noop", { instanceId: "unstorable" });
    await host.waitForIdle();
    expect((await host.getStatus("unstorable"))?.runtimeStatus).toBe("Completed");
    await host.stop();
  });
});
