import { setTimeout as sleep } from "node:timers/promises";
import { conflict } from "../model/errors";
import { usernameClaimId, type UserItem, type UsernameClaim } from "../model/items";
import { LIMITS } from "../model/limits";
import type { BlogStore } from "./client";
import { cosmosStatus } from "./failures";

type StoredClaim = UsernameClaim & { _etag: string; _ts: number };

/**
 * Usernames are unique through claim items: `username:<lower-case name>` in `users`, each its
 * own logical partition, so creating one is atomic. The invariant every function here keeps:
 * the name a profile uses is claimed by that profile's user. So a claim is only ever deleted
 * after checking that its owner's profile does not use it, and that check is made
 * linearizable with the owner's renames by "fencing" the profile (a conditional no-op write
 * that makes any rename which read the profile before it fail with 412 and start over).
 */

/*
 * Optimistic concurrency as the claim and profile writes (here and in users.ts) use it: read,
 * write on the version read (If-Match), and on a lost race read again, after a growing random wait.
 */

/** Optimistic rounds before a write that keeps losing races gives up with 409. */
export const ATTEMPTS = 16;

/** Before another optimistic round: a random wait that grows with each lost race (at most 160 ms), so racing writers stop colliding. */
export const backOff = (attempt: number) => (attempt === 0 ? Promise.resolve() : sleep(Math.random() * 5 * 2 ** Math.min(attempt, 5)));

/** Runs a conditional write; false when its condition failed (412) or the item is gone (404). */
export async function conditionally(write: () => Promise<unknown>): Promise<boolean> {
  try {
    await write();
    return true;
  } catch (error) {
    if (cosmosStatus(error) === 412 || cosmosStatus(error) === 404) return false;
    throw error;
  }
}

/** A profile document as stored: well-formed, or written malformed behind the API's back. */
export type ProfileDocument = Partial<Record<Exclude<keyof UserItem, "id">, unknown>> & { id: string; type: "user"; _etag: string };

/** The profile document under `userId`, as the claim checks read it (an erasure record or nothing: undefined). */
export async function readProfileDocument(store: BlogStore, userId: string): Promise<ProfileDocument | undefined> {
  const { resource } = await store.users.item(userId, userId).read<ProfileDocument>();
  return resource?.type === "user" ? resource : undefined;
}

/** The name a profile document uses, if it is a valid username at all. */
export const usernameOf = (profile: ProfileDocument | undefined): string | undefined =>
  typeof profile?.username === "string" && LIMITS.usernamePattern.test(profile.username) ? profile.username : undefined;

/** A claim whose owner has no profile yet is left alone this long: its create may still be in flight. */
export const UNBORN_CLAIM_GRACE_SECONDS = 60;

export async function readClaim(store: BlogStore, id: string): Promise<StoredClaim | undefined> {
  const { resource } = await store.users.item(id, id).read<StoredClaim>();
  return resource?.type === "username" ? resource : undefined;
}

const usesClaim = (profile: ProfileDocument | undefined, claimId: string) => {
  const name = usernameOf(profile);
  return name !== undefined && usernameClaimId(name) === claimId;
};

/**
 * Deletes the claim `claimId` unless its owner's profile uses it (or might be about to: an
 * owner without a profile gets a grace period). Returns true when the claim is gone.
 */
export async function releaseIfUnused(store: BlogStore, claimId: string, unbornGraceSeconds = UNBORN_CLAIM_GRACE_SECONDS): Promise<boolean> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    await backOff(attempt);
    const claim = await readClaim(store, claimId);
    if (!claim) return true;
    // A claim written malformed behind the API's back has no owner that could use it.
    const owner = typeof claim.ownerId === "string" && LIMITS.idPattern.test(claim.ownerId) ? await readProfileDocument(store, claim.ownerId) : undefined;
    if (usesClaim(owner, claimId)) return false;
    if (!owner && claim._ts > Date.now() / 1000 - unbornGraceSeconds) return false;
    // The fence: a rename of the owner that read the profile before this write now fails and re-reads.
    if (
      owner &&
      !(await conditionally(() =>
        store.users.item(claim.ownerId, claim.ownerId).replace(owner, { accessCondition: { type: "IfMatch", condition: owner._etag } }),
      ))
    )
      continue;
    if (await conditionally(() => store.users.item(claimId, claimId).delete({ accessCondition: { type: "IfMatch", condition: claim._etag } }))) return true;
  }
  return false;
}

/**
 * Claims `username` for `ownerId`: creates the claim, or, when the owner already holds it,
 * "touches" it (a conditional write that makes any release which read it before fail), or
 * takes it over when its owner no longer uses it. `created` says whether this call made it.
 */
export async function acquireClaim(store: BlogStore, ownerId: string, username: string): Promise<{ created: boolean }> {
  const id = usernameClaimId(username);
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    await backOff(attempt);
    const claim: UsernameClaim = { id, type: "username", userId: id, ownerId, username };
    try {
      await store.users.items.create(claim);
      return { created: true };
    } catch (error) {
      if (cosmosStatus(error) !== 409) throw error;
    }
    const existing = await readClaim(store, id);
    if (!existing) continue;
    if (existing.ownerId === ownerId) {
      const touched = await conditionally(() =>
        store.users.item(id, id).replace({ ...claim }, { accessCondition: { type: "IfMatch", condition: existing._etag } }),
      );
      if (touched) return { created: false };
      continue;
    }
    if (!(await releaseIfUnused(store, id))) throw conflict(`The username '${username}' is already taken.`);
  }
  throw conflict(`The username '${username}' is being claimed concurrently; try again.`);
}

/** Frees a name after a profile stopped using it; a failure leaves it to the orphaned-claim sweep. */
export async function releaseAfterRename(store: BlogStore, username: string, log: (message: string) => void): Promise<void> {
  try {
    await releaseIfUnused(store, usernameClaimId(username));
  } catch (error) {
    log(`could not free the username '${username}' yet (the sweep will): ${(error as Error).message}`);
  }
}

/**
 * The orphaned-claim sweep for one user: every claim it owns that its profile does not use
 * (left by a request cut off between the steps above) is freed. `pending` counts claims kept
 * because a profile creation may still be using them: look again later. A background,
 * cross-partition query.
 */
export async function releaseOrphanedClaims(
  store: BlogStore,
  userId: string,
  unbornGraceSeconds = UNBORN_CLAIM_GRACE_SECONDS,
): Promise<{ released: number; pending: number }> {
  const { resources } = await store.users.items
    .query<{ id: string }>({
      query: "SELECT c.id FROM c WHERE c.type = @type AND c.ownerId = @owner",
      parameters: [
        { name: "@type", value: "username" },
        { name: "@owner", value: userId },
      ],
    })
    .fetchAll();
  const profile = await readProfileDocument(store, userId);
  let released = 0;
  let pending = 0;
  for (const { id } of resources) {
    if (usesClaim(profile, id)) continue;
    if (await releaseIfUnused(store, id, unbornGraceSeconds)) released++;
    else pending++;
  }
  return { released, pending };
}
