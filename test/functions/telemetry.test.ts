import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { createServer as createHttpServer, type Server } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AzureMonitorMetricExporter, RateLimitedSampler } from "@azure/monitor-opentelemetry-exporter";
import { ROOT_CONTEXT, SpanKind } from "@opentelemetry/api";
import { SamplingDecision } from "@opentelemetry/sdk-trace-node";
import { InstrumentType } from "@opentelemetry/sdk-metrics";
import { ExportResultCode, type ExportResult } from "@opentelemetry/core";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { azureMonitorTemporality, exportersOnFirstBatch } from "../../functions/azure-monitor/providers";
import { firstTraceKept, tracesSampler, TRACES_PER_SECOND } from "../../functions/azure-monitor/sampling";
import { BUNDLES, packageApp } from "../../scripts/bundle";
import { certificate } from "../support/certificate";
import { ingestionEndpoint, type Envelope } from "../support/ingestion";
import { runToExit } from "../support/process";

/**
 * The deployable bundle's telemetry as it runs in Azure: loaded by the worker (the recorder of
 * `@azure/functions-core`) with the app settings the Bicep gives, it takes an Entra ID token
 * from the managed identity endpoint the Functions platform serves (IDENTITY_ENDPOINT and
 * IDENTITY_HEADER, here on loopback), and sends Azure Monitor's envelopes to the connection
 * string's ingestion endpoint (HTTPS, here with a throwaway certificate the process is told to
 * trust). Nothing of ours between the app and the wire: the exporter, the credential and the
 * SDK are the bundle's own.
 */
const root = join(__dirname, "../..");
const recorder = join(__dirname, "../support/functions-core-recorder.cjs");
const TOKEN = "token-from-the-managed-identity-endpoint";
const IDENTITY_HEADER = "identity-header-of-this-instance";
const envelopes: Envelope[] = [];
const ingestionAuthorizations = new Set<string>();
const tokenRequests: string[] = [];
let ingestion: Server;
let identity: Server;
let site: string;
let certFile: string;

const listen = (server: Server) => new Promise<number>((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)));
beforeAll(async () => {
  const tls = certificate();
  certFile = tls.certFile;
  ingestion = createHttpsServer(
    tls,
    ingestionEndpoint((batch, req) => {
      envelopes.push(...batch);
      ingestionAuthorizations.add(String(req.headers.authorization));
    }),
  );
  // The App Service / Functions managed identity protocol (api-version 2019-08-01).
  identity = createHttpServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    tokenRequests.push(url.searchParams.get("resource") ?? "");
    if (req.headers["x-identity-header"] !== IDENTITY_HEADER) return void res.writeHead(401).end();
    res.writeHead(200, { "content-type": "application/json" });
    const expiresOn = Math.floor(Date.now() / 1000) + 3600;
    res.end(JSON.stringify({ access_token: TOKEN, expires_on: String(expiresOn), resource: url.searchParams.get("resource"), token_type: "Bearer" }));
  });
  await Promise.all([listen(ingestion), listen(identity)]);
  const built = mkdtempSync(join(tmpdir(), "deploy-telemetry-"));
  await packageApp(root, join(built, "deploy"));
  site = mkdtempSync(join(tmpdir(), "site-telemetry-"));
  cpSync(join(built, "deploy"), site, { recursive: true });
  rmSync(built, { recursive: true, force: true });
}, 120_000);

afterAll(async () => {
  await Promise.all([ingestion, identity].map((server) => new Promise((resolve) => server.close(resolve))));
  rmSync(site, { recursive: true, force: true });
});

/** Loads the bundle as the worker does, invokes one HTTP function in the host's trace, then stops the worker as the host does. */
function runInstance(traceId: string, settings: Record<string, string> = {}): Promise<{ code: number | null; output: string }> {
  const script = `
    require(require("node:path").resolve("index.js"));
    // What a cold start read: the exporters and the credential wait for the first batch, axios and validator for the first durable client.
    const loaded = Object.keys(require.cache).map((file) => require("node:path").basename(file));
    console.log("loaded at start: " + JSON.stringify(loaded.filter((file) => ${JSON.stringify(BUNDLES.slice(1))}.includes(file)).sort()));
    setImmediate(async () => {
      const core = globalThis.__functionsCore;
      const response = await core.invokeHttp("getOpenApi", "http://localhost/api/openapi.json", "00-${traceId}-00f067aa0ba902b7-01");
      if (response.statusCode !== 200 && response.statusCode !== "200") throw new Error("openapi answered " + response.statusCode);
      await core.terminate();
    });`;
  const port = (server: Server) => (server.address() as AddressInfo).port;
  const env = {
    PATH: process.env.PATH,
    NODE_EXTRA_CA_CERTS: certFile,
    // What infra/app/api.bicep and the platform set.
    APPLICATIONINSIGHTS_CONNECTION_STRING: `InstrumentationKey=00000000-0000-0000-0000-000000000002;IngestionEndpoint=https://127.0.0.1:${port(ingestion)}/`,
    APPLICATIONINSIGHTS_STATSBEAT_DISABLED: "true",
    IDENTITY_ENDPOINT: `http://127.0.0.1:${port(identity)}/msi/token`,
    IDENTITY_HEADER,
    WEBSITE_SITE_NAME: "func-blog-telemetry",
    FUNCTIONS_WORKER_RUNTIME: "node",
    FUNCTIONS_EXTENSION_VERSION: "~4",
    WEBSITE_SKU: "FlexConsumption",
    ...settings,
  };
  return runToExit(process.execPath, ["-r", recorder, "-e", script], { cwd: site, env });
}

describe("the deployed bundle's telemetry", () => {
  it("asks for the temporality Azure Monitor's metric exporter asks for, before that exporter is loaded", () => {
    const exporter = new AzureMonitorMetricExporter({ connectionString: "InstrumentationKey=00000000-0000-0000-0000-000000000003" });
    const types = Object.values(InstrumentType);
    expect(types.length).toBeGreaterThanOrEqual(7);
    for (const type of types) expect(azureMonitorTemporality(type), type).toBe(exporter.selectAggregationTemporality(type));
    const first = exportersOnFirstBatch("InstrumentationKey=00000000-0000-0000-0000-000000000003").metrics;
    expect(first.selectAggregationTemporality).toBe(azureMonitorTemporality);
  });

  it("keeps an instance's first trace, which Azure Monitor's rate-limited sampler drops just after it is made, and leaves the rest to it", () => {
    // Trace ids the sampler scores 99.6 and 98.8 of 100: each is dropped unless its percentage is above that, about 0.2 s after it was made.
    const traceIds = ["9e3eec8436b595d25f441f5c366729db", "f823ab4f3f22db231b6ab15c8b927b92"];
    const decide = (sampler: { shouldSample: RateLimitedSampler["shouldSample"] }, traceId: string) =>
      sampler.shouldSample(ROOT_CONTEXT, traceId, "GET /api/feed", SpanKind.SERVER, {}, []);
    // The real sampler reads its first span as a burst (its rate estimate starts when it is made): the first request after a cold start is dropped.
    expect(decide(new RateLimitedSampler(TRACES_PER_SECOND), traceIds[0]).decision).toBe(SamplingDecision.NOT_RECORD);
    const sampler = firstTraceKept(new RateLimitedSampler(TRACES_PER_SECOND));
    const first = decide(sampler, traceIds[0]);
    expect(first.decision).toBe(SamplingDecision.RECORD_AND_SAMPLED);
    // Kept at 100 %: Azure Monitor counts it once (itemCount 1), and its child spans follow it.
    expect(first.attributes?.["microsoft.sample_rate"]).toBe(100);
    // The next one, a moment later, is the rate-limited sampler's to decide.
    expect(decide(sampler, traceIds[1]).decision).toBe(SamplingDecision.NOT_RECORD);
  });

  it("samples as OTEL_TRACES_SAMPLER and its argument say, in Azure Monitor's distro's names and the specification's", () => {
    const warned = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      const decide = (env: NodeJS.ProcessEnv, traceId = "9e3eec8436b595d25f441f5c366729db") =>
        tracesSampler(env).shouldSample(ROOT_CONTEXT, traceId, "GET /api/feed", SpanKind.SERVER, {}, []);
      const { RECORD_AND_SAMPLED: kept, NOT_RECORD: dropped } = SamplingDecision;
      expect(decide({ OTEL_TRACES_SAMPLER: "always_off" }).decision).toBe(dropped);
      expect(decide({ OTEL_TRACES_SAMPLER: "always_on" }).decision).toBe(kept);
      expect(decide({ OTEL_TRACES_SAMPLER: "parentbased_always_off" }).decision).toBe(dropped);
      for (const name of ["traceidratio", "trace_id_ratio", "parentbased_traceidratio"]) {
        expect(decide({ OTEL_TRACES_SAMPLER: name, OTEL_TRACES_SAMPLER_ARG: "0" }).decision, name).toBe(dropped);
        expect(decide({ OTEL_TRACES_SAMPLER: name, OTEL_TRACES_SAMPLER_ARG: "1" }).decision, name).toBe(kept);
      }
      // Azure Monitor's fixed percentage: each kept span carries its rate, so Application Insights counts it as 1 / ratio items.
      expect(decide({ OTEL_TRACES_SAMPLER: "microsoft.fixed_percentage", OTEL_TRACES_SAMPLER_ARG: "0" }).decision).toBe(dropped);
      const half = [
        "9e3eec8436b595d25f441f5c366729db",
        "f823ab4f3f22db231b6ab15c8b927b92",
        "4bf92f3577b34da6a3ce929d0e0e4736",
        "0af7651916cd43dd8448eb211c80319c",
      ].map((traceId) => decide({ OTEL_TRACES_SAMPLER: "microsoft.fixed_percentage", OTEL_TRACES_SAMPLER_ARG: "0.5" }, traceId));
      expect(half.map((result) => result.decision)).toContain(kept);
      for (const result of half.filter((candidate) => candidate.decision === kept)) expect(result.attributes?.["microsoft.sample_rate"]).toBe(50);
      // Unset, misspelt, or with an argument that is no number: the distro's default, the first trace kept.
      expect(warned).not.toHaveBeenCalled();
      for (const env of [{}, { OTEL_TRACES_SAMPLER: "sometimes" }, { OTEL_TRACES_SAMPLER: "microsoft.rate_limited", OTEL_TRACES_SAMPLER_ARG: "many" }])
        expect(tracesSampler(env).toString(), JSON.stringify(env)).toMatch(/^FirstTraceKept\{RateLimitedSampler/);
      expect(warned).toHaveBeenCalledTimes(2);
    } finally {
      warned.mockRestore();
    }
  });

  it("fails each batch with the reason when Azure Monitor refuses the connection string, and the app serves on", async () => {
    const said = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      // The compiled module, as an unbundled app loads it: it reads the exporters' module beside it.
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- tsc's CommonJS output
      const compiled = require(join(root, "dist/functions/azure-monitor/providers.js")) as typeof import("../../functions/azure-monitor/providers");
      const exporters = compiled.exportersOnFirstBatch("not a connection string");
      const results = await Promise.all([1, 2].map(() => new Promise<ExportResult>((resolve) => exporters.traces.export([], resolve))));
      for (const result of results) {
        expect(result.code).toBe(ExportResultCode.FAILED);
        expect(result.error?.message).toMatch(/connection string/);
      }
      expect(said).toHaveBeenCalledTimes(1);
      await exporters.traces.shutdown();
    } finally {
      said.mockRestore();
    }
  });

  it("reaches Application Insights with the managed identity's token: the invocation's request in the host's trace, under the app's name, and its metrics", async () => {
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const run = await runInstance(traceId);
    expect(run.code, run.output).toBe(0);
    // The start loaded the SDK's providers only; the envelopes below went through the exporters loaded with the first batch.
    expect(run.output).toContain('loaded at start: ["azure-monitor.js"]');

    // Sent when the worker stopped (app-terminate), not left in a batch.
    const requests = envelopes.filter((envelope) => envelope.data.baseType === "RequestData");
    const openApi = requests.find((envelope) => envelope.tags["ai.operation.id"] === traceId);
    expect(openApi, JSON.stringify(requests.map((r) => r.data.baseData.name))).toBeDefined();
    expect(openApi!.data.baseData.name).toBe("GET /api/openapi.json");
    // The cold start's own request, invoked as soon as the app was loaded: kept whole, not as a sample.
    expect(openApi!.sampleRate ?? 100).toBe(100);
    // The Functions resource detector names the app as the portal does.
    expect(openApi!.tags["ai.cloud.role"]).toBe("func-blog-telemetry");
    const metricNames = envelopes
      .filter((envelope) => envelope.data.baseType === "MetricData")
      .flatMap((envelope) => envelope.data.baseData.metrics!.map((m) => m.name));
    expect(metricNames).toContain("http.server.request.duration");

    // Keyless: every batch carried the token the managed identity endpoint gave, for Azure Monitor's audience.
    expect([...ingestionAuthorizations]).toEqual([`Bearer ${TOKEN}`]);
    expect(tokenRequests.length).toBeGreaterThan(0);
    for (const resource of tokenRequests) expect(resource).toMatch(/^https:\/\/monitor\.azure\.com\/?$/);
  }, 60_000);

  it("takes the operator's OTEL_SERVICE_NAME over the site name, and the traces OTEL_TRACES_SAMPLER keeps", async () => {
    const traceId = "5bf92f3577b34da6a3ce929d0e0e4737";
    const run = await runInstance(traceId, {
      OTEL_SERVICE_NAME: "blog-api",
      OTEL_RESOURCE_ATTRIBUTES: "service.name=not-this,deployment.environment.name=prod",
    });
    expect(run.code, run.output).toBe(0);
    const request = envelopes.find((envelope) => envelope.data.baseType === "RequestData" && envelope.tags["ai.operation.id"] === traceId);
    expect(request?.tags["ai.cloud.role"]).toBe("blog-api");

    const dropped = "6bf92f3577b34da6a3ce929d0e0e4738";
    const off = await runInstance(dropped, { OTEL_TRACES_SAMPLER: "always_off", OTEL_SERVICE_NAME: "blog-api-unsampled" });
    expect(off.code, off.output).toBe(0);
    const ofThatInstance = envelopes.filter((envelope) => envelope.tags["ai.cloud.role"] === "blog-api-unsampled");
    // No span, yet the metrics still go: sampling is about traces.
    expect(ofThatInstance.some((envelope) => envelope.data.baseType === "RequestData")).toBe(false);
    expect(ofThatInstance.some((envelope) => envelope.data.baseType === "MetricData")).toBe(true);
  }, 60_000);

  it("sends nothing, and loads none of its telemetry, with OTEL_SDK_DISABLED=true", async () => {
    const run = await runInstance("7bf92f3577b34da6a3ce929d0e0e4739", { OTEL_SDK_DISABLED: "true", OTEL_SERVICE_NAME: "blog-api-disabled" });
    expect(run.code, run.output).toBe(0);
    expect(run.output).toContain("loaded at start: []");
    expect(envelopes.filter((envelope) => envelope.tags["ai.cloud.role"] === "blog-api-disabled")).toEqual([]);
  }, 60_000);
});
