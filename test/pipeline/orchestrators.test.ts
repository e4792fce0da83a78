import { describe, expect, it } from "vitest";
import { FEED_REFRESH_ACTIVITIES, refreshFeedCopy } from "../../src/pipeline/feed-refresh";
import { DEFAULT_POLICY, failureBackoff } from "../../src/pipeline/policy";
import { CLAIMS_ACTIVITIES, releaseOrphanedUsernames } from "../../src/pipeline/username-claims-orchestration";
import { propagateUsername, PROPAGATION_ACTIVITIES } from "../../src/pipeline/username-propagation-orchestration";
import { History, replay } from "../support/replay";

/**
 * The app's orchestrators, each decision checked from a written history through the package's
 * replay engine, as durable-functions tests its own: no host, no clock, no sleeps.
 */
const { findStalePartitions, renameInPartition } = PROPAGATION_ACTIVITIES;
const retry = { firstRetryIntervalInMilliseconds: DEFAULT_POLICY.activityRetryFirstMs, maxNumberOfAttempts: DEFAULT_POLICY.activityAttempts };

describe("propagateUsername, from its history", () => {
  const input = { userId: "u1" };
  const lookup = { userId: "u1", continuation: null, pageSize: DEFAULT_POLICY.pageSize };

  it("first looks up one page of the partitions that still hold the old name", async () => {
    const result = await replay(propagateUsername, new History("propagateUsername", input));
    expect(result.isDone).toBe(false);
    expect(result.decisions).toEqual([{ type: "CallActivityWithRetry", name: findStalePartitions, input: lookup }]);
  });

  it("renames every partition of the page at once, then continues as new with the lookup's continuation and its progress", async () => {
    const history = new History("propagateUsername", input);
    history.completed(history.scheduled(findStalePartitions, lookup), { username: "new", postIds: ["p1", "p2"], continuation: "c1" });
    const fanOut = await replay(propagateUsername, history);
    expect(fanOut.decisions.slice(1)).toEqual([
      { type: "CallActivityWithRetry", name: renameInPartition, input: { userId: "u1", postId: "p1" } },
      { type: "CallActivityWithRetry", name: renameInPartition, input: { userId: "u1", postId: "p2" } },
    ]);

    history.episode();
    const [p1, p2] = [history.scheduled(renameInPartition, {}), history.scheduled(renameInPartition, {})];
    history.completed(p2, { updated: 4 }).episode().completed(p1, { updated: 3 });
    const next = await replay(propagateUsername, history);
    const status = { username: "new", sweep: 0, pages: 1, partitions: 2, updated: 7, failures: 0 };
    expect(next.customStatus).toEqual(status);
    expect(next.decisions.at(-1)).toEqual({ type: "ContinueAsNew", input: { userId: "u1", status, continuation: "c1", renamedThisSweep: 2 } });
  });

  it("after a sweep that renamed something, waits settleMs and sweeps again; a sweep that finds nothing ends it", async () => {
    const carried = {
      userId: "u1",
      continuation: "c1",
      renamedThisSweep: 2,
      status: { username: "new", sweep: 0, pages: 1, partitions: 2, updated: 7, failures: 0 },
    };
    const history = new History("propagateUsername", carried);
    history.completed(history.scheduled(findStalePartitions, {}), { username: "new", postIds: [], continuation: null });
    const waiting = await replay(propagateUsername, history);
    const fireAt = new Date(history.now.getTime() + DEFAULT_POLICY.settleMs);
    expect(waiting.decisions.at(-1)).toEqual({ type: "CreateTimer", fireAt: fireAt.toISOString() });

    history.episode();
    history.timerFired(history.timerCreated(fireAt), fireAt);
    const again = await replay(propagateUsername, history);
    expect(again.decisions.at(-1)).toMatchObject({ type: "ContinueAsNew", input: { continuation: null, renamedThisSweep: 0, status: { sweep: 1, pages: 2 } } });

    const lastSweep = new History("propagateUsername", {
      userId: "u1",
      continuation: null,
      renamedThisSweep: 0,
      status: { ...carried.status, sweep: 1, pages: 2 },
    });
    lastSweep.completed(lastSweep.scheduled(findStalePartitions, {}), { username: "new", postIds: [], continuation: null });
    const done = await replay(propagateUsername, lastSweep);
    expect(done).toMatchObject({ isDone: true, output: { username: "new", sweep: 1, pages: 3, failures: 0 } });
  });

  it("when a lookup fails every attempt, records the error, backs off on a durable timer and tries the round again", async () => {
    const history = new History("propagateUsername", input);
    history.failsEveryAttempt(findStalePartitions, lookup, retry.maxNumberOfAttempts, "Cosmos DB is unavailable");
    const backingOff = await replay(propagateUsername, history);
    expect(backingOff.customStatus).toMatchObject({ failures: 1, lastError: expect.stringMatching(/unavailable/) });
    const fireAt = new Date(history.now.getTime() + failureBackoff(DEFAULT_POLICY, 1));
    expect(backingOff.decisions.at(-1)).toEqual({ type: "CreateTimer", fireAt: fireAt.toISOString() });

    history.episode();
    history.timerFired(history.timerCreated(fireAt), fireAt);
    const retried = await replay(propagateUsername, history);
    expect(retried.decisions.at(-1)).toMatchObject({ type: "ContinueAsNew", input: { userId: "u1", status: { failures: 1 } } });
  });

  it("fails at once, with the reason, on an input or a profile no retry can mend", async () => {
    await expect(replay(propagateUsername, new History("propagateUsername", { userId: "not a valid id!" }))).rejects.toThrow(
      /propagateUsername refuses its input: userId/,
    );
    const malformed = new History("propagateUsername", input);
    malformed.completed(malformed.scheduled(findStalePartitions, lookup), {
      username: null,
      postIds: [],
      continuation: null,
      permanentFailure: "the profile u1 is malformed",
    });
    await expect(replay(propagateUsername, malformed)).rejects.toThrow(/the profile u1 is malformed/);
  });
});

describe("refreshFeedCopy, from its history", () => {
  it("waits until the refresh is due, copies the post, and backs off and starts over when the copy fails", async () => {
    const dueAt = new Date("2026-01-01T00:00:05.000Z");
    const input = { postId: "p1", sourceLsn: 12, dueAt: dueAt.toISOString() };
    const history = new History("refreshFeedCopy", input);
    expect((await replay(refreshFeedCopy, history)).decisions).toEqual([{ type: "CreateTimer", fireAt: dueAt.toISOString() }]);
    history.timerFired(history.timerCreated(dueAt), dueAt);
    const copying = await replay(refreshFeedCopy, history);
    expect(copying.decisions.at(-1)).toEqual({
      type: "CallActivityWithRetry",
      name: FEED_REFRESH_ACTIVITIES.copyPostToFeed,
      input: { postId: "p1", sourceLsn: 12 },
    });

    const copied = new History("refreshFeedCopy", input, dueAt.toISOString());
    copied.completed(copied.scheduled(FEED_REFRESH_ACTIVITIES.copyPostToFeed, {}), "copied");
    expect(await replay(refreshFeedCopy, copied)).toMatchObject({ isDone: true, output: "copied" });

    const failing = new History("refreshFeedCopy", input, dueAt.toISOString());
    failing.failsEveryAttempt(FEED_REFRESH_ACTIVITIES.copyPostToFeed, {}, retry.maxNumberOfAttempts, "throttled");
    const fireAt = new Date(failing.now.getTime() + failureBackoff(DEFAULT_POLICY, 1));
    failing.episode();
    failing.timerFired(failing.timerCreated(fireAt), fireAt);
    expect((await replay(refreshFeedCopy, failing)).decisions.at(-1)).toMatchObject({ type: "ContinueAsNew", input: { postId: "p1", failures: 1 } });
  });
});

describe("releaseOrphanedUsernames, from its history", () => {
  it("ends once no claim is pending, and looks again after claimRecheckMs while one is", async () => {
    const input = { userId: "u1" };
    const clear = new History("releaseOrphanedUsernames", input);
    const call = clear.scheduled(CLAIMS_ACTIVITIES.releaseOrphanedClaims, {});
    expect((await replay(releaseOrphanedUsernames, new History("releaseOrphanedUsernames", input))).decisions).toEqual([
      {
        type: "CallActivityWithRetry",
        name: CLAIMS_ACTIVITIES.releaseOrphanedClaims,
        input: { userId: "u1", unbornGraceSeconds: DEFAULT_POLICY.unbornClaimGraceSeconds },
      },
    ]);
    clear.completed(call, { released: 2, pending: 0 });
    expect(await replay(releaseOrphanedUsernames, clear)).toMatchObject({ isDone: true, output: { released: 2 } });

    const pending = new History("releaseOrphanedUsernames", input);
    pending.completed(pending.scheduled(CLAIMS_ACTIVITIES.releaseOrphanedClaims, {}), { released: 0, pending: 1 });
    const fireAt = new Date(pending.now.getTime() + DEFAULT_POLICY.claimRecheckMs);
    expect((await replay(releaseOrphanedUsernames, pending)).decisions.at(-1)).toEqual({ type: "CreateTimer", fireAt: fireAt.toISOString() });
    pending.episode();
    pending.timerFired(pending.timerCreated(fireAt), fireAt);
    expect((await replay(releaseOrphanedUsernames, pending)).decisions.at(-1)).toEqual({ type: "ContinueAsNew", input: { userId: "u1", failures: 0 } });
  });
});
