import { estimateStoreLag } from "../store/change-feed-lag";
import { recordChangeFeedLag, untraced, type LagReading } from "../telemetry";
import { changeFeedTriggers } from "./change-feed-triggers";

/**
 * The change feed estimator the Function App runs on a timer (functions/changeFeeds.ts): every
 * consumer's lag per lease, recorded as the lag gauges the alert and the operations page read.
 * A measurement, not work: its reads add no spans.
 */
export async function measureChangeFeedLag(): Promise<LagReading[]> {
  const readings = await untraced(async () =>
    (await Promise.all(changeFeedTriggers.map((trigger) => estimateStoreLag(trigger.containerName, trigger)))).flat(),
  );
  recordChangeFeedLag(readings);
  return readings;
}
