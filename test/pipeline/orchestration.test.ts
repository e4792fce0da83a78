import { describe, expect, it } from "vitest";
import { RetryOptions, type OrchestrationContext } from "durable-functions";
import { LocalDurableRuntime, withRetry } from "../../local/host/durable";
import { ACTIVITIES, activityRetry, FAN_OUT, MAX_ROUNDS, propagateUsername, type PartitionRename, type PropagationStatus, type StalePartitions } from "../../src/pipeline/username-propagation";

type Yielded =
  | { kind: "activity"; name: string; input: unknown; retry: unknown }
  | { kind: "all"; tasks: Yielded[] }
  | { kind: "timer"; at: Date };

/** Drives the orchestrator generator by hand: every yielded task goes to `respond`. */
function drive(respond: (task: Yielded) => unknown, userId = "u1") {
  const statuses: PropagationStatus[] = [];
  const yielded: Yielded[] = [];
  const context = {
    df: {
      getInput: () => ({ userId }),
      currentUtcDateTime: new Date("2026-01-01T00:00:00Z"),
      setCustomStatus: (status: PropagationStatus) => statuses.push(status),
      callActivityWithRetry: (name: string, retry: unknown, input: unknown): Yielded => ({ kind: "activity", name, retry, input }),
      createTimer: (at: Date): Yielded => ({ kind: "timer", at }),
      Task: { all: (tasks: Yielded[]): Yielded => ({ kind: "all", tasks }) },
    },
  } as unknown as OrchestrationContext;
  const generator = propagateUsername(context);
  let step = generator.next();
  while (!step.done) {
    const task = step.value as unknown as Yielded;
    yielded.push(task);
    step = generator.next(respond(task));
  }
  return { result: step.value, statuses, yielded };
}

const stale = (postIds: string[], username = "new-name"): StalePartitions => ({ username, postIds });
const renamed = (continuation: string | null = null) => ({ updated: 3, continuation });

describe("propagateUsername orchestrator", () => {
  it("finishes at once when no partition carries another name", () => {
    const { result, yielded } = drive(() => stale([]));
    expect(yielded).toEqual([{ kind: "activity", name: ACTIVITIES.findStalePartitions, retry: activityRetry, input: { userId: "u1" } }]);
    expect(result).toMatchObject({ round: 0, partitions: 0, updated: 0, username: "new-name" });
  });

  it("fans out one activity per partition, at most FAN_OUT at a time, with retry options", () => {
    const postIds = Array.from({ length: 120 }, (_, i) => `p${i}`);
    let finds = 0;
    const { result, yielded, statuses } = drive((task) => {
      if (task.kind === "activity") return finds++ === 0 ? stale(postIds) : stale([]);
      if (task.kind === "all") return task.tasks.map(() => renamed());
      return undefined;
    });
    const fanOuts = yielded.filter((t): t is Extract<Yielded, { kind: "all" }> => t.kind === "all");
    expect(fanOuts.map((f) => f.tasks.length)).toEqual([FAN_OUT, FAN_OUT, 20]);
    const renames = fanOuts.flatMap((f) => f.tasks) as Extract<Yielded, { kind: "activity" }>[];
    expect(renames.every((t) => t.name === ACTIVITIES.renameInPartition && t.retry === activityRetry)).toBe(true);
    expect(renames.map((t) => (t.input as PartitionRename).postId)).toEqual(postIds);
    expect(statuses.map((s) => s.done)).toEqual([50, 100, 120, 120]);
    expect(result).toMatchObject({ round: 1, partitions: 120, done: 120, updated: 360 });
  });

  it("calls a partition again with its continuation until the stored procedure is done", () => {
    let finds = 0;
    const calls: PartitionRename[] = [];
    drive((task) => {
      if (task.kind === "activity") return finds++ === 0 ? stale(["big", "small"]) : stale([]);
      if (task.kind === "all") {
        const inputs = task.tasks.map((t) => (t as Extract<Yielded, { kind: "activity" }>).input as PartitionRename);
        calls.push(...inputs);
        return inputs.map((input) => (input.postId === "big" && (input.continuation ?? "0") < "2" ? renamed(String(Number(input.continuation ?? "0") + 1)) : renamed()));
      }
      return undefined;
    });
    expect(calls.map((c) => `${c.postId}:${c.continuation}`)).toEqual(["big:null", "small:null", "big:1", "big:2"]);
  });

  it("waits, then sweeps again for writes that raced the rename, until none is left", () => {
    const finds = [stale(["a", "b"]), stale(["late"]), stale([])];
    const { result, yielded } = drive((task) => {
      if (task.kind === "activity") return finds.shift();
      if (task.kind === "all") return task.tasks.map(() => renamed());
      return undefined;
    });
    expect(yielded.filter((t) => t.kind === "timer")).toHaveLength(2);
    expect(result).toMatchObject({ round: 2, partitions: 3 });
  });

  it("gives up sweeping after MAX_ROUNDS", () => {
    const { result } = drive((task) => (task.kind === "activity" ? stale(["always-stale"]) : task.kind === "all" ? task.tasks.map(() => renamed()) : undefined));
    expect((result as PropagationStatus).round).toBe(MAX_ROUNDS);
  });
});

describe("local durable runtime", () => {
  it("retries a failing activity per RetryOptions and completes", async () => {
    let calls = 0;
    const runtime = new LocalDurableRuntime(
      { propagateUsername },
      {
        [ACTIVITIES.findStalePartitions]: async () => {
          calls += 1;
          if (calls < 3) throw new Error("transient");
          return calls === 3 ? stale(["p1"]) : stale([]);
        },
        [ACTIVITIES.renameInPartition]: async () => renamed(),
      },
    );
    expect(runtime.startNew("propagateUsername", "i1", { userId: "u1" })).toBe(true);
    expect(runtime.startNew("propagateUsername", "i1", { userId: "u1" })).toBe(false);
    await runtime.idle();
    expect(runtime.getStatus("i1")).toMatchObject({ runtimeStatus: "Completed", customStatus: { done: 1, partitions: 1 } });
    expect(calls).toBe(4);
  });

  it("fails the instance when an activity keeps failing", async () => {
    let attempts = 0;
    const quickRetry = new RetryOptions(10, 3);
    const orchestrator = function* (context: OrchestrationContext) {
      yield context.df.callActivityWithRetry("flaky", quickRetry);
    };
    const runtime = new LocalDurableRuntime({ orchestrator }, { flaky: async () => Promise.reject(new Error(`down ${++attempts}`)) });
    runtime.startNew("orchestrator", "i2", {});
    await runtime.idle();
    expect(runtime.getStatus("i2")).toMatchObject({ runtimeStatus: "Failed", error: "down 3" });
  });

  it("withRetry backs off by the coefficient and stops at maxNumberOfAttempts", async () => {
    const started = Date.now();
    let attempts = 0;
    await expect(withRetry({ firstRetryIntervalInMilliseconds: 20, maxNumberOfAttempts: 3, backoffCoefficient: 2, maxRetryIntervalInMilliseconds: 1000 } as never, async () => {
      attempts++;
      throw new Error("no");
    })).rejects.toThrow("no");
    expect(attempts).toBe(3);
    expect(Date.now() - started).toBeGreaterThanOrEqual(55); // 20 + 40 ms
  });
});
