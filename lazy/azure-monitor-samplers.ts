// What the Function App's providers take from Azure Monitor's exporter package: its two
// samplers, each from its own file (lazy/splits.ts answers the package's name with this file in
// azure-monitor.js). The package's ES module build hides from esbuild that it is free of side
// effects, so its name would bring every exporter, which load later, from a split of their own.
export { ApplicationInsightsSampler } from "../node_modules/@azure/monitor-opentelemetry-exporter/dist/esm/sampling/percentageSampler.js";
export { RateLimitedSampler } from "../node_modules/@azure/monitor-opentelemetry-exporter/dist/esm/sampling/rateLimitedSampler.js";
