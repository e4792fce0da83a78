import { createServer } from "node:http";
import { expect, it } from "vitest";
import { localTelemetry } from "local-host";
import { inSpan, recordHttpRequest } from "../../src/telemetry";

/** With OTEL_EXPORTER_OTLP_ENDPOINT set, npm start exports spans and metrics over OTLP: here to a receiver on loopback. */
it("exports spans and metrics over OTLP/HTTP to the endpoint OTEL_EXPORTER_OTLP_ENDPOINT names", async () => {
  const received: { path: string; body: Buffer }[] = [];
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req
      .on("data", (chunk: Buffer) => chunks.push(chunk))
      .on("end", () => {
        received.push({ path: req.url ?? "", body: Buffer.concat(chunks) });
        res.writeHead(200, { "content-type": "application/json" }).end("{}");
      });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;
  try {
    const telemetry = localTelemetry();
    expect(telemetry.exportsTo).toBe(process.env.OTEL_EXPORTER_OTLP_ENDPOINT);
    await inSpan("GET /api/feed", {}, async () => recordHttpRequest({ route: "/api/feed", method: "GET", status: 200, durationMs: 3, charge: 2.5 }));
    await telemetry.shutdown(); // flushes both exporters
    const traces = received.filter((r) => r.path === "/v1/traces");
    const metrics = received.filter((r) => r.path === "/v1/metrics");
    expect(traces.some((r) => r.body.includes("GET /api/feed"))).toBe(true);
    expect(metrics.some((r) => r.body.includes("blog.http.requests") && r.body.includes("blog.http.request_charge"))).toBe(true);
  } finally {
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    receiver.close();
  }
});
