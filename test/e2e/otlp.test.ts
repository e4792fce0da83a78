import { spawn } from "node:child_process";
import { createServer, type Server } from "node:http";
import { createServer as createHttp2Server, type Http2Server } from "node:http2";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * npm start's telemetry is the OpenTelemetry SDK for Node.js configured by the standard OTEL_*
 * settings: spans, metrics and logs go over OTLP in the protocol OTEL_EXPORTER_OTLP_PROTOCOL
 * names (http/json, http/protobuf, grpc) to receivers on loopback, and what is pending is
 * flushed when the process stops. Each protocol runs in a process of its own, as the SDK is
 * one per process.
 */
interface Received {
  path: string;
  contentType: string;
  body: Buffer;
}

let http: Server;
let grpc: Http2Server;
const overHttp: Received[] = [];
const overGrpc: Received[] = [];

beforeAll(async () => {
  http = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req
      .on("data", (chunk: Buffer) => chunks.push(chunk))
      .on("end", () => {
        const contentType = String(req.headers["content-type"] ?? "");
        overHttp.push({ path: req.url ?? "", contentType, body: Buffer.concat(chunks) });
        // An empty ExportServiceResponse, in the request's own encoding.
        res.writeHead(200, { "content-type": contentType }).end(contentType.includes("json") ? "{}" : "");
      });
  });
  // gRPC over HTTP/2 without TLS (h2c), answering each Export with an empty message and grpc-status 0.
  grpc = createHttp2Server();
  grpc.on("stream", (stream, headers) => {
    const chunks: Buffer[] = [];
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("end", () => {
      overGrpc.push({ path: String(headers[":path"]), contentType: String(headers["content-type"]), body: Buffer.concat(chunks) });
      stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
      stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
      stream.end(Buffer.from([0, 0, 0, 0, 0]));
    });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  await new Promise<void>((resolve) => grpc.listen(0, "127.0.0.1", resolve));
});
afterAll(() => {
  http.close();
  grpc.close();
});

/** Runs the emitter with these OTEL_* settings; resolves with what it printed when it has exited (having flushed). */
function emit(env: Record<string, string>): Promise<string> {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("OTEL_")));
  const child = spawn(process.execPath, [join(__dirname, "../support/otlp-emitter.cjs")], {
    env: { ...inherited, OTEL_METRIC_EXPORT_INTERVAL: "600000", OTEL_RESOURCE_ATTRIBUTES: "deployment.environment.name=otlp-test", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  let errors = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (errors += chunk.toString()));
  return new Promise((resolve, reject) =>
    child.once("exit", (code) => (code === 0 ? resolve(output) : reject(new Error(`emitter exited ${code}: ${errors}`)))),
  );
}

const port = (server: Server | Http2Server) => (server.address() as { port: number }).port;
const containing = (received: Received[], path: RegExp, text: string) => received.some((r) => path.test(r.path) && r.body.includes(text));

describe("OTLP from npm start's SDK, as the OTEL_* settings say", () => {
  it("http/json: spans, metrics and logs, the resource's attributes, and the trace id on the log line", async () => {
    overHttp.length = 0;
    await emit({ OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port(http)}`, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" });
    expect(overHttp.every((r) => r.contentType.startsWith("application/json"))).toBe(true);
    expect(containing(overHttp, /^\/v1\/traces$/, "GET /api/feed")).toBe(true);
    expect(containing(overHttp, /^\/v1\/traces$/, "otlp-test")).toBe(true);
    // Flushed at exit: the export interval (10 minutes) never came.
    expect(containing(overHttp, /^\/v1\/metrics$/, "http.server.request.duration")).toBe(true);
    const logBody = overHttp.find((r) => r.path === "/v1/logs" && r.body.includes("a line written inside the request"));
    const spanBody = overHttp.find((r) => r.path === "/v1/traces")!;
    const traceId = /"traceId":"([0-9a-f]{32})"/.exec(spanBody.body.toString())?.[1];
    expect(traceId).toBeDefined();
    expect(logBody?.body.toString()).toContain(`"traceId":"${traceId}"`);
  });

  it("http/protobuf (the SDK's default) to per-signal endpoints", async () => {
    overHttp.length = 0;
    const base = `http://127.0.0.1:${port(http)}`;
    await emit({
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${base}/custom/traces`,
      OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: `${base}/custom/metrics`,
      OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: `${base}/custom/logs`,
    });
    expect(overHttp.length).toBeGreaterThanOrEqual(3);
    expect(overHttp.every((r) => r.contentType === "application/x-protobuf")).toBe(true);
    expect(containing(overHttp, /^\/custom\/traces$/, "GET /api/feed")).toBe(true);
    expect(containing(overHttp, /^\/custom\/metrics$/, "http.server.request.duration")).toBe(true);
    expect(containing(overHttp, /^\/custom\/logs$/, "a line written inside the request")).toBe(true);
  });

  it("grpc", async () => {
    overGrpc.length = 0;
    await emit({ OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port(grpc)}`, OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" });
    expect(overGrpc.every((r) => r.contentType.startsWith("application/grpc"))).toBe(true);
    expect(containing(overGrpc, /TraceService\/Export$/, "GET /api/feed")).toBe(true);
    expect(containing(overGrpc, /MetricsService\/Export$/, "http.server.request.duration")).toBe(true);
    expect(containing(overGrpc, /LogsService\/Export$/, "a line written inside the request")).toBe(true);
  });

  it("sends each signal only where OTEL_TRACES_EXPORTER, OTEL_METRICS_EXPORTER and OTEL_LOGS_EXPORTER say", async () => {
    overHttp.length = 0;
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port(http)}`, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" };
    await emit({ ...endpoint, OTEL_TRACES_EXPORTER: "none", OTEL_LOGS_EXPORTER: "none" });
    expect(overHttp.map((r) => r.path)).toEqual(["/v1/metrics"]);

    overHttp.length = 0;
    const printed = await emit({ OTEL_TRACES_EXPORTER: "console", OTEL_METRICS_EXPORTER: "console", OTEL_LOGS_EXPORTER: "console" });
    expect(overHttp).toEqual([]);
    expect(printed).toContain("GET /api/feed");
    expect(printed).toContain("http.server.request.duration");
    expect(printed).toContain("a line written inside the request");
  });

  it("keeps the traces OTEL_TRACES_SAMPLER keeps, and names the service as OTEL_SERVICE_NAME, then OTEL_RESOURCE_ATTRIBUTES, say", async () => {
    overHttp.length = 0;
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port(http)}`, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" };
    await emit({ ...endpoint, OTEL_TRACES_SAMPLER: "always_off", OTEL_RESOURCE_ATTRIBUTES: "service.name=from-attributes" });
    expect(overHttp.some((r) => r.path === "/v1/traces")).toBe(false);
    expect(containing(overHttp, /^\/v1\/metrics$/, '"stringValue":"from-attributes"')).toBe(true);
    expect(containing(overHttp, /^\/v1\/metrics$/, "blog-backend-local")).toBe(false);

    overHttp.length = 0;
    await emit({ ...endpoint, OTEL_SERVICE_NAME: "from-service-name", OTEL_RESOURCE_ATTRIBUTES: "service.name=from-attributes" });
    expect(containing(overHttp, /^\/v1\/traces$/, '"stringValue":"from-service-name"')).toBe(true);
    expect(containing(overHttp, /^\/v1\/traces$/, "from-attributes")).toBe(false);
  });

  it("records and sends nothing with OTEL_SDK_DISABLED=true, and the operations page still reads (nothing)", async () => {
    overHttp.length = 0;
    const printed = await emit({
      OTEL_SDK_DISABLED: "true",
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port(http)}`,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    });
    expect(overHttp).toEqual([]);
    expect(printed).toContain("collected 0 scopes");
  });

  it("exports nothing without an endpoint (the SDK's default address, port 4318, is not assumed)", async () => {
    const atDefault: string[] = [];
    const fallback = createServer((req, res) => {
      atDefault.push(req.url ?? "");
      res.writeHead(200).end("{}");
    });
    await new Promise<void>((resolve, reject) => fallback.once("error", reject).listen(4318, resolve));
    try {
      await emit({ OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" });
      expect(atDefault).toEqual([]);
    } finally {
      fallback.close();
    }
  });
});
