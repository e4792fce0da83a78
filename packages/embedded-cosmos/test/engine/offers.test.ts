import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startCosmos, type RunningCosmos } from "../../src";
import { clientFor, statusOf } from "../fixture";

/** Throughput offers, as the SDKs read and replace a container's throughput (the .NET SDK's side: test/dotnet). */
const running: RunningCosmos[] = [];
afterEach(async () => Promise.all(running.splice(0).map((cosmos) => cosmos.stop())));

async function database(dataDir?: string) {
  const cosmos = await startCosmos({ port: 0, dataDir });
  running.push(cosmos);
  return { cosmos, database: (await clientFor(cosmos).databases.createIfNotExists({ id: "offers" })).database };
}

describe("throughput offers", () => {
  it("give each container the throughput it was created with (400 RU/s by default), replaced through its offer and kept across restarts", async () => {
    const dir = mkdtempSync(join(tmpdir(), "offers-"));
    const first = await database(dir);
    const { container } = await first.database.containers.create({ id: "c", partitionKey: { paths: ["/pk"] }, throughput: 500 });
    const { container: plain } = await first.database.containers.create({ id: "plain", partitionKey: { paths: ["/pk"] } });
    const { resource: offer } = await container.readOffer();
    expect(offer!.content!.offerThroughput).toBe(500);
    expect(offer!.offerResourceId).toBe((await container.read()).resource!._rid);
    expect((await plain.readOffer()).resource!.content!.offerThroughput).toBe(400);
    const { resource: replaced } = await clientFor(first.cosmos)
      .offer(offer!.id)
      .replace({ ...offer!, content: { offerThroughput: 1200 } });
    expect(replaced!.content!.offerThroughput).toBe(1200);
    await first.cosmos.stop();
    running.splice(0);

    const second = await database(dir);
    expect((await second.database.container("c").readOffer()).resource!.content!.offerThroughput).toBe(1200);
  });

  it("refuse a throughput the service refuses, create nothing then, and go with their container", async () => {
    const { cosmos, database: db } = await database();
    expect(await statusOf(db.containers.create({ id: "tiny", partitionKey: { paths: ["/pk"] }, throughput: 50 }))).toBe(400);
    expect(await statusOf(db.container("tiny").read())).toBe(404);
    const { container } = await db.containers.create({ id: "gone", partitionKey: { paths: ["/pk"] } });
    const rid = (await container.read()).resource!._rid;
    await container.delete();
    const { resources } = await clientFor(cosmos).offers.readAll().fetchAll();
    expect(resources.some((offer) => offer.offerResourceId === rid)).toBe(false);
  });
});
