// A process that records one request's worth of telemetry through the local host's SDK (built
// by tsc -b) and exits, flushing it: the OTLP settings come from its environment, as npm start's do.
const { join } = require("node:path");
const { emitLog, localTelemetry } = require("local-host");
const { inSpan, recordHttpRequest } = require(join(__dirname, "../../dist/src/telemetry"));

(async () => {
  const telemetry = localTelemetry();
  await inSpan("GET /api/feed", {}, async () => {
    recordHttpRequest({ route: "/api/feed", method: "GET", scheme: "http", status: 200, seconds: 0.003, charge: 2.5 });
    emitLog("a line written inside the request");
  });
  // What the operations page reads, answered even when the SDK is disabled.
  const { scopeMetrics } = await telemetry.collect();
  console.log(`collected ${scopeMetrics.length} scopes`);
  await telemetry.shutdown();
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
