import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { localSystem, within, type Client } from "../support/system";

/**
 * Without If-Match the last writer wins, also for a burst of renames of one profile over HTTP
 * while the whole system runs (change feed, propagation, claim sweeps): every rename answers
 * 200, the profile ends with one of the names, and the other names are free again.
 */
let app: Client;
beforeAll(async () => {
  app = await localSystem();
  await app.call("POST", "/users", { as: "alice", body: { username: "alice" } });
});
afterAll(() => app.stop());

const claimsOf = async (userId: string) =>
  (
    await app.system.store.users.items
      .query<string>({
        query: "SELECT VALUE c.username FROM c WHERE c.type = 'username' AND c.ownerId = @owner",
        parameters: [{ name: "@owner", value: userId }],
      })
      .fetchAll()
  ).resources.sort();

describe("concurrent renames of one profile", () => {
  it("all answer 200, round after round, and leave only the winner's name claimed", async () => {
    for (let round = 0; round < 5; round++) {
      const names = Array.from({ length: 8 }, (_, i) => `alice-${round}-${i}`);
      const responses = await Promise.all(names.map((username) => app.call("PUT", "/users/alice", { as: "alice", body: { username } })));
      expect(
        responses.map((r) => r.status),
        `round ${round}`,
      ).toEqual(names.map(() => 200));
      const winner = (await app.call("GET", "/users/alice")).body.username as string;
      expect(names).toContain(winner);
      // The losers' names are released: by the rename itself, or by the claim sweep soon after.
      await within(20_000, async () => JSON.stringify(await claimsOf("alice")) === JSON.stringify([winner]));
      for (const loser of names.filter((name) => name !== winner)) {
        expect((await app.call("POST", "/users", { as: `taker-${loser}`, body: { username: loser } })).status, loser).toBe(201);
      }
    }
  }, 180_000);
});
