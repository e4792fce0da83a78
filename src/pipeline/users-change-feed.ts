import type { BlogStore } from "../store/client";
import type { ContributionItem, ErasureItem, UserItem, UsernameClaim } from "../model/items";
import { eraseLateOwnPost, eraseLateWritingOnPost } from "../store/erasure";
import { readAccountDocument } from "../store/users";
import { ERASURE, type ErasureInput } from "./erasure-orchestration";
import type { PipelinePolicy } from "./policy";
import { instanceIdOf } from "./orchestration-inputs";
import type { OrchestrationStarter } from "./pipeline-services";
import { CLAIMS_SWEEP, type ClaimsSweepInput } from "./username-claims-orchestration";
import { PROPAGATION, type PropagationInput } from "./username-propagation-orchestration";

type Versioned<T> = T & { _etag?: string };

const isRenamedUser = (doc: unknown): doc is Versioned<UserItem> => {
  const item = doc as Partial<UserItem> | null;
  return item?.type === "user" && typeof item.usernameChangedDate === "string";
};

const isErasure = (doc: unknown): doc is Versioned<ErasureItem> => {
  const item = doc as Partial<ErasureItem> | null;
  return item?.type === "erasure" && typeof item.userId === "string" && typeof item.requestedDate === "string";
};

const isClaim = (doc: unknown): doc is Versioned<UsernameClaim> => (doc as Partial<UsernameClaim> | null)?.type === "username";

/** An instance id part from an item version: the same change always maps to the same instance. */
const versionOf = (doc: { _etag?: string; _ts?: number }) => (doc._etag ?? String(doc._ts ?? "")).replace(/[^A-Za-z0-9-]/g, "");

/** A document the posts change feed writes into a user's partition: the copy of their post (Q3), or the record of a post they wrote on. */
type WrittenForUser = { type: "post"; userId: string; postId: string } | (ContributionItem & { type: "contribution" });

const isWrittenForUser = (doc: unknown): doc is WrittenForUser => {
  const item = doc as { type?: unknown; userId?: unknown; postId?: unknown } | null;
  return (item?.type === "post" || item?.type === "contribution") && typeof item.userId === "string" && typeof item.postId === "string";
};

/**
 * What the posts change feed wrote into the partition of an account erased meanwhile is erased
 * again, found from the write itself. The posts change feed repairs its own late writes, but a
 * host whose lease was taken over can still be handling a batch the new holder already handled:
 * killed between its writes and its repair, it leaves them, and nobody handles that batch again.
 * Its writes still come here, after they were made: the account read then is either the erasure
 * record (erased here) or a profile (the erasure, asked for later, sweeps them).
 */
async function eraseWrittenForErasedAccounts(store: BlogStore, documents: readonly WrittenForUser[]): Promise<void> {
  for (const userId of new Set(documents.map((doc) => doc.userId))) {
    if ((await readAccountDocument(store, userId))?.type !== "erasure") continue;
    for (const doc of documents.filter((candidate) => candidate.userId === userId)) {
      if (doc.type === "post") await eraseLateOwnPost(store, userId, doc.postId);
      else await eraseLateWritingOnPost(store, userId, doc.postId);
    }
  }
}

/**
 * The `users` change feed. A profile whose username changed starts one propagation (instance id
 * from the change, so a redelivery starts nothing new but restarts a stopped one), and any
 * change to a username claim or a renamed profile starts the orphaned-claim sweep for its
 * user. An erasure record starts the account's erasure (instance id from the request, so the
 * record's progress updates start nothing new) and the sweep that frees its username: the
 * profile that used it is gone. The post copies and records of where a user wrote that also
 * live in `users` matter only in an erased account's partition: there they are erased again.
 */
export async function handleUsersChanges(
  store: BlogStore,
  documents: unknown[],
  starter: OrchestrationStarter,
  policy?: Partial<PipelinePolicy>,
): Promise<void> {
  for (const doc of documents) {
    if (isRenamedUser(doc)) {
      const propagation: PropagationInput = { userId: doc.userId, policy };
      await starter.ensureStarted(PROPAGATION, instanceIdOf("username", doc.userId, Date.parse(doc.usernameChangedDate!)), propagation);
    }
    if (isErasure(doc)) {
      const requested = Date.parse(doc.requestedDate);
      const erasure: ErasureInput = { userId: doc.userId, policy };
      await starter.ensureStarted(ERASURE, instanceIdOf("erasure", doc.userId, requested), erasure);
      const sweep: ClaimsSweepInput = { userId: doc.userId, policy };
      await starter.ensureStarted(CLAIMS_SWEEP, instanceIdOf("claims", doc.userId, `erased${requested}`), sweep);
      continue;
    }
    const owner = isClaim(doc) ? doc.ownerId : isRenamedUser(doc) ? doc.userId : undefined;
    if (owner !== undefined) {
      const sweep: ClaimsSweepInput = { userId: owner, policy };
      await starter.ensureStarted(CLAIMS_SWEEP, instanceIdOf("claims", owner, versionOf(doc as { _etag?: string })), sweep);
    }
  }
  await eraseWrittenForErasedAccounts(store, documents.filter(isWrittenForUser));
}
