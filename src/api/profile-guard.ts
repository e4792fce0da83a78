import { accountErased, forbidden } from "../model/errors";
import { readAccount, type StoredUser } from "../store/users";

/**
 * Writing posts, comments and likes needs a profile: its username is copied into the item. An
 * erased account's token is refused with its own problem type, from the moment the erasure was asked for.
 */
export async function requireProfile(userId: string): Promise<StoredUser> {
  const account = await readAccount(userId);
  if (account === "erased") throw accountErased(userId);
  if (!account) throw forbidden("Create your profile first (POST /api/users).");
  return account;
}
