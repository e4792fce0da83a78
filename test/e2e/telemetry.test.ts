import { SpanKind } from "@opentelemetry/api";
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Container } from "@azure/cosmos";
import { ChangeFeedPump, durableInvocation, localTelemetry } from "local-host";
import type { OpsFigures } from "../../local/ops";
import { observedActivity, observedConsumer } from "../../src/pipeline/observed";
import type { PipelineServices } from "../../src/pipeline/pipeline-services";
import { estimateLag } from "../../src/store/change-feed-lag";
import { LONG_RUNNING_MS, measureLongRunningOrchestrations } from "../../src/pipeline/backlog";
import * as df from "durable-functions";
import { ATTRIBUTES, pseudonymOf, recordChangeFeedLag } from "../../src/telemetry";
import { cosmosFixture } from "../support/cosmos";
import { localSystem, within, type Client } from "../support/system";
import { watchedTrigger } from "../support/local-host";

/**
 * Telemetry through the OpenTelemetry SDK the local host installs, with an in-memory span
 * exporter beside it: what an operator sees in Application Insights or Jaeger, asserted.
 */
const spans = new InMemorySpanExporter();
localTelemetry({ spanProcessors: [new SimpleSpanProcessor(spans)] });
let app: Client;
beforeAll(async () => {
  app = await localSystem();
});
afterAll(() => app.stop());

const finished = () => spans.getFinishedSpans();
const childrenOf = (parent: ReadableSpan) => finished().filter((s) => s.parentSpanContext?.spanId === parent.spanContext().spanId);
/** The operations figures as the page reads them, from the running host. */
const figures = async (): Promise<OpsFigures> => (await fetch(app.system.url.replace(/\/api$/, "/local/ops"))).json() as Promise<OpsFigures>;

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
      expect(Number(span.attributes[ATTRIBUTES.cosmosStatus])).toBeGreaterThan(0);
    }
    const total = cosmos.reduce((sum, span) => sum + Number(span.attributes[ATTRIBUTES.requestCharge]), 0);
    expect(request.value.attributes[ATTRIBUTES.requestCharge]).toBeCloseTo(total, 6);
  });

  it("follows a rename from its request to the change feed batch, the orchestration it starts and its activities, in one trace", async () => {
    await app.call("POST", "/users", { as: "renamer", body: { username: "renamer" } });
    const post = (await app.call("POST", "/posts", { as: "renamer", body: { title: "t", content: "c" } })).body;
    // Carried by the posts consumer first, so the rename's propagation is what rewrites it.
    await within(10_000, async () => (await app.call("GET", "/users/renamer/posts")).body.items.some((p: { postId: string }) => p.postId === post.id));
    expect((await app.call("PUT", "/users/renamer", { as: "renamer", body: { username: "renamed" } })).status).toBe(200);
    const request = finished().find((s) => s.name === "PUT /api/users/{userId}" && s.attributes[ATTRIBUTES.caller] === pseudonymOf("renamer"));
    expect(request).toBeDefined();
    const trace = request!.spanContext().traceId;
    // The profile carries the trace context of the request that wrote it, so the batch and the orchestration are part of that request's trace.
    const orchestration = await within(20_000, async () =>
      finished().find((s) => s.name === "orchestration propagateUsername" && s.spanContext().traceId === trace),
    );
    // The orchestration's first episode may end before the batch that started it does.
    const batch = (await within(10_000, async () => finished().find((s) => s.spanContext().spanId === orchestration.value.parentSpanContext?.spanId))).value;
    expect(batch?.name).toBe("process usersChangeFeed");
    expect(batch?.kind).toBe(SpanKind.CONSUMER);
    expect(batch?.attributes[ATTRIBUTES.consumer]).toBe("usersChangeFeed");
    expect(batch!.spanContext().traceId).toBe(trace);
    // Who it was is in no span: the instance id (made of the user id) and every partition key are pseudonymized as the caller is.
    expect(orchestration.value.attributes[ATTRIBUTES.instanceId]).toMatch(/^[0-9a-f]{16}$/);
    const values = finished()
      .filter((s) => s.spanContext().traceId === trace)
      .flatMap((s) => Object.values(s.attributes).map(String));
    expect(values.filter((value) => /renamer|renamed/.test(value))).toEqual([]);
    expect(values).toContain(pseudonymOf("renamer"));
    // Each activity is a child of the orchestration's episode that scheduled it (a span per episode, exported as it ends).
    const activities = await within(10_000, async () => {
      const episodes = finished().filter((s) => s.name === "orchestration propagateUsername" && s.spanContext().traceId === trace);
      const names = episodes.flatMap((episode) => childrenOf(episode).map((s) => s.name));
      return names.includes("activity renameInPartition") ? names : undefined;
    });
    expect(activities.value).toContain("activity findStalePartitions");
  });

  it("puts a post's copies in the trace of the request that wrote or edited the post, and a like's count change in none of its", async () => {
    await app.call("POST", "/users", { as: "copier", body: { username: "copier" } });
    const created = await app.call("POST", "/posts", { as: "copier", body: { title: "traced", content: "c" } });
    const request = finished().find((s) => s.name === "POST /api/posts" && s.attributes[ATTRIBUTES.caller] === pseudonymOf("copier"))!;
    const inTrace = (trace: string) => finished().filter((s) => s.spanContext().traceId === trace);
    const copies = await within(10_000, async () => {
      const batch = inTrace(request.spanContext().traceId).find((s) => s.name === "process postsChangeFeed");
      return batch && finished().filter((s) => s.parentSpanContext?.spanId === batch.spanContext().spanId && s.kind === SpanKind.CLIENT);
    });
    expect(copies.value.map((s) => s.attributes[ATTRIBUTES.container])).toEqual(expect.arrayContaining(["users", "feed"]));
    // The trace context the post carries is bookkeeping: no response shows it.
    for (const body of [created.body, (await app.call("GET", `/posts/${created.body.id}`)).body, (await app.call("GET", "/users/copier/posts")).body])
      expect(JSON.stringify(body)).not.toContain("traceparent");
    await app.call("POST", "/users", { as: "liker", body: { username: "liker" } });
    expect((await app.call("POST", `/posts/${created.body.id}/likes`, { as: "liker" })).status).toBe(201);
    await within(10_000, async () => (await app.call("GET", "/users/copier/posts")).body.items.find((p: { likeCount: number }) => p.likeCount === 1));
    // The stored procedure that counted the like rewrote the post without the creating request's context.
    expect(inTrace(request.spanContext().traceId).filter((s) => s.name === "process postsChangeFeed")).toHaveLength(1);
    // An edit stamps its own request's context: its change joins the edit's trace.
    expect((await app.call("PUT", `/posts/${created.body.id}`, { as: "copier", body: { title: "edited", content: "c" } })).status).toBe(200);
    const edit = finished().find((s) => s.name === "PUT /api/posts/{postId}" && s.attributes[ATTRIBUTES.caller] === pseudonymOf("copier"))!;
    await within(10_000, async () => inTrace(edit.spanContext().traceId).find((s) => s.name === "process postsChangeFeed"));
  });

  it("puts the change feed batch a comment or a like causes in the trace of the request that wrote it, and never shows the context", async () => {
    await app.call("POST", "/users", { as: "author", body: { username: "author" } });
    await app.call("POST", "/users", { as: "reader", body: { username: "reader" } });
    const post = await app.call("POST", "/posts", { as: "author", body: { title: "read me", content: "c" } });
    await within(10_000, async () => (await app.call("GET", "/users/author/posts")).body.items.length === 1);
    const batchIn = (request: ReadableSpan) =>
      within(10_000, async () => finished().find((s) => s.name === "process postsChangeFeed" && s.spanContext().traceId === request.spanContext().traceId));
    const comment = await app.call("POST", `/posts/${post.body.id}/comments`, { as: "reader", body: { content: "nice" } });
    expect(comment.status).toBe(201);
    await batchIn(finished().find((s) => s.name === "POST /api/posts/{postId}/comments" && s.attributes[ATTRIBUTES.caller] === pseudonymOf("reader"))!);
    expect((await app.call("POST", `/posts/${post.body.id}/likes`, { as: "reader" })).status).toBe(201);
    await batchIn(finished().find((s) => s.name === "POST /api/posts/{postId}/likes" && s.attributes[ATTRIBUTES.caller] === pseudonymOf("reader"))!);
    expect((await app.call("DELETE", `/posts/${post.body.id}/likes`, { as: "reader" })).status).toBe(204);
    await batchIn(finished().find((s) => s.name === "DELETE /api/posts/{postId}/likes" && s.attributes[ATTRIBUTES.caller] === pseudonymOf("reader"))!);
    for (const path of [`/posts/${post.body.id}/comments`, `/posts/${post.body.id}/likes`])
      expect(JSON.stringify((await app.call("GET", path)).body)).not.toContain("traceparent");
    expect(JSON.stringify(comment.body)).not.toContain("traceparent");
  });

  it("makes a batch of changes from several traces a trace of its own, linked to each of them", async () => {
    const origin = (n: number) => `00-${String(n).padStart(32, "a")}-${String(n).padStart(16, "b")}-01`;
    const consumer = observedConsumer({ name: "linkedChangeFeed", containerName: "linked", leaseContainerPrefix: "linked-" }, async () => {});
    const services = {} as PipelineServices;
    await consumer(
      [{ id: "1", traceparent: origin(1) }, { id: "2", traceparent: origin(2) }, { id: "3", traceparent: "not a trace context" }, { id: "4" }],
      services,
    );
    await consumer([{ id: "5", traceparent: origin(5) }, { id: "6" }], services);
    const [mixed, single] = finished().filter((s) => s.name === "process linkedChangeFeed");
    expect(mixed.parentSpanContext).toBeUndefined();
    expect(mixed.links.map((l) => l.context.traceId).sort()).toEqual([origin(1).slice(3, 35), origin(2).slice(3, 35)]);
    expect(single.spanContext().traceId).toBe(origin(5).slice(3, 35));
    expect(single.parentSpanContext?.spanId).toBe(origin(5).slice(36, 52));
  });

  it("makes a failed activity an error span, counted as a retry of its step", async () => {
    const failing = observedActivity("alwaysDown", async () => {
      throw new Error("the store is down");
    });
    await expect(failing(app.system.store, undefined)).rejects.toThrow(/down/);
    const span = finished().find((s) => s.name === "activity alwaysDown");
    expect(span?.status.code).toBe(2); // ERROR
    expect(span?.events.some((e) => e.name === "exception")).toBe(true);
    expect((await figures()).orchestrations.retrying).toBeGreaterThanOrEqual(1);
  });
});

describe("telemetry: metrics", () => {
  it("traces no change feed poll (an idle host adds no spans), though the polls' Cosmos DB requests are still counted", async () => {
    const polls = (figures: OpsFigures) => figures.cosmos.requests;
    const before = polls(await figures());
    // The host polls every change feed range about ten times a second: wait until it has polled a few times more.
    await within(10_000, async () => polls(await figures()) >= before + 8);
    expect(
      finished()
        .filter((s) => s.name.startsWith("change feed "))
        .map((s) => s.name),
    ).toEqual([]);
  });

  it("counts request units per route and method, API and background request units apart, status classes, Cosmos DB requests, feed cache lookups and like batches", async () => {
    const post = (await app.call("POST", "/posts", { as: "tracer", body: { title: "measured", content: "c" } })).body;
    await app.call("POST", `/posts/${post.id}/likes`, { as: "tracer" });
    await app.call("GET", "/feed");
    await app.call("GET", "/posts/no-such-post");
    const now = await figures();
    const route = now.routes.find((r) => r.method === "POST" && r.route === "/api/posts/{postId}/likes");
    expect(route?.last1m.requests).toBeGreaterThanOrEqual(1);
    expect(route?.last1m.p50Ms).toBeGreaterThan(0);
    expect(now.requestUnits.api).toBeGreaterThan(0);
    expect(now.requestUnits.background).toBeGreaterThan(0); // the change feed's polls and copies, apart from the API's
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
        new ChangeFeedPump(watched, leases, trigger, {
          pollMs: 20,
          maxItems: 100,
          owner,
          accountHost: "127.0.0.1",
          leases: { expirationMs: 2000, renewMs: 200, acquireMs: 50 },
          log: () => {},
        });
      // The app's estimator, as its timer function runs it, recording the gauges the page reads.
      const lagItems = async () => {
        recordChangeFeedLag(await estimateLag(watched, leases, trigger));
        return (await figures()).lag.filter((l) => l.consumer === trigger.name).reduce((sum, l) => sum + (l.items ?? 0), 0);
      };
      const first = pump("host-a");
      first.start();
      await within(10_000, async () => (first.ownedLeases().length === 4 ? true : undefined));
      await first.stop();
      await write(watched, 12);
      expect(await lagItems()).toBe(12); // stopped: every change waits
      const second = pump("host-b");
      second.start();
      await within(20_000, async () => ((await lagItems()) === 0 ? true : undefined));
      await second.stop();
    } finally {
      await fixture.stop();
    }
  });
});

describe("the backlog the Function App measures on a timer", () => {
  it("counts the orchestrations running too long, per name, through the package's durable client: the gauge the long-running alert reads", async () => {
    const origin = app.system.url.replace(/\/api$/, "").replace("localhost", "127.0.0.1");
    const client = df.getClient(durableInvocation("backlog", origin));
    // A feed refresh due in an hour: it waits on its durable timer, Running.
    const id = await app.system.durable.startNew("refreshFeedCopy", {
      input: { postId: "waiting-post", sourceLsn: 1, dueAt: new Date(Date.now() + 3_600_000).toISOString() },
    });
    expect(await measureLongRunningOrchestrations(client)).toMatchObject({ refreshFeedCopy: 0 }); // just started
    const later = Date.now() + LONG_RUNNING_MS + 60_000;
    // Half an hour on, it counts (other refreshes of this file's posts may still be running too).
    const counts = await measureLongRunningOrchestrations(client, later);
    expect(counts.refreshFeedCopy).toBeGreaterThanOrEqual(1);
    expect(Object.keys(counts).sort()).toEqual(["eraseAccount", "propagateUsername", "refreshFeedCopy", "releaseOrphanedUsernames"]);
    await app.system.durable.terminate(id, "test over");
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
