import type { UserItem, UsernameClaim } from "../model/items";
import type { PipelinePolicy } from "./policy";
import { instanceIdOf } from "./orchestration-inputs";
import type { OrchestrationStarter } from "./services";
import { CLAIMS_SWEEP, type ClaimsSweepInput } from "./username-claims";
import { PROPAGATION, type PropagationInput } from "./username-propagation";

type Versioned<T> = T & { _etag?: string };

const isRenamedUser = (doc: unknown): doc is Versioned<UserItem> => {
  const item = doc as Partial<UserItem> | null;
  return item?.type === "user" && typeof item.usernameChangedDate === "string";
};

const isClaim = (doc: unknown): doc is Versioned<UsernameClaim> => (doc as Partial<UsernameClaim> | null)?.type === "username";

/** An instance id part from an item version: the same change always maps to the same instance. */
const versionOf = (doc: { _etag?: string; _ts?: number }) => (doc._etag ?? String(doc._ts ?? "")).replace(/[^A-Za-z0-9-]/g, "");

/**
 * The `users` change feed. A profile whose username changed starts one propagation (instance id
 * from the change, so a redelivery starts nothing new but restarts a stopped one), and any
 * change to a username claim or a renamed profile starts the orphaned-claim sweep for its
 * user. The post copies that also live in `users` are ignored.
 */
export async function handleUsersChanges(documents: unknown[], starter: OrchestrationStarter, policy?: Partial<PipelinePolicy>): Promise<void> {
  for (const doc of documents) {
    if (isRenamedUser(doc)) {
      const propagation: PropagationInput = { userId: doc.userId, policy };
      await starter.ensureStarted(PROPAGATION, instanceIdOf("username", doc.userId, Date.parse(doc.usernameChangedDate!)), propagation);
    }
    const owner = isClaim(doc) ? doc.ownerId : isRenamedUser(doc) ? doc.userId : undefined;
    if (owner !== undefined) {
      const sweep: ClaimsSweepInput = { userId: owner, policy };
      await starter.ensureStarted(CLAIMS_SWEEP, instanceIdOf("claims", owner, versionOf(doc as { _etag?: string })), sweep);
    }
  }
}
