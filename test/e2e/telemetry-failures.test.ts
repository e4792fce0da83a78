import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { localTelemetry } from "local-host";
import { ATTRIBUTES } from "../../src/telemetry";
import { localSystem, within, type Client } from "../support/system";

/**
 * Failures recorded as OpenTelemetry says, so Azure Monitor's exporter does not turn them into
 * successful dependencies: a failed call's span is ERROR with `error.type`, and the request it
 * fails carries the exception. Reads of `users` fail with 503 here; reads of `posts` do not.
 */
const spans = new InMemorySpanExporter();
localTelemetry({ spanProcessors: [new SimpleSpanProcessor(spans)] });
let app: Client;
beforeAll(async () => {
  app = await localSystem({ faults: { rules: [{ effect: "503", rate: 1, operations: ["read"], containers: ["users"] }] } });
});
afterAll(() => app.stop());

const finished = () => spans.getFinishedSpans();
const clientsOf = (parent: ReadableSpan) => finished().filter((s) => s.parentSpanContext?.spanId === parent.spanContext().spanId && s.kind === SpanKind.CLIENT);
const serverSpan = (name: string, status: number) =>
  within(5000, async () => finished().find((s) => s.name === name && s.attributes[ATTRIBUTES.status] === status));

describe("telemetry of failures", () => {
  it("makes a Cosmos DB 503 an ERROR client span with error.type, and the 503 it causes an ERROR server span with the exception", async () => {
    expect((await app.call("GET", "/users/nobody-here")).status).toBe(503);
    const server = await serverSpan("GET /api/users/{userId}", 503);
    expect(server.value.status.code).toBe(SpanStatusCode.ERROR);
    expect(server.value.attributes[ATTRIBUTES.errorType]).toBe("503");
    expect(server.value.events.some((event) => event.name === "exception")).toBe(true);
    const clients = clientsOf(server.value);
    expect(clients.length).toBeGreaterThan(0);
    for (const client of clients) {
      expect(client.status.code).toBe(SpanStatusCode.ERROR);
      expect(client.attributes[ATTRIBUTES.errorType]).toBe("503");
    }
  });

  it("leaves a Cosmos DB 404 a successful client span: a point read that finds nothing is an answer, not a failure", async () => {
    expect((await app.call("GET", "/posts/nothing-here")).status).toBe(404);
    const server = await serverSpan("GET /api/posts/{postId}", 404);
    expect(server.value.status.code).not.toBe(SpanStatusCode.ERROR);
    const [client] = clientsOf(server.value);
    expect(client.attributes[ATTRIBUTES.cosmosStatus]).toBe("404"); // a string, as the conventions say
    expect(client.status.code).not.toBe(SpanStatusCode.ERROR);
    expect(client.attributes[ATTRIBUTES.errorType]).toBeUndefined();
  });
});
