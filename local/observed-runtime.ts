import { metrics } from "@opentelemetry/api";
import { METRICS, pseudonymOf, SCOPE } from "../src/telemetry";
import type { DurableHost, LocalTelemetry } from "local-host";
import { currentFigures, OpsHistory, STEP_MS, type OpsFigures } from "./ops";
import type { OrchestrationAttention } from "../src/telemetry/ops-figures";

/**
 * What only the local runtime can measure, observed as a metric each time it is read: the
 * orchestration instances by status (in Azure, the Durable extension's own). Returns the
 * function that stops observing.
 */
export function observeLocalRuntime(durable: DurableHost): () => void {
  const instances = metrics
    .getMeter(SCOPE)
    .createObservableGauge(METRICS.orchestrationInstances, { unit: "{instance}", description: "Orchestration instances by runtime status" });
  const observe = (result: { observe(value: number, attributes: Record<string, string>): void }) => {
    // The instances this host runs (with a shared task hub, those of its partitions: the hosts' figures add up, none counted twice).
    for (const [status, count] of Object.entries(durable.instanceCounts())) result.observe(count, { status });
  };
  instances.addCallback(observe);
  return () => instances.removeCallback(observe);
}

/**
 * A running instance is listed as long-running on the page after this long: an earlier, lower bar
 * than the alert's (LONG_RUNNING_MS in src/pipeline/backlog.ts, 30 minutes), for someone watching.
 */
const PAGE_ATTENTION_MS = 5 * 60_000;

/** A trace's address in the OTLP UI `OTEL_TRACES_UI_URL` names (`{traceId}` in it), when one is set. */
export function traceUrl(traceId: string | undefined, template = process.env.OTEL_TRACES_UI_URL): string | undefined {
  return traceId && template?.includes("{traceId}") ? template.replace("{traceId}", traceId) : undefined;
}

/** The orchestrations an operator should look at: retrying a failing task, or running longer than five minutes. */
export function orchestrationsNeedingAttention(durable: DurableHost, now: number): OrchestrationAttention[] {
  return durable
    .runningInstances()
    .flatMap((instance): OrchestrationAttention[] => {
      const common = { name: instance.name, instance: pseudonymOf(instance.instanceId), traceUrl: traceUrl(instance.traceParent?.split("-")[1]) };
      if (instance.lastFailure) return [{ ...common, state: "retrying", reason: instance.lastFailure.reason, since: instance.lastFailure.at }];
      if (now - instance.createdTime.getTime() > PAGE_ATTENTION_MS)
        return [
          {
            ...common,
            state: "long-running",
            reason: `running for ${Math.round((now - instance.createdTime.getTime()) / 60_000)} min`,
            since: instance.createdTime.toISOString(),
          },
        ];
      return [];
    })
    .slice(0, 50);
}

/**
 * The operations page's reader: a reading of the metrics every STEP_MS for the windowed figures
 * (rates, percentiles and error rates over one and five minutes), and at each read the figures
 * as they stand, the orchestrations to look at and the traces to open. `stop` ends the readings.
 */
export function opsReader(telemetry: LocalTelemetry, durable: DurableHost): { read(): Promise<OpsFigures>; stop(): void } {
  const history = new OpsHistory();
  const take = async () => history.keep(await telemetry.collect(), Date.now());
  void take().catch(() => {});
  const timer = setInterval(() => void take().catch(() => {}), STEP_MS);
  timer.unref();
  return {
    async read() {
      const metrics = await telemetry.collect();
      const now = Date.now();
      const windowed = history.figures(metrics, now);
      const routes = windowed.routes.map((route) => {
        const { slowest, failed } = telemetry.exemplars(`${route.method} ${route.route}`);
        return { ...route, slowestTraceUrl: traceUrl(slowest?.traceId), errorTraceUrl: traceUrl(failed?.traceId) };
      });
      return {
        at: new Date(now).toISOString(),
        ...currentFigures(metrics),
        ...windowed,
        routes,
        attention: orchestrationsNeedingAttention(durable, now),
      };
    },
    stop: () => clearInterval(timer),
  };
}
