import { trace } from "@opentelemetry/api";
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import * as df from "durable-functions";
import type { OrchestrationContext } from "durable-functions";
import { describe, expect, it, vi } from "vitest";
import { DurableHost, localTelemetry, ManualClock } from "../../src";
import { durableFunctions } from "../support/durable-functions";

/**
 * An orchestration's trace while it runs: one span per episode, exported when the episode ends,
 * so the activities it scheduled never point at a parent nobody has seen yet.
 */
const exporter = new InMemorySpanExporter();
localTelemetry({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const finished = () => exporter.getFinishedSpans();
/** The finished span that `matches`, waited for: the exporter takes each span a moment after it ends. */
const exported = (matches: (span: ReturnType<typeof finished>[number]) => boolean) =>
  vi.waitFor(() => {
    const span = finished().find(matches);
    if (!span) throw new Error("not exported yet");
    return span;
  });
const starter = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

describe("the spans of an orchestration", () => {
  it("makes each episode a span exported when it ends, in the starter's trace: a running instance's activities have their parent", async () => {
    const durable = new DurableHost({
      functions: durableFunctions({
        orchestrations: {
          waits: function* (context: OrchestrationContext) {
            yield context.df.callActivity("first");
            yield context.df.waitForExternalEvent("go");
            return yield context.df.callActivity("second");
          },
        },
        activities: {
          first: () => trace.getTracer("test").startActiveSpan("activity first", (span) => span.end()),
          second: () => trace.getTracer("test").startActiveSpan("activity second", (span) => span.end()),
        },
      }),
    });
    try {
      const id = await durable.startNew("waits", { traceParent: starter });
      await durable.settled();
      expect((await durable.getStatus(id, { showHistory: true }))?.runtimeStatus).toBe("Running");
      const first = await exported((s) => s.name === "activity first");
      const parent = await exported((s) => s.spanContext().spanId === first.parentSpanContext?.spanId);
      expect(parent?.name).toBe("orchestration waits");
      expect(parent?.spanContext().traceId).toBe(starter.split("-")[1]);
      expect(parent?.parentSpanContext?.spanId).toBe(starter.split("-")[2]);
      expect(parent?.attributes["durable.outcome"]).toBe("Running");
      await durable.raiseEvent(id, "go");
      await durable.waitForIdle(10_000);
      const episodes = await vi.waitFor(() => {
        const all = finished().filter((s) => s.name === "orchestration waits");
        expect(all.at(-1)?.attributes["durable.outcome"]).toBe("Completed");
        return all;
      });
      expect(episodes.length).toBeGreaterThanOrEqual(3);
      expect(episodes.every((s) => s.spanContext().traceId === starter.split("-")[1])).toBe(true);
      expect(episodes.at(-1)?.attributes["durable.outcome"]).toBe("Completed");
    } finally {
      await durable.stop();
    }
  });

  it("lists a running instance that retries a failing activity with the failure's reason, and its trace", async () => {
    const clock = new ManualClock();
    const durable = new DurableHost({
      clock,
      functions: durableFunctions({
        orchestrations: {
          persists: function* (context: OrchestrationContext) {
            yield context.df.callActivityWithRetry("flaky", new df.RetryOptions(60_000, 5));
          },
        },
        activities: {
          flaky: () => {
            throw new Error("the store is down");
          },
        },
      }),
    });
    try {
      const id = await durable.startNew("persists", { traceParent: starter });
      await durable.settled();
      const [running] = durable.runningInstances();
      expect(running).toMatchObject({ instanceId: id, name: "persists", traceParent: starter });
      expect(running.lastFailure?.reason).toMatch(/the store is down/);
    } finally {
      await durable.stop();
    }
  });
});
