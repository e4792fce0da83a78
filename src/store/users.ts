import { conflict, notFound, preconditionFailed } from "../model/errors";
import { nowIso, usernameClaimId, type UserItem, type UsernameClaim } from "../model/items";
import type { ShortPost } from "../model/short-form";
import { store } from "./client";
import { cosmosStatus, queryPage, type Page } from "./requests";

export type StoredUser = UserItem & { _etag: string };

/** Q1: one point read. */
export async function readUser(userId: string): Promise<StoredUser | undefined> {
  const { resource } = await store().users.item(userId, userId).read<StoredUser>();
  return resource?.type === "user" ? resource : undefined;
}

/** Claims `username` for `ownerId`; a claim the owner already holds (a retry) is fine. */
async function claimUsername(ownerId: string, username: string): Promise<void> {
  const id = usernameClaimId(username);
  const claim: UsernameClaim = { id, type: "username", userId: id, ownerId, username };
  try {
    await store().users.items.create(claim);
  } catch (error) {
    if (cosmosStatus(error) !== 409) throw error;
    const { resource } = await store().users.item(id, id).read<UsernameClaim>();
    if (resource?.ownerId !== ownerId) throw conflict(`The username '${username}' is already taken.`);
  }
}

/** Frees a claim, but only the owner's: another user may have claimed the name since. */
async function releaseUsername(ownerId: string, username: string): Promise<void> {
  const id = usernameClaimId(username);
  const { resource } = await store().users.item(id, id).read<UsernameClaim & { _etag: string }>();
  if (resource?.ownerId !== ownerId) return;
  try {
    await store().users.item(id, id).delete({ accessCondition: { type: "IfMatch", condition: resource._etag } });
  } catch (error) {
    if (cosmosStatus(error) !== 404 && cosmosStatus(error) !== 412) throw error;
  }
}

/** C1 (create): claim the username first, so two racing creates of one name cannot both win. */
export async function createUser(userId: string, username: string): Promise<StoredUser> {
  if (await readUser(userId)) throw conflict("A profile already exists for this user.");
  await claimUsername(userId, username);
  const user: UserItem = { id: userId, type: "user", userId, username, creationDate: nowIso() };
  try {
    const { resource } = await store().users.items.create(user);
    return resource as StoredUser;
  } catch (error) {
    await releaseUsername(userId, username);
    if (cosmosStatus(error) === 409) throw conflict("A profile already exists for this user.");
    throw error;
  }
}

/** C1 (edit): claim the new name, replace the profile, then free the old name. */
export async function renameUser(userId: string, username: string, ifMatch?: string): Promise<StoredUser> {
  const current = await readUser(userId);
  if (!current) throw notFound(`User '${userId}' does not exist.`);
  if (ifMatch !== undefined && ifMatch !== "*" && ifMatch !== current._etag) throw preconditionFailed();
  if (current.username === username) return current;
  const sameClaim = usernameClaimId(current.username) === usernameClaimId(username);
  if (!sameClaim) await claimUsername(userId, username);
  try {
    const { resource } = await store()
      .users.item(userId, userId)
      .replace<UserItem>({ ...current, username, usernameChangedDate: nowIso() }, { accessCondition: { type: "IfMatch", condition: current._etag } });
    if (!sameClaim) await releaseUsername(userId, current.username);
    return resource as StoredUser;
  } catch (error) {
    if (!sameClaim) await releaseUsername(userId, username);
    if (cosmosStatus(error) === 412) throw preconditionFailed();
    throw error;
  }
}

/** Q3: the user's posts in short form, newest first, from the user's own partition. */
export function listUserPosts(userId: string, limit: number, continuationToken?: string): Promise<Page<ShortPost>> {
  return queryPage<ShortPost>(
    store().users,
    { query: "SELECT * FROM u WHERE u.type = @type ORDER BY u.creationDate DESC", parameters: [{ name: "@type", value: "post" }] },
    userId,
    limit,
    continuationToken,
  );
}
