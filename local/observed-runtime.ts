import { metrics } from "@opentelemetry/api";
import { METRICS, SCOPE } from "../src/telemetry";
import type { DurableHost, LocalTelemetry } from "local-host";
import { opsFigures, type OpsFigures } from "./ops";

/** Orchestration instances by runtime status, as the local durable host holds them. */
async function instanceCounts(durable: DurableHost): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const instance of await durable.queryInstances()) counts[instance.runtimeStatus] = (counts[instance.runtimeStatus] ?? 0) + 1;
  return counts;
}

/**
 * What only the local runtime can measure, observed as a metric each time it is read: the
 * orchestration instances by status (in Azure, the Durable extension's own). Returns the
 * function that stops observing.
 */
export function observeLocalRuntime(durable: DurableHost): () => void {
  const instances = metrics
    .getMeter(SCOPE)
    .createObservableGauge(METRICS.orchestrationInstances, { unit: "{instance}", description: "Orchestration instances by runtime status" });
  const observe = async (result: { observe(value: number, attributes: Record<string, string>): void }) => {
    for (const [status, count] of Object.entries(await instanceCounts(durable))) result.observe(count, { status });
  };
  instances.addCallback(observe);
  return () => instances.removeCallback(observe);
}

/** The operations page's reader: figures from the metrics, the request rate since the last reading. */
export function opsReader(telemetry: LocalTelemetry): { read(): Promise<OpsFigures> } {
  let previous: { at: number; requests: number } | undefined;
  return {
    async read() {
      const figures = opsFigures(await telemetry.collect(), previous);
      previous = { at: Date.parse(figures.at), requests: figures.requests };
      return figures;
    },
  };
}
