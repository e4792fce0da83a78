import type { UserItem } from "../model/items";
import type { PropagationInput } from "./username-propagation";

/** Starts the username propagation; starting an instance id that already exists does nothing. */
export interface PropagationStarter {
  start(instanceId: string, input: PropagationInput): Promise<void>;
}

type UserChange = UserItem & { _lsn: number };

const isRenamedUser = (doc: unknown): doc is UserChange => {
  const item = doc as Partial<UserChange> | null;
  return item?.type === "user" && typeof item.usernameChangedDate === "string";
};

/**
 * The `users` change feed: a profile whose username changed starts one propagation. The post
 * copies and username claims that also live in `users` are ignored. The instance id is
 * derived from the change, so a redelivered batch starts nothing new.
 */
export async function handleUsersChanges(documents: unknown[], propagations: PropagationStarter): Promise<void> {
  for (const user of documents.filter(isRenamedUser)) {
    await propagations.start(`username-${user.userId}-${user._lsn}`, { userId: user.userId });
  }
}
