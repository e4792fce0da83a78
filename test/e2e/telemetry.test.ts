import { SpanKind } from "@opentelemetry/api";
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Container } from "@azure/cosmos";
import { estimateLag } from "../../local/host/change-feed/lag";
import { ChangeFeedPump } from "../../local/host/change-feed/pump";
import type { OpsFigures } from "../../local/host/ops";
import { opsFigures } from "../../local/host/ops";
import { localTelemetry } from "../../local/host/telemetry";
import { observedActivity } from "../../src/pipeline/observed";
import { ATTRIBUTES, observeChangeFeedLag, pseudonymOf } from "../../src/telemetry";
import { cosmosFixture, eventually } from "../support/cosmos";
import { localSystem, within, type Client } from "../support/system";
import { watchedTrigger } from "../support/watched";

/**
 * Telemetry through the OpenTelemetry SDK the local host installs, with an in-memory span
 * exporter beside it: what an operator sees in Application Insights or Jaeger, asserted.
 */
const spans = new InMemorySpanExporter();
const telemetry = localTelemetry({ spanProcessors: [new SimpleSpanProcessor(spans)] });
let app: Client;
beforeAll(async () => {
  app = await localSystem();
});
afterAll(() => app.stop());

const finished = () => spans.getFinishedSpans();
const childrenOf = (parent: ReadableSpan) => finished().filter((s) => s.parentSpanContext?.spanId === parent.spanContext().spanId);
const figures = async (): Promise<OpsFigures> => opsFigures(await telemetry.collect());

describe("telemetry: traces", () => {
  it("makes a request one span, with each of its Cosmos DB requests a child span carrying its request charge", async () => {
    expect((await app.call("POST", "/users", { as: "tracer", body: { username: "tracer" } })).status).toBe(201);
    const request = await within(5000, async () => finished().find((s) => s.name === "POST /api/users"));
    expect(request.value.kind).toBe(SpanKind.SERVER);
    expect(request.value.attributes).toMatchObject({ [ATTRIBUTES.route]: "/api/users", [ATTRIBUTES.status]: 201, [ATTRIBUTES.caller]: pseudonymOf("tracer") });
    expect(JSON.stringify(request.value.attributes)).not.toContain('"tracer"'); // the caller's id never, only its pseudonym
    const cosmos = childrenOf(request.value).filter((s) => s.kind === SpanKind.CLIENT);
    expect(cosmos.length).toBeGreaterThan(0);
    for (const span of cosmos) {
      expect(span.attributes).toMatchObject({ [ATTRIBUTES.dbSystem]: "azure.cosmosdb", [ATTRIBUTES.container]: "users" });
      expect(typeof span.attributes[ATTRIBUTES.requestCharge]).toBe("number");
      expect(span.attributes[ATTRIBUTES.cosmosStatus]).toBeGreaterThan(0);
    }
    const total = cosmos.reduce((sum, span) => sum + Number(span.attributes[ATTRIBUTES.requestCharge]), 0);
    expect(request.value.attributes[ATTRIBUTES.requestCharge]).toBeCloseTo(total, 6);
  });

  it("follows a rename from the change feed batch to the orchestration it starts and its activities, in one trace", async () => {
    await app.call("POST", "/users", { as: "renamer", body: { username: "renamer" } });
    const post = (await app.call("POST", "/posts", { as: "renamer", body: { title: "t", content: "c" } })).body;
    // Carried by the posts consumer first, so the rename's propagation is what rewrites it.
    await within(10_000, async () => (await app.call("GET", "/users/renamer/posts")).body.items.some((p: { postId: string }) => p.postId === post.id));
    expect((await app.call("PUT", "/users/renamer", { as: "renamer", body: { username: "renamed" } })).status).toBe(200);
    const orchestration = await within(20_000, async () =>
      finished().find((s) => s.name === "orchestration propagateUsername" && String(s.attributes[ATTRIBUTES.instanceId]).startsWith("username-renamer-")),
    );
    const batch = finished().find((s) => s.spanContext().spanId === orchestration.value.parentSpanContext?.spanId);
    expect(batch?.name).toBe("process usersChangeFeed");
    expect(batch?.kind).toBe(SpanKind.CONSUMER);
    expect(batch?.attributes[ATTRIBUTES.lease]).toEqual(expect.stringMatching(/^users-/));
    expect(orchestration.value.spanContext().traceId).toBe(batch!.spanContext().traceId);
    const activities = childrenOf(orchestration.value).map((s) => s.name);
    expect(activities).toContain("activity findStalePartitions");
    expect(activities).toContain("activity renameInPartition");
  });

  it("makes a failed activity an error span, counted as a retry of its step", async () => {
    const failing = observedActivity("alwaysDown", async () => {
      throw new Error("the store is down");
    });
    await expect(failing(undefined)).rejects.toThrow(/down/);
    const span = finished().find((s) => s.name === "activity alwaysDown");
    expect(span?.status.code).toBe(2); // ERROR
    expect(span?.events.some((e) => e.name === "exception")).toBe(true);
    expect((await figures()).orchestrations.retrying).toBeGreaterThanOrEqual(1);
  });
});

describe("telemetry: metrics", () => {
  it("counts request units per route, status classes, Cosmos DB requests, feed cache lookups and like batches", async () => {
    const post = (await app.call("POST", "/posts", { as: "tracer", body: { title: "measured", content: "c" } })).body;
    await app.call("POST", `/posts/${post.id}/likes`, { as: "tracer" });
    await app.call("GET", "/feed");
    await app.call("GET", "/posts/no-such-post");
    const now = await figures();
    const route = now.routes.find((r) => r.route === "/api/posts/{postId}/likes");
    expect(route?.requests).toBeGreaterThanOrEqual(1);
    expect(now.statusClasses["4xx"]).toBeGreaterThanOrEqual(1);
    expect(now.statusClasses["2xx"]).toBeGreaterThanOrEqual(3);
    expect(now.cosmos.requests).toBeGreaterThan(0);
    expect(now.likeBatches.calls).toBeGreaterThanOrEqual(1);
    expect(now.feedCache.hits + now.feedCache.misses).toBeGreaterThanOrEqual(1);
    expect(now.orchestrations.started).toBeGreaterThanOrEqual(1);
  });

  it("shows the lag of a stopped consumer rising with the changes it has not taken, and falling once it runs", async () => {
    const fixture = await cosmosFixture();
    try {
      const watched = await fixture.container({ id: "watched", partitionKey: { paths: ["/pk"] } });
      const leases = await fixture.container({ id: "leases", partitionKey: { paths: ["/id"] } });
      const trigger = watchedTrigger(async () => {});
      const pump = (owner: string) =>
        new ChangeFeedPump(watched, leases, trigger, () => ({ orchestrations: { ensureStarted: async () => "exists" } }), {
          pollMs: 20,
          maxItems: 100,
          owner,
          leases: { expirationMs: 2000, renewMs: 200, acquireMs: 50 },
          log: () => {},
        });
      const unobserve = observeChangeFeedLag(() => estimateLag(watched, leases, trigger));
      const lagItems = async () => (await figures()).lag.filter((l) => l.consumer === "watchedChangeFeed").reduce((sum, l) => sum + (l.items ?? 0), 0);
      try {
        const first = pump("host-a");
        first.start();
        await eventually(async () => (first.ownedLeases().length === 4 ? true : undefined));
        await first.stop();
        await write(watched, 12);
        expect(await lagItems()).toBe(12); // stopped: every change waits
        const second = pump("host-b");
        second.start();
        await eventually(async () => ((await lagItems()) === 0 ? true : undefined), 20_000);
        await second.stop();
      } finally {
        unobserve();
      }
    } finally {
      await fixture.stop();
    }
  });
});

describe("the operations figures at /local/ops", () => {
  it("answers a page of this origin from loopback, never another origin", async () => {
    const base = app.system.url.replace(/\/api$/, "");
    const ops = await fetch(`${base}/local/ops`);
    expect(ops.status).toBe(200);
    expect(ops.headers.get("access-control-allow-origin")).toBeNull();
    const body = (await ops.json()) as OpsFigures;
    expect(body.routes.length).toBeGreaterThan(0);
    expect(body.instances.Completed).toBeGreaterThanOrEqual(1); // the propagation above, read from the instances gauge
    expect((await fetch(`${base}/local/ops`, { headers: { origin: "https://elsewhere.example" } })).status).toBe(403);
  });
});

async function write(container: Container, count: number): Promise<void> {
  for (let i = 0; i < count; i++) await container.items.create({ id: `doc-${i}`, pk: `p${i}` });
}
