import type { BlogStore } from "../store/client";
import * as df from "durable-functions";
import type { DurableClient } from "durable-functions";
import { estimateStoreLag } from "../store/change-feed-lag";
import { recordChangeFeedLag, recordLongRunningOrchestrations, untraced, type LagReading } from "../telemetry";
import { inBackground } from "../store/priority";
import { changeFeedTriggers } from "./change-feed-triggers";
import { orchestrations } from "./orchestrations";

/**
 * The backlog: work the system owes and has not done yet, measured by a timer function of the
 * Function App (functions/backlog-timer.ts, BACKLOG_SCHEDULE) as gauges the alerts and the operations
 * page read: the changes each change feed consumer has not taken, and the orchestrations running
 * for too long. Measurements, not work: their reads add no spans, and go at low priority.
 */
export async function measureBacklog(store: BlogStore, client: DurableClient, now = Date.now()): Promise<void> {
  await inBackground(() => untraced(() => Promise.all([measureChangeFeedLag(store, now), measureLongRunningOrchestrations(client, now)])));
}

/** Every consumer's lag per lease, read from its trigger's leases and the change feed (a stalled or failing consumer's rises). */
export async function measureChangeFeedLag(store: BlogStore, now = Date.now()): Promise<LagReading[]> {
  const readings = (await Promise.all(changeFeedTriggers.map((trigger) => estimateStoreLag(store, trigger.containerName, trigger, now)))).flat();
  recordChangeFeedLag(readings);
  return readings;
}

/** An orchestration running longer than this needs a look: the app's finish in seconds to minutes. */
export const LONG_RUNNING_MS = 30 * 60_000;

/** The orchestrations running for more than LONG_RUNNING_MS, per name (0 for the names with none, so the alert clears): one query of the task hub. */
export async function measureLongRunningOrchestrations(client: DurableClient, now = Date.now()): Promise<Record<string, number>> {
  const running = await client.getStatusBy({
    createdTimeTo: new Date(now - LONG_RUNNING_MS),
    runtimeStatus: [df.OrchestrationRuntimeStatus.Running, df.OrchestrationRuntimeStatus.Pending],
  });
  const counts: Record<string, number> = Object.fromEntries(Object.keys(orchestrations).map((name) => [name, 0]));
  for (const instance of running) if (instance.name in counts) counts[instance.name]++;
  recordLongRunningOrchestrations(counts);
  return counts;
}
