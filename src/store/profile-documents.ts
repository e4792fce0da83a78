import type { UserItem } from "../model/items";
import { LIMITS } from "../model/limits";
import { store } from "./client";

/** A profile document as stored: well-formed, or written malformed behind the API's back. */
export type ProfileDocument = Partial<Record<Exclude<keyof UserItem, "id">, unknown>> & { id: string; type: "user"; _etag: string };

export async function readProfileDocument(userId: string): Promise<ProfileDocument | undefined> {
  const { resource } = await store().users.item(userId, userId).read<ProfileDocument>();
  return resource?.type === "user" ? resource : undefined;
}

/** The name a profile document uses, if it is a valid username at all. */
export const usernameOf = (profile: ProfileDocument | undefined): string | undefined =>
  typeof profile?.username === "string" && LIMITS.usernamePattern.test(profile.username) ? profile.username : undefined;
