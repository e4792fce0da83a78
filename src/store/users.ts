import { setTimeout as sleep } from "node:timers/promises";
import { conflict, MalformedItemError, notFound, preconditionFailed } from "../model/errors";
import { itemProblem } from "../model/item-schemas";
import { nowIso, usernameClaimId, type UserItem, type UsernameClaim } from "../model/items";
import { LIMITS } from "../model/limits";
import { store } from "./client";
import { cosmosStatus } from "./failures";
import { withTraceOrigin } from "../telemetry";

export type StoredUser = UserItem & { _etag: string };
type StoredClaim = UsernameClaim & { _etag: string; _ts: number };

/**
 * Usernames are unique through claim items: `username:<lower-case name>` in `users`, each its
 * own logical partition, so creating one is atomic. The invariant every function here keeps:
 * the name a profile uses is claimed by that profile's user. So a claim is only ever deleted
 * after checking that its owner's profile does not use it, and that check is made
 * linearizable with the owner's renames by "fencing" the profile (a conditional no-op write
 * that makes any rename which read the profile before it fail with 412 and start over).
 */

/** A claim whose owner has no profile yet is left alone this long: its create may still be in flight. */
export const UNBORN_CLAIM_GRACE_SECONDS = 60;
/** Optimistic rounds before a write that keeps losing races gives up with 409. */
const ATTEMPTS = 16;

/** Before another optimistic round: a random wait that grows with each lost race (at most 160 ms), so racing writers stop colliding. */
const backOff = (attempt: number) => (attempt === 0 ? Promise.resolve() : sleep(Math.random() * 5 * 2 ** Math.min(attempt, 5)));

/** The tail of each profile's queue of renames in this instance. */
const renameQueues = new Map<string, Promise<unknown>>();

/**
 * Runs the renames of one profile in this instance one after another, in arrival order. Racing
 * each other they gain nothing (the last writer wins anyway) and each one's release of its old
 * name fences the profile, failing the others' writes until they give up; in a queue each
 * succeeds at once. Renames from other instances still race, and retry.
 */
function oneRenameAtATime<T>(userId: string, rename: () => Promise<T>): Promise<T> {
  const previous = renameQueues.get(userId) ?? Promise.resolve();
  const result = previous.then(rename, rename);
  const tail = result.then(
    () => {},
    () => {},
  );
  renameQueues.set(userId, tail);
  void tail.then(() => {
    if (renameQueues.get(userId) === tail) renameQueues.delete(userId);
  });
  return result;
}

/** A profile document as stored: well-formed, or written malformed behind the API's back. */
type ProfileDocument = Partial<Record<Exclude<keyof UserItem, "id">, unknown>> & { id: string; type: "user"; _etag: string };

async function readProfileDocument(userId: string): Promise<ProfileDocument | undefined> {
  const { resource } = await store().users.item(userId, userId).read<ProfileDocument>();
  return resource?.type === "user" ? resource : undefined;
}

/** Q1: one point read. A malformed profile throws: it is never served, or copied, as it is. */
export async function readUser(userId: string): Promise<StoredUser | undefined> {
  const profile = await readProfileDocument(userId);
  if (!profile) return undefined;
  const problem = itemProblem("users", profile);
  if (problem) throw new MalformedItemError("users", userId, problem);
  return profile as unknown as StoredUser;
}

/** The profile when it exists and is well-formed: what the pipeline may copy names from (a malformed one has been set aside). */
export async function readWellFormedUser(userId: string): Promise<StoredUser | undefined> {
  try {
    return await readUser(userId);
  } catch (error) {
    if (error instanceof MalformedItemError) return undefined;
    throw error;
  }
}

/** The name a profile document uses, if it is a valid username at all. */
const usernameOf = (profile: ProfileDocument | undefined): string | undefined =>
  typeof profile?.username === "string" && LIMITS.usernamePattern.test(profile.username) ? profile.username : undefined;

async function readClaim(id: string): Promise<StoredClaim | undefined> {
  const { resource } = await store().users.item(id, id).read<StoredClaim>();
  return resource?.type === "username" ? resource : undefined;
}

/** Runs a conditional write; false when its condition failed (412) or the item is gone (404). */
async function conditionally(write: () => Promise<unknown>): Promise<boolean> {
  try {
    await write();
    return true;
  } catch (error) {
    if (cosmosStatus(error) === 412 || cosmosStatus(error) === 404) return false;
    throw error;
  }
}

const usesClaim = (profile: ProfileDocument | undefined, claimId: string) => {
  const name = usernameOf(profile);
  return name !== undefined && usernameClaimId(name) === claimId;
};

/**
 * Deletes the claim `claimId` unless its owner's profile uses it (or might be about to: an
 * owner without a profile gets a grace period). Returns true when the claim is gone.
 */
export async function releaseIfUnused(claimId: string, unbornGraceSeconds = UNBORN_CLAIM_GRACE_SECONDS): Promise<boolean> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    await backOff(attempt);
    const claim = await readClaim(claimId);
    if (!claim) return true;
    // A claim written malformed behind the API's back has no owner that could use it.
    const owner = typeof claim.ownerId === "string" && LIMITS.idPattern.test(claim.ownerId) ? await readProfileDocument(claim.ownerId) : undefined;
    if (usesClaim(owner, claimId)) return false;
    if (!owner && claim._ts > Date.now() / 1000 - unbornGraceSeconds) return false;
    // The fence: a rename of the owner that read the profile before this write now fails and re-reads.
    if (
      owner &&
      !(await conditionally(() =>
        store()
          .users.item(claim.ownerId, claim.ownerId)
          .replace(owner, { accessCondition: { type: "IfMatch", condition: owner._etag } }),
      ))
    )
      continue;
    if (
      await conditionally(() =>
        store()
          .users.item(claimId, claimId)
          .delete({ accessCondition: { type: "IfMatch", condition: claim._etag } }),
      )
    )
      return true;
  }
  return false;
}

/**
 * Claims `username` for `ownerId`: creates the claim, or, when the owner already holds it,
 * "touches" it (a conditional write that makes any release which read it before fail), or
 * takes it over when its owner no longer uses it. `created` says whether this call made it.
 */
async function acquireClaim(ownerId: string, username: string): Promise<{ created: boolean }> {
  const id = usernameClaimId(username);
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    await backOff(attempt);
    const claim: UsernameClaim = { id, type: "username", userId: id, ownerId, username };
    try {
      await store().users.items.create(claim);
      return { created: true };
    } catch (error) {
      if (cosmosStatus(error) !== 409) throw error;
    }
    const existing = await readClaim(id);
    if (!existing) continue;
    if (existing.ownerId === ownerId) {
      const touched = await conditionally(() =>
        store()
          .users.item(id, id)
          .replace({ ...claim }, { accessCondition: { type: "IfMatch", condition: existing._etag } }),
      );
      if (touched) return { created: false };
      continue;
    }
    if (!(await releaseIfUnused(id))) throw conflict(`The username '${username}' is already taken.`);
  }
  throw conflict(`The username '${username}' is being claimed concurrently; try again.`);
}

/** Frees a name after a profile stopped using it; a failure leaves it to the orphaned-claim sweep. */
async function releaseAfterRename(username: string, log: (message: string) => void): Promise<void> {
  try {
    await releaseIfUnused(usernameClaimId(username));
  } catch (error) {
    log(`could not free the username '${username}' yet (the sweep will): ${(error as Error).message}`);
  }
}

/** C1 (create): claim the username first, so two racing creates of one name cannot both win. */
export async function createUser(userId: string, username: string): Promise<StoredUser> {
  if (await readProfileDocument(userId)) throw conflict("A profile already exists for this user.");
  const { created } = await acquireClaim(userId, username);
  const user: UserItem = { id: userId, type: "user", userId, username, creationDate: nowIso() };
  let stored: StoredUser;
  try {
    stored = (await store().users.items.create(withTraceOrigin(user))).resource as StoredUser;
  } catch (error) {
    // Only a claim this call created may be freed, and only if the existing profile uses another name.
    if (created) await releaseIfUnused(usernameClaimId(username)).catch(() => false);
    if (cosmosStatus(error) === 409) throw conflict("A profile already exists for this user.");
    throw error;
  }
  // The claim was taken over only if this call stalled beyond the grace period: undo the profile.
  if ((await readClaim(usernameClaimId(username)))?.ownerId !== userId) {
    await conditionally(() =>
      store()
        .users.item(userId, userId)
        .delete({ accessCondition: { type: "IfMatch", condition: stored._etag } }),
    );
    throw conflict(`The username '${username}' is already taken.`);
  }
  return stored;
}

/**
 * C1 (edit): claim the new name, replace the profile conditionally, then free the old name.
 * Without If-Match the last writer wins: a lost race re-reads and tries again. With If-Match,
 * a profile changed since the client read it is the client's 412.
 */
export function renameUser(
  userId: string,
  username: string,
  preconditions: (etag: string) => boolean | undefined,
  log: (message: string) => void = () => {},
): Promise<StoredUser> {
  return oneRenameAtATime(userId, () => renameOnce(userId, username, preconditions, log));
}

/**
 * The profile `current` renamed to `username`. A profile written malformed behind the API's back
 * is rebuilt from what is sound in it, so its owner can always repair it with a valid PUT.
 */
function renamedProfile(current: ProfileDocument, userId: string, username: string): UserItem {
  const changed = nowIso();
  const candidates: UserItem[] = [
    { ...(current as unknown as UserItem), username, usernameChangedDate: changed },
    { id: userId, type: "user", userId, username, creationDate: String(current.creationDate), usernameChangedDate: changed },
    { id: userId, type: "user", userId, username, creationDate: changed, usernameChangedDate: changed },
  ];
  return candidates.find((candidate) => itemProblem("users", candidate) === undefined) ?? candidates[2];
}

/** One rename, retried while it loses races (with another instance's rename, or a release's fence). */
async function renameOnce(
  userId: string,
  username: string,
  preconditions: (etag: string) => boolean | undefined,
  log: (message: string) => void,
): Promise<StoredUser> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    await backOff(attempt);
    const current = await readProfileDocument(userId);
    if (!current) throw notFound(`User '${userId}' does not exist.`);
    const clientCondition = preconditions(current._etag);
    if (clientCondition === false) throw preconditionFailed();
    const malformed = itemProblem("users", current) !== undefined;
    const previous = usernameOf(current);
    if (previous === username && !malformed) return current as unknown as StoredUser;
    const newClaim = previous === undefined || usernameClaimId(previous) !== usernameClaimId(username);
    if (newClaim) await acquireClaim(userId, username);
    const replaced = await store()
      .users.item(userId, userId)
      .replace<UserItem>(withTraceOrigin(renamedProfile(current, userId, username)), { accessCondition: { type: "IfMatch", condition: current._etag } })
      .then(
        (response) => response.resource as StoredUser,
        (error: unknown) => {
          if (cosmosStatus(error) === 412) return undefined;
          throw error;
        },
      );
    if (replaced) {
      if (malformed) log(`repaired the malformed profile of '${userId}'`);
      if (newClaim && previous !== undefined) {
        await releaseAfterRename(previous, log);
        // Releasing the old name fences the profile with one more replace: answer with the version
        // stored now, so the ETag the client gets is current (RFC 9110 9.3.4), unless someone renamed it since.
        const stored = await readProfileDocument(userId);
        if (stored && usernameOf(stored) === username) return stored as unknown as StoredUser;
      }
      return replaced;
    }
    if (clientCondition === true) throw preconditionFailed();
  }
  throw conflict("The profile is being changed concurrently; try again.");
}

/**
 * The orphaned-claim sweep for one user: every claim it owns that its profile does not use
 * (left by a request cut off between the steps above) is freed. `pending` counts claims kept
 * because a profile creation may still be using them: look again later. A background,
 * cross-partition query.
 */
export async function releaseOrphanedClaims(userId: string, unbornGraceSeconds = UNBORN_CLAIM_GRACE_SECONDS): Promise<{ released: number; pending: number }> {
  const { resources } = await store()
    .users.items.query<{ id: string }>({
      query: "SELECT c.id FROM c WHERE c.type = @type AND c.ownerId = @owner",
      parameters: [
        { name: "@type", value: "username" },
        { name: "@owner", value: userId },
      ],
    })
    .fetchAll();
  const profile = await readProfileDocument(userId);
  let released = 0;
  let pending = 0;
  for (const { id } of resources) {
    if (usesClaim(profile, id)) continue;
    if (await releaseIfUnused(id, unbornGraceSeconds)) released++;
    else pending++;
  }
  return { released, pending };
}
