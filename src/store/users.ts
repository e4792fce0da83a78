import { accountErased, conflict, MalformedItemError, notFound, preconditionFailed, profileRequired } from "../model/errors";
import { itemProblem } from "../model/item-schemas";
import { nowIso, usernameClaimId, type ErasureItem, type UserItem } from "../model/items";
import { perStore, type BlogStore } from "./client";
import { cosmosStatus } from "./failures";
import { withTraceOrigin } from "../telemetry";
import {
  acquireClaim,
  ATTEMPTS,
  backOff,
  conditionally,
  readClaim,
  readProfileDocument,
  releaseAfterRename,
  releaseIfUnused,
  usernameOf,
  type ProfileDocument,
} from "./username-claims";

/**
 * Profiles: the one document under a user's id in `users` (their profile, or the record of their
 * account's erasure), read with one point read; created and renamed with the username claims
 * they take (`username-claims.ts`).
 */

export type StoredUser = UserItem & { _etag: string };

/** The erasure record that took a profile's place (same id). */
export type StoredErasure = ErasureItem & { _etag: string };

/** What the document under a user's id is: their profile, the record of their account's erasure, or nothing. */
export async function readAccountDocument(store: BlogStore, userId: string): Promise<ProfileDocument | StoredErasure | undefined> {
  const { resource } = await store.users.item(userId, userId).read<ProfileDocument | StoredErasure>();
  return resource?.type === "user" || resource?.type === "erasure" ? resource : undefined;
}

/** Q1: one point read. A malformed profile throws: it is never served, or copied, as it is. */
export async function readUser(store: BlogStore, userId: string): Promise<StoredUser | undefined> {
  const account = await readAccount(store, userId);
  return account === "erased" ? undefined : account;
}

/** The profile a write is made under (one point read), "erased" once the account's erasure was asked for, or undefined. */
export async function readAccount(store: BlogStore, userId: string): Promise<StoredUser | "erased" | undefined> {
  const account = await readAccountDocument(store, userId);
  if (!account) return undefined;
  if (account.type === "erasure") return "erased";
  const problem = itemProblem("users", account);
  if (problem) throw new MalformedItemError("users", userId, problem);
  return account as unknown as StoredUser;
}

/** The profile when it exists and is well-formed: what the pipeline may copy names from (a malformed one has been set aside). */
export async function readWellFormedUser(store: BlogStore, userId: string): Promise<StoredUser | undefined> {
  try {
    return await readUser(store, userId);
  } catch (error) {
    if (error instanceof MalformedItemError) return undefined;
    throw error;
  }
}

/**
 * Writing posts, comments and likes needs a profile: its username is copied into the item. An
 * erased account's token is refused with its own problem type, from the moment the erasure was asked for.
 */
export async function requireProfile(store: BlogStore, userId: string): Promise<StoredUser> {
  const account = await readAccount(store, userId);
  if (account === "erased") throw accountErased(userId);
  if (!account) throw profileRequired();
  return account;
}

/** Per store, the tail of each profile's queue of renames in this instance. */
const renameQueuesOf = perStore(() => new Map<string, Promise<unknown>>());

/**
 * Runs the renames of one profile in this instance one after another, in arrival order. Racing
 * each other they gain nothing (the last writer wins anyway) and each one's release of its old
 * name fences the profile, failing the others' writes until they give up; in a queue each
 * succeeds at once. Renames from other instances still race, and retry.
 */
function oneRenameAtATime<T>(store: BlogStore, userId: string, rename: () => Promise<T>): Promise<T> {
  const renameQueues = renameQueuesOf(store);
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

/** C1 (create): claim the username first, so two racing creates of one name cannot both win. */
export async function createUser(store: BlogStore, userId: string, username: string): Promise<StoredUser> {
  const existing = await readAccountDocument(store, userId);
  if (existing?.type === "erasure") throw accountErased(userId);
  if (existing) throw conflict("A profile already exists for this user.");
  const { created } = await acquireClaim(store, userId, username);
  const user: UserItem = { id: userId, type: "user", userId, username, creationDate: nowIso() };
  let stored: StoredUser;
  try {
    stored = (await store.users.items.create(withTraceOrigin(user))).resource as StoredUser;
  } catch (error) {
    // Only a claim this call created may be freed, and only if the existing profile uses another name.
    if (created) await releaseIfUnused(store, usernameClaimId(username)).catch(() => false);
    if (cosmosStatus(error) === 409) {
      if ((await readAccountDocument(store, userId))?.type === "erasure") throw accountErased(userId);
      throw conflict("A profile already exists for this user.");
    }
    throw error;
  }
  // The claim was taken over only if this call stalled beyond the grace period: undo the profile.
  if ((await readClaim(store, usernameClaimId(username)))?.ownerId !== userId) {
    await conditionally(() => store.users.item(userId, userId).delete({ accessCondition: { type: "IfMatch", condition: stored._etag } }));
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
  store: BlogStore,
  userId: string,
  username: string,
  preconditions: (etag: string) => boolean | undefined,
  log: (message: string) => void = () => {},
): Promise<StoredUser> {
  return oneRenameAtATime(store, userId, () => renameOnce(store, userId, username, preconditions, log));
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

/**
 * How long a rename keeps trying while it loses races, beyond its first ATTEMPTS. Another
 * instance's renames of the same profile, queued there one after another, each replace it twice
 * (the rename and its release's fence), so a rename here can lose to each of them in turn: it
 * must outlast their queue, not a count of tries. On a busy machine a queue of a dozen took more
 * than 5 s: a client whose rename waits longer is better served than one answered 409 for a
 * race it did not cause.
 */
const RENAME_PATIENCE_MS = 15_000;

/** One rename, retried while it loses races (with another instance's rename, or a release's fence). */
async function renameOnce(
  store: BlogStore,
  userId: string,
  username: string,
  preconditions: (etag: string) => boolean | undefined,
  log: (message: string) => void,
): Promise<StoredUser> {
  const giveUpAt = Date.now() + RENAME_PATIENCE_MS;
  for (let attempt = 0; attempt < ATTEMPTS || Date.now() < giveUpAt; attempt++) {
    await backOff(attempt);
    const current = await readAccountDocument(store, userId);
    if (current?.type === "erasure") throw accountErased(userId);
    if (!current) throw notFound(`User '${userId}' does not exist.`);
    const clientCondition = preconditions(current._etag);
    if (clientCondition === false) throw preconditionFailed();
    const malformed = itemProblem("users", current) !== undefined;
    const previous = usernameOf(current);
    if (previous === username && !malformed) return current as unknown as StoredUser;
    const newClaim = previous === undefined || usernameClaimId(previous) !== usernameClaimId(username);
    if (newClaim) await acquireClaim(store, userId, username);
    const replaced = await store.users
      .item(userId, userId)
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
        await releaseAfterRename(store, previous, log);
        // Releasing the old name fences the profile with one more replace: answer with the version
        // stored now, so the ETag the client gets is current (RFC 9110 9.3.4), unless someone renamed it since.
        const stored = await readProfileDocument(store, userId);
        if (stored && usernameOf(stored) === username) return stored as unknown as StoredUser;
      }
      return replaced;
    }
    if (clientCondition === true) throw preconditionFailed();
  }
  throw conflict("The profile is being changed concurrently; try again.");
}
