import { metrics } from "@opentelemetry/api";
import type { Container } from "@azure/cosmos";
import { METRICS, observeChangeFeedLag, SCOPE } from "../src/telemetry";
import { lagEstimator, type CosmosDBTriggerFunction, type DurableHost, type LocalTelemetry } from "local-host";
import { opsFigures, type OpsFigures } from "./ops";

/** Orchestration instances by runtime status, as the local durable host holds them. */
async function instanceCounts(durable: DurableHost): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const instance of await durable.queryInstances()) counts[instance.runtimeStatus] = (counts[instance.runtimeStatus] ?? 0) + 1;
  return counts;
}

/**
 * What only the local runtime can measure, observed as metrics each time they are read: every
 * consumer's lag per lease (the change feed estimator) and the orchestration instances by
 * status. Returns the function that stops observing.
 */
export function observeLocalRuntime(
  triggers: readonly CosmosDBTriggerFunction[],
  containers: (trigger: CosmosDBTriggerFunction) => { monitored: Container; leases: Container; accountHost: string },
  durable: DurableHost,
): () => void {
  const estimators = triggers.map((trigger) => {
    const { monitored, leases, accountHost } = containers(trigger);
    return lagEstimator(monitored, leases, trigger, accountHost);
  });
  const unobserveLag = observeChangeFeedLag(async () => (await Promise.all(estimators.map((estimate) => estimate()))).flat());
  const instances = metrics
    .getMeter(SCOPE)
    .createObservableGauge(METRICS.orchestrationInstances, { unit: "{instance}", description: "Orchestration instances by runtime status" });
  const observe = async (result: { observe(value: number, attributes: Record<string, string>): void }) => {
    for (const [status, count] of Object.entries(await instanceCounts(durable))) result.observe(count, { status });
  };
  instances.addCallback(observe);
  return () => {
    unobserveLag();
    instances.removeCallback(observe);
  };
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
