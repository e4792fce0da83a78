import type { EntityHandler, OrchestrationHandler } from "durable-functions";
import type { BlogStore } from "../store/client";
import { observedActivity, observedOrchestrator } from "./observed";
import { completeErasureActivity, eraseAccount, eraseLeftovers, eraseOwnPosts, eraseWriting, ERASURE, ERASURE_ACTIVITIES } from "./erasure-orchestration";
import { copyPostToFeed, FEED_REFRESH, FEED_REFRESH_ACTIVITIES, refreshFeedCopy } from "./feed-refresh";
import { CLAIMS_ACTIVITIES, CLAIMS_SWEEP, releaseOrphanedClaimsActivity, releaseOrphanedUsernames } from "./username-claims-orchestration";
import { findStalePartitions, propagateUsername, PROPAGATION, PROPAGATION_ACTIVITIES, renameInPartition } from "./username-propagation-orchestration";

/** THE orchestrations: functions/ registers them with df.app.orchestration, the local host (packages/local-host) runs them. */
export const orchestrations: Readonly<Record<string, OrchestrationHandler>> = {
  [PROPAGATION]: observedOrchestrator(PROPAGATION, propagateUsername),
  [CLAIMS_SWEEP]: observedOrchestrator(CLAIMS_SWEEP, releaseOrphanedUsernames),
  [FEED_REFRESH]: observedOrchestrator(FEED_REFRESH, refreshFeedCopy),
  [ERASURE]: observedOrchestrator(ERASURE, eraseAccount),
};

/** THE activities they call (df.app.activity), each taking the store its host passes and its input as JSON delivers it. */
export const activities: Readonly<Record<string, (store: BlogStore, input: never) => Promise<unknown>>> = {
  [PROPAGATION_ACTIVITIES.findStalePartitions]: observedActivity(PROPAGATION_ACTIVITIES.findStalePartitions, findStalePartitions),
  [PROPAGATION_ACTIVITIES.renameInPartition]: observedActivity(PROPAGATION_ACTIVITIES.renameInPartition, renameInPartition),
  [CLAIMS_ACTIVITIES.releaseOrphanedClaims]: observedActivity(CLAIMS_ACTIVITIES.releaseOrphanedClaims, releaseOrphanedClaimsActivity),
  [FEED_REFRESH_ACTIVITIES.copyPostToFeed]: observedActivity(FEED_REFRESH_ACTIVITIES.copyPostToFeed, copyPostToFeed),
  [ERASURE_ACTIVITIES.eraseOwnPosts]: observedActivity(ERASURE_ACTIVITIES.eraseOwnPosts, eraseOwnPosts),
  [ERASURE_ACTIVITIES.eraseWriting]: observedActivity(ERASURE_ACTIVITIES.eraseWriting, eraseWriting),
  [ERASURE_ACTIVITIES.eraseLeftovers]: observedActivity(ERASURE_ACTIVITIES.eraseLeftovers, eraseLeftovers),
  [ERASURE_ACTIVITIES.completeErasure]: observedActivity(ERASURE_ACTIVITIES.completeErasure, completeErasureActivity),
};

/** THE durable entities (df.app.entity): none yet; both hosts run whatever is added here. */
export const entities: Readonly<Record<string, EntityHandler<unknown>>> = {};

/** The part of the durable client the starters use: the package's, from df.getClient(context), in both hosts. */
export interface DurableClientLike {
  getStatus(instanceId: string): Promise<{ runtimeStatus: string } | undefined>;
  startNew(name: string, options: { instanceId: string; input: unknown }): Promise<string>;
}

const RESTARTABLE = ["Failed", "Terminated", "Canceled"];

/**
 * Starts `name` as `instanceId` unless that instance is running or has completed; restarts it
 * when it failed or was terminated. Instance ids come from the change that caused them, so a
 * redelivered change starts nothing twice, yet a stopped propagation is not left stopped.
 */
export async function ensureStarted(client: DurableClientLike, name: string, instanceId: string, input: unknown): Promise<"started" | "restarted" | "exists"> {
  // The durable client answers an unknown instance with nothing, or an error, depending on version.
  const status = await client.getStatus(instanceId).catch(() => undefined);
  if (status?.runtimeStatus && !RESTARTABLE.includes(status.runtimeStatus)) return "exists";
  try {
    await client.startNew(name, { instanceId, input });
  } catch (error) {
    // Another consumer (a lease that moved) started it first.
    const now = await client.getStatus(instanceId).catch(() => undefined);
    if (now?.runtimeStatus && !RESTARTABLE.includes(now.runtimeStatus)) return "exists";
    throw error;
  }
  return status ? "restarted" : "started";
}
