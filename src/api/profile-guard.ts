import { forbidden } from "../model/errors";
import { readUser, type StoredUser } from "../store/users";

/** Writing posts, comments and likes needs a profile: its username is copied into the item. */
export async function requireProfile(userId: string): Promise<StoredUser> {
  const user = await readUser(userId);
  if (!user) throw forbidden("Create your profile first (POST /api/users).");
  return user;
}
