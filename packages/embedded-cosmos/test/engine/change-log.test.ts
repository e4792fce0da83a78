import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChangeFeedStartFrom, StatusCodes, type ChangeFeedPullModelIterator, type Container } from "@azure/cosmos";
import { ManualClock } from "../fixture";
import { cosmosFixture, type CosmosFixture } from "../fixture";

let f: CosmosFixture;
/** The server's data clock (what `_ts` reads): moved by the test, not slept through. */
const clock = new ManualClock();
beforeAll(async () => (f = await cosmosFixture({ clock })));
afterAll(() => f.stop());

type Doc = { id: string; pk: string; v?: number; _lsn: number; _ts: number; _etag: string };

/** Reads until the feed answers 304, returning everything received. */
async function drain(iterator: ChangeFeedPullModelIterator<Doc>): Promise<{ items: Doc[]; pages: number[]; token: string }> {
  const items: Doc[] = [];
  const pages: number[] = [];
  for (;;) {
    const response = await iterator.readNext();
    if (response.statusCode === StatusCodes.NotModified) return { items, pages, token: response.continuationToken };
    pages.push(response.result.length);
    items.push(...response.result);
  }
}

async function write(c: Container, ids: string[], pk = "p") {
  for (const id of ids) await c.items.upsert({ id, pk });
}

describe("change feed (latest version)", () => {
  it("from the beginning delivers each item's latest version once, with _lsn, _ts and _etag", async () => {
    const c = await f.container();
    await write(c, ["a", "b", "c"]);
    await c.items.upsert({ id: "a", pk: "p", v: 2 });
    const { items } = await drain(c.items.getChangeFeedIterator<Doc>({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning() }));
    expect(items.map((d) => d.id)).toEqual(["b", "c", "a"]);
    expect(items[2].v).toBe(2);
    for (const d of items) {
      expect(typeof d._lsn).toBe("number");
      expect(typeof d._ts).toBe("number");
      expect(d._etag).toMatch(/^".+"$/);
    }
    const lsns = items.map((d) => d._lsn);
    expect([...lsns].sort((x, y) => x - y)).toEqual(lsns);
  });

  it("from now delivers only later writes, and writes after a 304 on the next read", async () => {
    const c = await f.container();
    await write(c, ["old"]);
    const iterator = c.items.getChangeFeedIterator<Doc>({ changeFeedStartFrom: ChangeFeedStartFrom.Now() });
    expect((await iterator.readNext()).statusCode).toBe(StatusCodes.NotModified);
    await write(c, ["new1"]);
    const next = await iterator.readNext();
    expect(next.statusCode).toBe(StatusCodes.Ok);
    expect(next.result.map((d) => d.id)).toEqual(["new1"]);
    expect((await iterator.readNext()).statusCode).toBe(StatusCodes.NotModified);
    await write(c, ["new2"]);
    expect((await iterator.readNext()).result.map((d) => d.id)).toEqual(["new2"]);
  });

  it("from a point in time skips what was written before it", async () => {
    const c = await f.container();
    await write(c, ["before"]);
    clock.advance(1000); // _ts has one-second resolution
    const since = clock.now();
    await write(c, ["after"]);
    const { items } = await drain(c.items.getChangeFeedIterator<Doc>({ changeFeedStartFrom: ChangeFeedStartFrom.Time(since) }));
    expect(items.map((d) => d.id)).toEqual(["after"]);
  });

  it("pages with maxItemCount without dropping items", async () => {
    const c = await f.container();
    await write(
      c,
      Array.from({ length: 25 }, (_, i) => `i${i}`),
    );
    const { items, pages } = await drain(c.items.getChangeFeedIterator<Doc>({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning(), maxItemCount: 10 }));
    expect(pages).toEqual([10, 10, 5]);
    expect(items.map((d) => d.id)).toEqual(Array.from({ length: 25 }, (_, i) => `i${i}`));
  });

  it("a reader restarted from its saved continuation gets every later write exactly once and nothing earlier", async () => {
    const c = await f.container();
    await write(c, ["e1", "e2"]);
    const first = await drain(c.items.getChangeFeedIterator<Doc>({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning() }));
    expect(first.items.map((d) => d.id)).toEqual(["e1", "e2"]);
    const later = Array.from({ length: 15 }, (_, i) => `l${i}`);
    await write(c, later.slice(0, 8), "p");
    await write(c, later.slice(8), "q");
    const resumed = await drain(c.items.getChangeFeedIterator<Doc>({ changeFeedStartFrom: ChangeFeedStartFrom.Continuation(first.token), maxItemCount: 4 }));
    expect(resumed.items.map((d) => d.id)).toEqual(later);
    const again = await drain(c.items.getChangeFeedIterator<Doc>({ changeFeedStartFrom: ChangeFeedStartFrom.Continuation(resumed.token) }));
    expect(again.items).toEqual([]);
  });

  it("reads one logical partition in write order when given a partition key", async () => {
    const c = await f.container();
    await write(c, ["x1"], "x");
    await write(c, ["y1"], "y");
    await write(c, ["x2"], "x");
    const { items } = await drain(c.items.getChangeFeedIterator<Doc>({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning("x") }));
    expect(items.map((d) => d.id)).toEqual(["x1", "x2"]);
  });

  it("does not deliver deletes (latest-version mode)", async () => {
    const c = await f.container();
    await write(c, ["keep", "gone"]);
    await c.item("gone", "p").delete();
    const { items } = await drain(c.items.getChangeFeedIterator<Doc>({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning() }));
    expect(items.map((d) => d.id)).toEqual(["keep"]);
  });
});
