import type { ErasureItem, UserItem } from "../model/items";
import { LIMITS } from "../model/limits";
import { store } from "./client";

/** A profile document as stored: well-formed, or written malformed behind the API's back. */
export type ProfileDocument = Partial<Record<Exclude<keyof UserItem, "id">, unknown>> & { id: string; type: "user"; _etag: string };

/** The erasure record that took a profile's place (same id). */
export type StoredErasure = ErasureItem & { _etag: string };

/** What the document under a user's id is: their profile, the record of their account's erasure, or nothing. */
export async function readAccountDocument(userId: string): Promise<ProfileDocument | StoredErasure | undefined> {
  const { resource } = await store().users.item(userId, userId).read<ProfileDocument | StoredErasure>();
  return resource?.type === "user" || resource?.type === "erasure" ? resource : undefined;
}

export async function readProfileDocument(userId: string): Promise<ProfileDocument | undefined> {
  const account = await readAccountDocument(userId);
  return account?.type === "user" ? account : undefined;
}

/** The name a profile document uses, if it is a valid username at all. */
export const usernameOf = (profile: ProfileDocument | undefined): string | undefined =>
  typeof profile?.username === "string" && LIMITS.usernamePattern.test(profile.username) ? profile.username : undefined;
