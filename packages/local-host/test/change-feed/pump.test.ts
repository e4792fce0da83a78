import { setTimeout as sleep } from "node:timers/promises";
import type { Container } from "@azure/cosmos";
import { afterEach, describe, expect, it } from "vitest";
import { ChangeFeedPump } from "../../src";
import { watchedTrigger } from "../support/watched";
import { cosmosFixture, eventually, type CosmosFixture } from "../../../embedded-cosmos/test/fixture";

/**
 * A drained lease of a pump told of the server's writes (the embedded server in the same
 * process) waits for a write instead of reading its range again every poll delay.
 */
let fixture: CosmosFixture | undefined;
let pump: ChangeFeedPump | undefined;
afterEach(async () => {
  await pump?.stop();
  await fixture?.stop();
  pump = fixture = undefined;
});

/** Counts the change feed reads the pump makes on `container` (each iterator's readNext). */
function countReads(container: Container): { reads: number } {
  const counter = { reads: 0 };
  const items = container.items;
  const iteratorOf = items.getChangeFeedIterator.bind(items);
  items.getChangeFeedIterator = ((options: Parameters<typeof iteratorOf>[0]) => {
    const iterator = iteratorOf(options);
    const readNext = iterator.readNext.bind(iterator);
    iterator.readNext = () => {
      counter.reads++;
      return readNext();
    };
    return iterator;
  }) as typeof items.getChangeFeedIterator;
  return counter;
}

describe("a pump told of the server's writes", () => {
  it("reads a drained range again once a write comes, and not every poll delay while none does", async () => {
    fixture = await cosmosFixture();
    const watched = await fixture.container({ id: "watched", partitionKey: { paths: ["/pk"] } });
    const leases = await fixture.container({ id: "leases", partitionKey: { paths: ["/id"] } });
    const counter = countReads(watched);
    const delivered: string[] = [];
    const trigger = watchedTrigger(async (documents) => void delivered.push(...(documents as { id: string }[]).map((d) => d.id)));
    pump = new ChangeFeedPump(watched, leases, trigger, {
      pollMs: 20,
      // Only a write can end a drained lease's wait within this test: the fallback read is a minute away.
      idlePollMs: 60_000,
      changes: (notify) => fixture!.cosmos.watchItems((change) => change.container === "watched" && notify()),
      maxItems: 100,
      owner: "watching",
      accountHost: "127.0.0.1",
      leases: { expirationMs: 60_000, renewMs: 17_000, acquireMs: 13_000 },
      log: () => {},
    });
    pump.start();
    await eventually(async () => (pump!.ownedLeases().length === 4 && counter.reads >= 4 ? true : undefined));

    // Nothing written: at a 20 ms poll delay, four drained leases would read about 200 times a second.
    const quiet = counter.reads;
    await sleep(1000);
    expect(counter.reads - quiet).toBeLessThan(10);

    for (const id of ["a", "b", "c", "d", "e"]) await watched.items.create({ id, pk: `pk-${id}` });
    await eventually(async () => (["a", "b", "c", "d", "e"].every((id) => delivered.includes(id)) ? true : undefined), 20_000);
    // A write to another container wakes no lease of this one.
    const other = await fixture.container({ id: "other", partitionKey: { paths: ["/pk"] } });
    const settled = counter.reads;
    for (const id of ["x", "y"]) await other.items.create({ id, pk: id });
    await sleep(500);
    expect(counter.reads - settled).toBeLessThan(4);
  });
});
