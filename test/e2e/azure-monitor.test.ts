import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createDefaultHttpClient, type HttpClient } from "@azure/core-rest-pipeline";
import { AzureMonitorMetricExporter, AzureMonitorTraceExporter } from "@azure/monitor-opentelemetry-exporter";
import { PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics";
import { SimpleSpanProcessor } from "@opentelemetry/sdk-trace-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { localTelemetry } from "local-host";
import { ingestionEndpoint, type Envelope } from "../support/ingestion";
import { localSystem, within, type Client } from "../support/system";

/**
 * The app's telemetry as Application Insights receives it: the local host's spans and metrics go
 * through Azure Monitor's own exporter (its span-to-envelope mapping and its sender) to an
 * ingestion endpoint on loopback; every table, name and property the KQL of docs/operations.md
 * and infra/app/observability.bicep reads must be in the envelopes of a real run.
 */
const envelopes: Envelope[] = [];
let ingestion: Server;
let app: Client;
let reader: PeriodicExportingMetricReader;
const root = join(__dirname, "../..");

beforeAll(async () => {
  process.env.APPLICATIONINSIGHTS_STATSBEAT_DISABLED = "true";
  // The estimator's timer every 5 s rather than npm start's 30 s: its gauges are waited for below.
  process.env.BACKLOG_SCHEDULE = "*/5 * * * * *";
  ingestion = createServer(ingestionEndpoint((batch) => envelopes.push(...batch)));
  await new Promise<void>((resolve) => ingestion.listen(0, "127.0.0.1", resolve));
  const connectionString = `InstrumentationKey=00000000-0000-0000-0000-000000000001;IngestionEndpoint=http://127.0.0.1:${(ingestion.address() as AddressInfo).port}/`;
  // The exporter always sends over HTTPS; the request it makes (its envelopes, serialized and
  // compressed by it) is handed to the plain-HTTP receiver on loopback as it is.
  const https = createDefaultHttpClient();
  const httpClient: HttpClient = {
    sendRequest: (request) => https.sendRequest(Object.assign(request, { url: request.url.replace(/^https:/, "http:"), allowInsecureConnection: true })),
  };
  reader = new PeriodicExportingMetricReader({ exporter: new AzureMonitorMetricExporter({ connectionString, httpClient }), exportIntervalMillis: 60_000 });
  localTelemetry({ spanProcessors: [new SimpleSpanProcessor(new AzureMonitorTraceExporter({ connectionString, httpClient }))], metricReaders: [reader] });
  app = await localSystem();
});
afterAll(async () => {
  await app.stop();
  await new Promise<void>((resolve) => ingestion.close(() => resolve()));
});

/** The rows a table would hold, from the envelopes: its name and its Properties. */
function rows(table: string): { name: string; properties: Record<string, string> }[] {
  const baseType = { AppRequests: "RequestData", AppDependencies: "RemoteDependencyData", AppMetrics: "MetricData" }[table];
  return envelopes
    .filter((envelope) => envelope.data.baseType === baseType)
    .flatMap((envelope) => {
      const properties = envelope.data.baseData.properties ?? {};
      if (baseType === "MetricData") return (envelope.data.baseData.metrics ?? []).map((metric) => ({ name: metric.name, properties }));
      return [{ name: envelope.data.baseData.name ?? "", properties }];
    });
}

/** Every KQL query the operator is given: the docs' code blocks and the alerts' and workbook's queries. */
function queries(): string[] {
  const docs = [...readFileSync(join(root, "docs/operations.md"), "utf8").matchAll(/```kusto\n([\s\S]*?)```/g)].map((m) => m[1]);
  const bicep = [...readFileSync(join(root, "infra/app/observability.bicep"), "utf8").matchAll(/query: '([^']+)'/g)].map((m) => m[1]);
  return [...docs, ...bicep];
}

describe("telemetry through Azure Monitor's exporter", () => {
  it("lands every row the operator's queries and alerts read: their tables, names and properties", async () => {
    expect((await app.call("POST", "/users", { as: "mapped", body: { username: "mapped" } })).status).toBe(201);
    const post = await app.call("POST", "/posts", { as: "mapped", body: { title: "t", content: "c" } });
    expect(post.status).toBe(201);
    expect((await app.call("POST", `/posts/${post.body.id}/likes`, { as: "mapped" })).status).toBe(201);
    expect((await app.call("PUT", "/users/mapped", { as: "mapped", body: { username: "mapped2" } })).status).toBe(200);
    await within(20_000, async () => JSON.stringify((await app.call("GET", "/users/mapped/posts")).body).includes('"mapped2"'));
    // The batches' rows, by their consumer property (their name is what the queries check).
    await within(20_000, async () => rows("AppRequests").some((row) => "blog.change_feed.consumer" in row.properties));
    // The change feed estimator's gauges, from its timer function (every 5 s here).
    await within(30_000, async () => {
      await reader.forceFlush();
      return rows("AppMetrics").some((row) => row.name === "blog.change_feed.lag_seconds");
    });

    const all = queries();
    expect(all.length).toBeGreaterThan(8);
    for (const query of all) {
      const table = /^\s*(?:union\s+)?(App[A-Za-z]+)/.exec(query)?.[1];
      if (!table) continue; // Cosmos DB's own diagnostic logs (CDBDataPlaneRequests): not the app's telemetry
      const name = /\bName\s*(==|startswith)\s*"([^"]+)"/.exec(query);
      const matching = rows(table).filter((row) => !name || (name[1] === "==" ? row.name === name[2] : row.name.startsWith(name[2])));
      expect(matching.length, `${table} rows for: ${query}`).toBeGreaterThan(0);
      for (const [, property] of query.matchAll(/Properties\["([^"]+)"\]/g))
        expect(
          matching.some((row) => property in row.properties),
          `${property} in ${table} for: ${query}`,
        ).toBe(true);
    }
  }, 60_000);
});
