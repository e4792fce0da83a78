import { describe, expect, it } from "vitest";
import { LeaseSightings, shareToTake } from "../src/fair-share";

const EXPIRATION = 60_000;
const lease = (id: string, owner: string, timestamp: string) => ({ id, owner, timestamp });

describe("which leases a consumer takes", () => {
  it("takes a lease whose owner stopped writing longer ago than the expiration", () => {
    const now = Date.parse("2026-11-28T12:00:00Z");
    const leases = [lease("0", "gone", "2026-11-28T11:58:00Z"), lease("1", "alive", "2026-11-28T11:59:50Z")];
    expect(shareToTake(leases, new Set(), "me", EXPIRATION, new LeaseSightings(), now).free.map((l) => l.id)).toEqual(["0"]);
  });

  it("takes a lease stamped in the future or with no readable time once it has stayed unchanged for the expiration on this clock", () => {
    const sightings = new LeaseSightings();
    const start = Date.parse("2026-11-28T12:00:00Z");
    const leases = [lease("0", "ghost", "9999-12-31T23:59:59Z"), lease("1", "ghost", "not a time")];
    expect(shareToTake(leases, new Set(), "me", EXPIRATION, sightings, start).free).toEqual([]);
    expect(shareToTake(leases, new Set(), "me", EXPIRATION, sightings, start + EXPIRATION).free).toEqual([]);
    expect(shareToTake(leases, new Set(), "me", EXPIRATION, sightings, start + EXPIRATION + 1).free.map((l) => l.id)).toEqual(["0", "1"]);
  });

  it("leaves a lease whose owner keeps renewing it, even with its clock ahead of this one", () => {
    const sightings = new LeaseSightings();
    const start = Date.parse("2026-11-28T12:00:00Z");
    for (let minute = 0; minute < 5; minute++) {
      const now = start + minute * EXPIRATION;
      // The owner's clock runs an hour ahead; it renews every minute.
      const renewed = [lease("0", "ahead", new Date(now + 3_600_000).toISOString())];
      expect(shareToTake(renewed, new Set(), "me", EXPIRATION, sightings, now).free).toEqual([]);
    }
  });
});
