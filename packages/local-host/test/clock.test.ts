import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { OrchestrationContext } from "durable-functions";
import { DurableHost, fileInstanceStore, systemClock } from "../src";
import { durableFunctions } from "./support/durable-functions";

/**
 * A durable timer weeks ahead, on the system clock `npm start` runs: Node fires a timeout of more
 * than 2^31-1 ms (24.8 days) at once, so such a timer must wait in steps. The fake timers here
 * behave as Node's do (an overlong delay becomes 1 ms), so the test sees what a real host would.
 */
const DAY = 24 * 60 * 60 * 1000;
beforeEach(() => void vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"], now: Date.parse("2026-01-01T00:00:00Z") }));
afterEach(() => void vi.useRealTimers());

describe("the system clock", () => {
  it("fires a time 30 days ahead at that time, not at once", async () => {
    const fired = vi.fn();
    systemClock.at(new Date(Date.now() + 30 * DAY), fired);
    await vi.advanceTimersByTimeAsync(10);
    expect(fired).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(30 * DAY - 1000);
    expect(fired).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1000);
    expect(fired).toHaveBeenCalledOnce();
  });

  it("can cancel a long wait between its steps", async () => {
    const fired = vi.fn();
    const cancel = systemClock.at(new Date(Date.now() + 40 * DAY), fired);
    await vi.advanceTimersByTimeAsync(3 * DAY);
    cancel();
    await vi.advanceTimersByTimeAsync(40 * DAY);
    expect(fired).not.toHaveBeenCalled();
  });
});

describe("a durable timer 30 days ahead", () => {
  function* waitAMonth(context: OrchestrationContext) {
    yield context.df.createTimer(new Date(context.df.currentUtcDateTime.getTime() + 30 * DAY));
    return "woke";
  }

  it("keeps its instance Running until then, survives a restart, and completes at its time", async () => {
    const dir = mkdtempSync(join(tmpdir(), "long-timer-"));
    const first = new DurableHost({ functions: durableFunctions({ orchestrations: { waitAMonth } }), store: fileInstanceStore(dir) });
    await first.startNew("waitAMonth", { instanceId: "month" });
    await vi.advanceTimersByTimeAsync(1000);
    expect((await first.getStatus("month"))?.runtimeStatus).toBe("Running");
    await first.stop();

    await vi.advanceTimersByTimeAsync(10 * DAY);
    const second = new DurableHost({ functions: durableFunctions({ orchestrations: { waitAMonth } }), store: fileInstanceStore(dir) });
    second.resume();
    await vi.advanceTimersByTimeAsync(10);
    expect((await second.getStatus("month"))?.runtimeStatus).toBe("Running");
    await vi.advanceTimersByTimeAsync(20 * DAY);
    expect((await second.getStatus("month"))?.runtimeStatus).toBe("Completed");
    expect((await second.getStatus("month"))?.output).toBe("woke");
    await second.stop();
  });
});
