import { execFileSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { ItemsChanged, RunningCosmos } from "../src";
import { startCosmosThread } from "../src";
import { clientFor, eventually } from "./fixture";

/** The embedded server on a thread of its own (what npm start runs): the same server, apart from the caller's event loop. */
const running: RunningCosmos[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((cosmos) => cosmos.stop()));
});

async function started(options: Parameters<typeof startCosmosThread>[0] = {}): Promise<RunningCosmos> {
  const cosmos = await startCosmosThread(options);
  running.push(cosmos);
  return cosmos;
}

async function itemsOf(cosmos: RunningCosmos) {
  const { database } = await clientFor(cosmos).databases.createIfNotExists({ id: "threaded" });
  const { container } = await database.containers.createIfNotExists({ id: "items", partitionKey: { paths: ["/pk"] } });
  return container;
}

/** The status a request from another process gets, while this thread's event loop waits for that process. */
const statusFromAnotherProcess = (endpoint: string) =>
  execFileSync(process.execPath, ["-e", `fetch(${JSON.stringify(endpoint)}).then((r) => process.stdout.write(String(r.status)))`], {
    encoding: "utf8",
    timeout: 30_000,
  });

describe("startCosmosThread", () => {
  it("answers while the caller's event loop is blocked: the server runs on its own thread", async () => {
    const cosmos = await started();
    // Unsigned, so 401: any answer at all means the server did not need this thread to give it.
    expect(statusFromAnotherProcess(cosmos.endpoint)).toBe("401");
  });

  it("serves the SDK, and tells watchItems of each committed write across the thread", async () => {
    const cosmos = await started();
    const container = await itemsOf(cosmos);
    const changes: ItemsChanged[] = [];
    const unwatch = cosmos.watchItems((change) => changes.push(change));
    await container.items.create({ id: "a", pk: "p" });
    await eventually(() => expect(changes).toContainEqual({ database: "threaded", container: "items" }));
    unwatch();
    const seen = changes.length;
    await container.items.create({ id: "b", pk: "p" });
    const { resource } = await container.item("b", "p").read();
    expect(resource?.id).toBe("b");
    expect(changes).toHaveLength(seen);
  });

  it("keeps its data directory across a stop and a start", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "cosmos-thread-"));
    const first = await started({ dataDir });
    await (await itemsOf(first)).items.create({ id: "kept", pk: "p" });
    await first.stop();
    const second = await started({ dataDir });
    const { resource } = await (await itemsOf(second)).item("kept", "p").read();
    expect(resource?.id).toBe("kept");
  });

  it("rejects a start that fails (the port is taken), and its stop closes the port", async () => {
    const first = await started();
    const port = Number(new URL(first.endpoint).port);
    await expect(startCosmosThread({ port })).rejects.toThrow(/EADDRINUSE/);
    await first.stop();
    await expect(fetch(first.endpoint)).rejects.toThrow();
  });
});
